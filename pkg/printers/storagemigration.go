package printers

import (
	"time"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// storageVersionMigrationHandler has upstream's columns (its Name column
// has no "name" format, as upstream's).
func storageVersionMigrationHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Description: objectMetaDoc["name"]},
			col("Resource", "string", "Fully qualified resource to migrate"),
		},
		Cells: typed(func(m *storagemigrationv1.StorageVersionMigration, _ time.Time) ([]interface{}, error) {
			return []interface{}{m.Name, m.Spec.Resource.String()}, nil
		}),
	}
}
