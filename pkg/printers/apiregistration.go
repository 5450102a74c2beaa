package printers

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
)

func apiServiceHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Service", "string", "The reference to the service that hosts this API endpoint."),
			col("Available", "string", "Whether this service is available."),
			ageColumn(),
		},
		Cells: typed(func(a *apiregistrationv1.APIService, now time.Time) ([]interface{}, error) {
			service := "Local"
			if s := a.Spec.Service; s != nil {
				service = s.Namespace + "/" + s.Name
			}
			available := string(apiregistrationv1.ConditionUnknown)
			for _, c := range a.Status.Conditions {
				if c.Type != apiregistrationv1.Available {
					continue
				}
				available = string(c.Status)
				if c.Status != apiregistrationv1.ConditionTrue && c.Reason != "" {
					available += " (" + c.Reason + ")"
				}
				break
			}
			return []interface{}{a.Name, service, available, age(a.CreationTimestamp, now)}, nil
		}),
	}
}
