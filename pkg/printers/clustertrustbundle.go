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

// podCertificateRequestHandler has upstream's columns; State is Pending
// until a signer sets Issued, Denied or Failed.
func podCertificateRequestHandler() Handler {
	spec := certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("PodName", "string", spec["podName"]),
			col("ServiceAccountName", "string", spec["serviceAccountName"]),
			col("NodeName", "string", spec["nodeName"]),
			col("SignerName", "string", spec["signerName"]),
			col("State", "string", "Is the request Pending, Issued, Denied, or Failed?"),
		},
		Cells: typed(func(r *certificatesv1.PodCertificateRequest, _ time.Time) ([]interface{}, error) {
			state := "Pending"
			for _, c := range r.Status.Conditions {
				switch c.Type {
				case "Issued", "Denied", "Failed":
					state = c.Type
				}
			}
			return []interface{}{r.Name, r.Spec.PodName, r.Spec.ServiceAccountName, string(r.Spec.NodeName), r.Spec.SignerName, state}, nil
		}),
	}
}
