package printers

import (
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// serviceCIDRHandler prints ServiceCIDRs: NAME, CIDRS, AGE.
func serviceCIDRHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("CIDRs", "string", networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]),
			ageColumn(),
		},
		Cells: typed(func(sc *networkingv1.ServiceCIDR, now time.Time) ([]interface{}, error) {
			return []interface{}{sc.Name, strings.Join(sc.Spec.CIDRs, ","), age(sc.CreationTimestamp, now)}, nil
		}),
	}
}

// ipAddressHandler prints IPAddresses: NAME, PARENTREF
// ("services/default/kubernetes"; the group, when there is one, is part of
// the resource: "gateways.example.com/ns/name").
func ipAddressHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("ParentRef", "string", networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]),
		},
		Cells: typed(func(ip *networkingv1.IPAddress, _ time.Time) ([]interface{}, error) {
			ref := "<none>"
			if p := ip.Spec.ParentRef; p != nil {
				ref = strings.ToLower(schema.GroupResource{Group: p.Group, Resource: p.Resource}.String())
				if p.Namespace != "" {
					ref += "/" + p.Namespace
				}
				ref += "/" + p.Name
			}
			return []interface{}{ip.Name, ref}, nil
		}),
	}
}
