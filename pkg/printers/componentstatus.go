package printers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// componentStatusHandler prints ComponentStatuses: NAME, STATUS (Healthy,
// Unhealthy or Unknown from the Healthy condition), MESSAGE, ERROR.
func componentStatusHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Status", "string", "Status of the component conditions"),
			col("Message", "string", "Message of the component conditions"),
			col("Error", "string", "Error of the component conditions"),
		},
		Cells: typed(func(cs *corev1.ComponentStatus, _ time.Time) ([]interface{}, error) {
			status, message, errMsg := "Unknown", "", ""
			for _, c := range cs.Conditions {
				if c.Type != corev1.ComponentHealthy {
					continue
				}
				status = "Unhealthy"
				if c.Status == corev1.ConditionTrue {
					status = "Healthy"
				}
				message, errMsg = c.Message, c.Error
				break
			}
			return []interface{}{cs.Name, status, message, errMsg}, nil
		}),
	}
}
