package printers

import (
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func flowSchemaHandler() Handler {
	spec := flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("PriorityLevel", "string", flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]),
			col("MatchingPrecedence", "string", spec["matchingPrecedence"]),
			col("DistinguisherMethod", "string", spec["distinguisherMethod"]),
			ageColumn(),
			col("MissingPL", "string", "indicates if the referenced priority level does not exist, as known by the system"),
		},
		Cells: typed(func(fs *flowcontrolv1.FlowSchema, now time.Time) ([]interface{}, error) {
			dm := "<none>"
			if fs.Spec.DistinguisherMethod != nil {
				dm = string(fs.Spec.DistinguisherMethod.Type)
			}
			missing := "?"
			for _, c := range fs.Status.Conditions {
				if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
					missing = string(c.Status)
					break
				}
			}
			return []interface{}{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), dm,
				age(fs.CreationTimestamp, now), missing}, nil
		}),
	}
}

func priorityLevelHandler() Handler {
	limited := flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()
	queuing := flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Type", "string", flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]),
			col("NominalConcurrencyShares", "string", limited["nominalConcurrencyShares"]),
			col("Queues", "string", queuing["queues"]),
			col("HandSize", "string", queuing["handSize"]),
			col("QueueLengthLimit", "string", queuing["queueLengthLimit"]),
			ageColumn(),
		},
		Cells: typed(func(pl *flowcontrolv1.PriorityLevelConfiguration, now time.Time) ([]interface{}, error) {
			var shares, queues, hand, length interface{} = "<none>", "<none>", "<none>", "<none>"
			if l := pl.Spec.Limited; l != nil {
				if l.NominalConcurrencyShares != nil {
					shares = int64(*l.NominalConcurrencyShares)
				}
				if q := l.LimitResponse.Queuing; q != nil {
					queues, hand, length = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
				}
			}
			return []interface{}{pl.Name, string(pl.Spec.Type), shares, queues, hand, length, age(pl.CreationTimestamp, now)}, nil
		}),
	}
}
