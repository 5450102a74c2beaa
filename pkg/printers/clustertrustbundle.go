package printers

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// clusterTrustBundleHandler has upstream's columns: Name, SignerName
// ("<none>" for a bundle without a signer).
func clusterTrustBundleHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("SignerName", "string", certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]),
		},
		Cells: typed(func(b *certificatesv1.ClusterTrustBundle, _ time.Time) ([]interface{}, error) {
			signer := b.Spec.SignerName
			if signer == "" {
				signer = "<none>"
			}
			return []interface{}{b.Name, signer}, nil
		}),
	}
}
