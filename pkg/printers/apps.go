package printers

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Upstream takes several apps descriptions from the extensions/v1beta1 and
// apps/v1beta1 types; they are reused here so the text matches exactly.

func deploymentHandler() Handler {
	statusDoc := extensionsv1beta1.DeploymentStatus{}.SwaggerDoc()
	return Handler{
		Columns: append([]metav1.TableColumnDefinition{
			nameColumn(),
			col("Ready", "string", "Number of the pod with ready state"),
			col("Up-to-date", "string", statusDoc["updatedReplicas"]),
			col("Available", "string", statusDoc["availableReplicas"]),
			ageColumn(),
		}, append(containersColumns(), wideCol("Selector", "string", extensionsv1beta1.DeploymentSpec{}.SwaggerDoc()["selector"]))...),
		Cells: typed(func(d *appsv1.Deployment, now time.Time) ([]interface{}, error) {
			selector := "<invalid>"
			if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
				selector = s.String()
			}
			names, images := layoutContainers(d.Spec.Template.Spec.Containers)
			return []interface{}{
				d.Name,
				fmt.Sprintf("%d/%d", int64(d.Status.ReadyReplicas), int64(deref(d.Spec.Replicas))),
				int64(d.Status.UpdatedReplicas),
				int64(d.Status.AvailableReplicas),
				age(d.CreationTimestamp, now),
				names, images, selector,
			}, nil
		}),
	}
}

func replicaSetHandler() Handler {
	specDoc := extensionsv1beta1.ReplicaSetSpec{}.SwaggerDoc()
	statusDoc := extensionsv1beta1.ReplicaSetStatus{}.SwaggerDoc()
	return Handler{
		Columns: append([]metav1.TableColumnDefinition{
			nameColumn(),
			col("Desired", "integer", specDoc["replicas"]),
			col("Current", "integer", statusDoc["replicas"]),
			col("Ready", "integer", statusDoc["readyReplicas"]),
			ageColumn(),
		}, append(containersColumns(), wideCol("Selector", "string", specDoc["selector"]))...),
		Cells: typed(func(rs *appsv1.ReplicaSet, now time.Time) ([]interface{}, error) {
			names, images := layoutContainers(rs.Spec.Template.Spec.Containers)
			return []interface{}{
				rs.Name, int64(deref(rs.Spec.Replicas)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
				age(rs.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(rs.Spec.Selector),
			}, nil
		}),
	}
}

func statefulSetHandler() Handler {
	return Handler{
		Columns: append([]metav1.TableColumnDefinition{
			nameColumn(),
			col("Ready", "string", "Number of the pod with ready state"),
			ageColumn(),
		}, containersColumns()...),
		Cells: typed(func(ss *appsv1.StatefulSet, now time.Time) ([]interface{}, error) {
			names, images := layoutContainers(ss.Spec.Template.Spec.Containers)
			return []interface{}{
				ss.Name,
				fmt.Sprintf("%d/%d", int64(ss.Status.ReadyReplicas), int64(deref(ss.Spec.Replicas))),
				age(ss.CreationTimestamp, now),
				names, images,
			}, nil
		}),
	}
}

func daemonSetHandler() Handler {
	statusDoc := extensionsv1beta1.DaemonSetStatus{}.SwaggerDoc()
	return Handler{
		Columns: append([]metav1.TableColumnDefinition{
			nameColumn(),
			col("Desired", "integer", statusDoc["desiredNumberScheduled"]),
			col("Current", "integer", statusDoc["currentNumberScheduled"]),
			col("Ready", "integer", statusDoc["numberReady"]),
			col("Up-to-date", "integer", statusDoc["updatedNumberScheduled"]),
			col("Available", "integer", statusDoc["numberAvailable"]),
			col("Node Selector", "string", corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]),
			ageColumn(),
		}, append(containersColumns(), wideCol("Selector", "string", extensionsv1beta1.DaemonSetSpec{}.SwaggerDoc()["selector"]))...),
		Cells: typed(func(ds *appsv1.DaemonSet, now time.Time) ([]interface{}, error) {
			names, images := layoutContainers(ds.Spec.Template.Spec.Containers)
			st := ds.Status
			return []interface{}{
				ds.Name,
				int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
				int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable),
				labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
				age(ds.CreationTimestamp, now),
				names, images, metav1.FormatLabelSelector(ds.Spec.Selector),
			}, nil
		}),
	}
}

func controllerRevisionHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Controller", "string", "Controller of the object"),
			col("Revision", "string", appsv1beta1.ControllerRevision{}.SwaggerDoc()["revision"]),
			ageColumn(),
		},
		Cells: typed(func(cr *appsv1.ControllerRevision, now time.Time) ([]interface{}, error) {
			controller := "<none>"
			if ref := metav1.GetControllerOf(cr); ref != nil {
				gv, err := schema.ParseGroupVersion(ref.APIVersion)
				if err != nil {
					return nil, err
				}
				controller = qualifiedName(gv.WithKind(ref.Kind).GroupKind(), ref.Name)
			}
			return []interface{}{cr.Name, controller, cr.Revision, age(cr.CreationTimestamp, now)}, nil
		}),
	}
}

// qualifiedName renders "kind.group/name" in lower case ("kind/name" for the
// core group), or just name when the kind is empty.
func qualifiedName(gk schema.GroupKind, name string) string {
	if gk.Empty() {
		return name
	}
	return strings.ToLower(gk.String()) + "/" + name
}
