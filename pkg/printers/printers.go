package printers

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Handler prints one resource kind as Table rows.
type Handler struct {
	// Columns are the table's column definitions, in order. Upstream always
	// returns every column (the server renders "wide" output and kubectl hides
	// priority > 0 columns itself), so Cells fills every one of them.
	Columns []metav1.TableColumnDefinition

	// Cells returns one row's cells for obj (a single item such as *corev1.Pod,
	// never a list), one cell per column, in column order. now is the server's
	// clock (for AGE/duration cells).
	Cells func(obj runtime.Object, now time.Time) ([]interface{}, error)

	// Conditions optionally returns the row conditions upstream attaches to a
	// row (only pods have any: "Completed" for Succeeded and Failed pods).
	// It is nil for every other resource.
	Conditions func(obj runtime.Object) []metav1.TableRowCondition
}

// For returns the handler for a group/resource (e.g. {Group:"apps",
// Resource:"deployments"}). Built-in resources that upstream serves without a
// dedicated printer (roles, clusterroles, limitranges) return Default() with
// ok == true; unknown resources return ok == false.
func For(gr schema.GroupResource) (Handler, bool) {
	h, ok := registry[gr]
	if !ok {
		return Handler{}, false
	}
	return h.clone(), true
}

// Default is the handler upstream uses for resources without a printer:
// columns Name and "Created At" (type date). The Created At cell is the
// creation timestamp in UTC, RFC 3339.
func Default() Handler {
	return defaultHandler.clone()
}

// Resources lists every group/resource For knows, in no particular order.
func Resources() []schema.GroupResource {
	out := make([]schema.GroupResource, 0, len(registry))
	for gr := range registry {
		out = append(out, gr)
	}
	return out
}

// clone copies the column slice so callers can never change the shared,
// package-level definitions.
func (h Handler) clone() Handler {
	cols := make([]metav1.TableColumnDefinition, len(h.Columns))
	copy(cols, h.Columns)
	h.Columns = cols
	return h
}

// registry is built once at package initialisation and only read afterwards.
var registry = buildRegistry()

var defaultHandler = Handler{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Created At", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
	},
	Cells: func(obj runtime.Object, _ time.Time) ([]interface{}, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		return []interface{}{m.GetName(), m.GetCreationTimestamp().Time.UTC().Format(time.RFC3339)}, nil
	},
}

func buildRegistry() map[schema.GroupResource]Handler {
	r := map[schema.GroupResource]Handler{}
	add := func(group, resource string, h Handler) {
		r[schema.GroupResource{Group: group, Resource: resource}] = h
	}

	// core/v1
	add("", "pods", podHandler())
	add("", "podtemplates", podTemplateHandler())
	add("", "replicationcontrollers", replicationControllerHandler())
	add("", "services", serviceHandler())
	add("", "endpoints", endpointsHandler())
	add("", "nodes", nodeHandler())
	add("", "events", eventHandler())
	add("", "namespaces", namespaceHandler())
	add("", "secrets", secretHandler())
	add("", "serviceaccounts", serviceAccountHandler())
	add("", "persistentvolumes", persistentVolumeHandler())
	add("", "persistentvolumeclaims", persistentVolumeClaimHandler())
	add("", "configmaps", configMapHandler())
	add("", "resourcequotas", resourceQuotaHandler())
	add("", "limitranges", defaultHandler)
	add("", "componentstatuses", componentStatusHandler())

	// apps/v1
	add("apps", "deployments", deploymentHandler())
	add("apps", "replicasets", replicaSetHandler())
	add("apps", "statefulsets", statefulSetHandler())
	add("apps", "daemonsets", daemonSetHandler())
	add("apps", "controllerrevisions", controllerRevisionHandler())

	// batch/v1
	add("batch", "jobs", jobHandler())
	add("batch", "cronjobs", cronJobHandler())

	// everything else
	add("events.k8s.io", "events", eventHandler())
	add("coordination.k8s.io", "leases", leaseHandler())
	add("discovery.k8s.io", "endpointslices", endpointSliceHandler())
	add("autoscaling", "horizontalpodautoscalers", hpaHandler())
	add("policy", "poddisruptionbudgets", podDisruptionBudgetHandler())
	add("rbac.authorization.k8s.io", "roles", defaultHandler)
	add("rbac.authorization.k8s.io", "clusterroles", defaultHandler)
	add("rbac.authorization.k8s.io", "rolebindings", roleBindingHandler())
	add("rbac.authorization.k8s.io", "clusterrolebindings", clusterRoleBindingHandler())
	add("scheduling.k8s.io", "priorityclasses", priorityClassHandler())
	add("storage.k8s.io", "storageclasses", storageClassHandler())
	add("storage.k8s.io", "csidrivers", csiDriverHandler())
	add("storage.k8s.io", "csinodes", csiNodeHandler())
	add("storage.k8s.io", "volumeattachments", volumeAttachmentHandler())
	// upstream's store uses the default table for CSIStorageCapacity,
	// though a printer for it exists
	add("storage.k8s.io", "csistoragecapacities", defaultHandler)
	add("storage.k8s.io", "volumeattributesclasses", volumeAttributesClassHandler())
	add("networking.k8s.io", "ingresses", ingressHandler())
	add("networking.k8s.io", "ingressclasses", ingressClassHandler())
	add("networking.k8s.io", "networkpolicies", networkPolicyHandler())
	add("networking.k8s.io", "ipaddresses", ipAddressHandler())
	add("networking.k8s.io", "servicecidrs", serviceCIDRHandler())
	add("node.k8s.io", "runtimeclasses", runtimeClassHandler())
	add("resource.k8s.io", "deviceclasses", deviceClassHandler())
	add("resource.k8s.io", "resourceclaims", resourceClaimHandler())
	add("resource.k8s.io", "resourceclaimtemplates", resourceClaimTemplateHandler())
	add("resource.k8s.io", "resourceslices", resourceSliceHandler())
	add("resource.k8s.io", "devicetaintrules", deviceTaintRuleHandler())
	add("storagemigration.k8s.io", "storageversionmigrations", storageVersionMigrationHandler())
	add("admissionregistration.k8s.io", "mutatingwebhookconfigurations", mutatingWebhookHandler())
	add("admissionregistration.k8s.io", "validatingwebhookconfigurations", validatingWebhookHandler())
	add("admissionregistration.k8s.io", "validatingadmissionpolicies", validatingAdmissionPolicyHandler())
	add("admissionregistration.k8s.io", "validatingadmissionpolicybindings", validatingAdmissionPolicyBindingHandler())
	add("admissionregistration.k8s.io", "mutatingadmissionpolicies", mutatingAdmissionPolicyHandler())
	add("admissionregistration.k8s.io", "mutatingadmissionpolicybindings", mutatingAdmissionPolicyBindingHandler())
	add("certificates.k8s.io", "certificatesigningrequests", csrHandler())
	add("certificates.k8s.io", "clustertrustbundles", clusterTrustBundleHandler())
	add("certificates.k8s.io", "podcertificaterequests", podCertificateRequestHandler())
	add("apiextensions.k8s.io", "customresourcedefinitions", crdHandler())
	add("flowcontrol.apiserver.k8s.io", "flowschemas", flowSchemaHandler())
	add("apiregistration.k8s.io", "apiservices", apiServiceHandler())
	add("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations", priorityLevelHandler())
	return r
}

// typed adapts a printer for one concrete type to the runtime.Object-based
// Cells signature, failing cleanly for any other type.
func typed[T runtime.Object](f func(T, time.Time) ([]interface{}, error)) func(runtime.Object, time.Time) ([]interface{}, error) {
	return func(obj runtime.Object, now time.Time) ([]interface{}, error) {
		t, ok := obj.(T)
		if !ok {
			var want T
			return nil, fmt.Errorf("printers: cannot print %T, want %T", obj, want)
		}
		return f(t, now)
	}
}

// Shared descriptions. SwaggerDoc returns a fresh map on every call; these are
// computed once and only read.
var (
	objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()
)

func nameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}
}

func ageColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDoc["creationTimestamp"]}
}

func col(name, typ, desc string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: desc}
}

func wideCol(name, typ, desc string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Priority: 1, Description: desc}
}

func containersColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		wideCol("Containers", "string", "Names of each container in the template."),
		wideCol("Images", "string", "Images referenced by each container in the template."),
	}
}

// age renders the time elapsed from t to now the way upstream's AGE columns
// do, "<unknown>" for a zero timestamp.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func ageMicro(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// joinFirst joins up to limit items with commas and, when there were more,
// appends " + N more...". An empty result is rendered as "<unset>".
func joinFirst(items []string, total, limit int) string {
	if total > limit {
		return fmt.Sprintf("%s + %d more...", strings.Join(items, ","), total-limit)
	}
	if len(items) == 0 {
		return "<unset>"
	}
	return strings.Join(items, ",")
}

func boolString(b *bool) string {
	switch {
	case b == nil:
		return "<unset>"
	case *b:
		return "True"
	default:
		return "False"
	}
}
