package printers

import (
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resource.k8s.io/v1 printers, with upstream's columns.

func deviceClassHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{nameColumn(), ageColumn()},
		Cells: typed(func(c *resourcev1.DeviceClass, now time.Time) ([]interface{}, error) {
			return []interface{}{c.Name, age(c.CreationTimestamp, now)}, nil
		}),
	}
}

func resourceClaimHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("State", "string", "A summary of the current state (allocated, pending, reserved, etc.)."),
			ageColumn(),
		},
		Cells: typed(func(c *resourcev1.ResourceClaim, now time.Time) ([]interface{}, error) {
			return []interface{}{c.Name, resourceClaimState(c), age(c.CreationTimestamp, now)}, nil
		}),
	}
}

// resourceClaimState summarises a claim: deleted (being deleted), then
// pending (not allocated) or allocated, plus reserved when pods use it.
func resourceClaimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case c.Status.Allocation != nil:
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	case c.DeletionTimestamp == nil:
		states = append(states, "pending")
	}
	return strings.Join(states, ",")
}

func resourceClaimTemplateHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{nameColumn(), ageColumn()},
		Cells: typed(func(t *resourcev1.ResourceClaimTemplate, now time.Time) ([]interface{}, error) {
			return []interface{}{t.Name, age(t.CreationTimestamp, now)}, nil
		}),
	}
}

func resourceSliceHandler() Handler {
	spec := resourcev1.ResourceSliceSpec{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Node", "string", spec["nodeName"]),
			col("Driver", "string", spec["driver"]),
			col("Pool", "string", resourcev1.ResourcePool{}.SwaggerDoc()["name"]),
			ageColumn(),
		},
		Cells: typed(func(s *resourcev1.ResourceSlice, now time.Time) ([]interface{}, error) {
			node := ""
			if s.Spec.NodeName != nil {
				node = *s.Spec.NodeName
			}
			return []interface{}{s.Name, node, s.Spec.Driver, s.Spec.Pool.Name, age(s.CreationTimestamp, now)}, nil
		}),
	}
}

func deviceTaintRuleHandler() Handler {
	taint := resourcev1.DeviceTaint{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Key", "string", taint["key"]),
			col("Value", "string", taint["value"]),
			col("Effect", "string", taint["effect"]),
			col("TimeAdded", "string", taint["timeAdded"]),
			ageColumn(),
		},
		Cells: typed(func(r *resourcev1.DeviceTaintRule, now time.Time) ([]interface{}, error) {
			added := ""
			if t := r.Spec.Taint.TimeAdded; t != nil {
				added = age(*t, now)
			}
			return []interface{}{r.Name, r.Spec.Taint.Key, r.Spec.Taint.Value, string(r.Spec.Taint.Effect), added, age(r.CreationTimestamp, now)}, nil
		}),
	}
}
