package printers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/sets"
)

func leaseHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Holder", "string", coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]),
			ageColumn(),
		},
		Cells: typed(func(l *coordinationv1.Lease, now time.Time) ([]interface{}, error) {
			return []interface{}{l.Name, deref(l.Spec.HolderIdentity), age(l.CreationTimestamp, now)}, nil
		}),
	}
}

func endpointSliceHandler() Handler {
	doc := discoveryv1beta1.EndpointSlice{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("AddressType", "string", doc["addressType"]),
			col("Ports", "string", doc["ports"]),
			col("Endpoints", "string", doc["endpoints"]),
			ageColumn(),
		},
		Cells: typed(func(es *discoveryv1.EndpointSlice, now time.Time) ([]interface{}, error) {
			const limit = 3
			var ports []string
			for _, p := range es.Ports {
				if len(ports) == limit {
					break
				}
				switch {
				case p.Port != nil:
					ports = append(ports, strconv.Itoa(int(*p.Port)))
				case p.Name != nil:
					ports = append(ports, *p.Name)
				default:
					ports = append(ports, "*")
				}
			}
			var addrs []string
			total := 0
			for _, ep := range es.Endpoints {
				for _, a := range ep.Addresses {
					if len(addrs) < limit {
						addrs = append(addrs, a)
					}
					total++
				}
			}
			return []interface{}{
				es.Name, string(es.AddressType), joinFirst(ports, len(es.Ports), limit), joinFirst(addrs, total, limit),
				age(es.CreationTimestamp, now),
			}, nil
		}),
	}
}

func podDisruptionBudgetHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Min Available", "string", "The minimum number of pods that must be available."),
			col("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
			col("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
			ageColumn(),
		},
		Cells: typed(func(pdb *policyv1.PodDisruptionBudget, now time.Time) ([]interface{}, error) {
			minAvailable, maxUnavailable := "N/A", "N/A"
			if pdb.Spec.MinAvailable != nil {
				minAvailable = pdb.Spec.MinAvailable.String()
			}
			if pdb.Spec.MaxUnavailable != nil {
				maxUnavailable = pdb.Spec.MaxUnavailable.String()
			}
			return []interface{}{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), age(pdb.CreationTimestamp, now)}, nil
		}),
	}
}

func bindingColumns(roleDoc, what string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		col("Role", "string", roleDoc),
		ageColumn(),
		wideCol("Users", "string", "Users in the "+what),
		wideCol("Groups", "string", "Groups in the "+what),
		wideCol("ServiceAccounts", "string", "ServiceAccounts in the "+what),
	}
}

// bindingCells renders a (cluster) role binding: Kind/name of the role, then
// users, groups and namespace/name service accounts, each joined by ", ".
func bindingCells(name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, created metav1.Time, now time.Time) []interface{} {
	users, groups, sas := []string{}, []string{}, []string{}
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	return []interface{}{
		name, ref.Kind + "/" + ref.Name, age(created, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "),
	}
}

func roleBindingHandler() Handler {
	return Handler{
		Columns: bindingColumns(rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"], "roleBinding"),
		Cells: typed(func(b *rbacv1.RoleBinding, now time.Time) ([]interface{}, error) {
			return bindingCells(b.Name, b.RoleRef, b.Subjects, b.CreationTimestamp, now), nil
		}),
	}
}

func clusterRoleBindingHandler() Handler {
	return Handler{
		Columns: bindingColumns(rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], "clusterRoleBinding"),
		Cells: typed(func(b *rbacv1.ClusterRoleBinding, now time.Time) ([]interface{}, error) {
			return bindingCells(b.Name, b.RoleRef, b.Subjects, b.CreationTimestamp, now), nil
		}),
	}
}

func priorityClassHandler() Handler {
	doc := schedulingv1.PriorityClass{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Value", "integer", doc["value"]),
			col("Global-Default", "boolean", doc["globalDefault"]),
			ageColumn(),
			col("PreemptionPolicy", "string", doc["preemptionPolicy"]),
		},
		Cells: typed(func(pc *schedulingv1.PriorityClass, now time.Time) ([]interface{}, error) {
			policy := ""
			if pc.PreemptionPolicy != nil {
				policy = string(*pc.PreemptionPolicy)
			}
			return []interface{}{pc.Name, int64(pc.Value), pc.GlobalDefault, age(pc.CreationTimestamp, now), policy}, nil
		}),
	}
}

// isDefaultClass reports whether either the GA or the beta is-default-class
// annotation is "true".
func isDefaultClass(annotations map[string]string) bool {
	return annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
		annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true"
}

func storageClassHandler() Handler {
	doc := storagev1.StorageClass{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Provisioner", "string", doc["provisioner"]),
			col("ReclaimPolicy", "string", doc["reclaimPolicy"]),
			col("VolumeBindingMode", "string", doc["volumeBindingMode"]),
			col("AllowVolumeExpansion", "string", doc["allowVolumeExpansion"]),
			ageColumn(),
		},
		Cells: typed(func(sc *storagev1.StorageClass, now time.Time) ([]interface{}, error) {
			name := sc.Name
			if isDefaultClass(sc.Annotations) {
				name += " (default)"
			}
			reclaim := string(corev1.PersistentVolumeReclaimDelete)
			if sc.ReclaimPolicy != nil {
				reclaim = string(*sc.ReclaimPolicy)
			}
			binding := string(storagev1.VolumeBindingImmediate)
			if sc.VolumeBindingMode != nil {
				binding = string(*sc.VolumeBindingMode)
			}
			return []interface{}{name, sc.Provisioner, reclaim, binding, deref(sc.AllowVolumeExpansion), age(sc.CreationTimestamp, now)}, nil
		}),
	}
}

func csiDriverHandler() Handler {
	doc := storagev1.CSIDriverSpec{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("AttachRequired", "boolean", doc["attachRequired"]),
			col("PodInfoOnMount", "boolean", doc["podInfoOnMount"]),
			col("StorageCapacity", "boolean", doc["storageCapacity"]),
			col("TokenRequests", "string", doc["tokenRequests"]),
			col("RequiresRepublish", "boolean", doc["requiresRepublish"]),
			col("Modes", "string", doc["volumeLifecycleModes"]),
			ageColumn(),
		},
		Cells: typed(func(d *storagev1.CSIDriver, now time.Time) ([]interface{}, error) {
			attach := true
			if d.Spec.AttachRequired != nil {
				attach = *d.Spec.AttachRequired
			}
			tokens := "<unset>"
			if d.Spec.TokenRequests != nil {
				audiences := make([]string, 0, len(d.Spec.TokenRequests))
				for _, t := range d.Spec.TokenRequests {
					audiences = append(audiences, t.Audience)
				}
				tokens = strings.Join(audiences, ",")
			}
			modes := make([]string, 0, len(d.Spec.VolumeLifecycleModes))
			for _, m := range d.Spec.VolumeLifecycleModes {
				modes = append(modes, string(m))
			}
			return []interface{}{
				d.Name, attach, deref(d.Spec.PodInfoOnMount), deref(d.Spec.StorageCapacity), tokens,
				deref(d.Spec.RequiresRepublish), orNone(strings.Join(modes, ",")), age(d.CreationTimestamp, now),
			}, nil
		}),
	}
}

func csiNodeHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"),
			ageColumn(),
		},
		Cells: typed(func(n *storagev1.CSINode, now time.Time) ([]interface{}, error) {
			return []interface{}{n.Name, int64(len(n.Spec.Drivers)), age(n.CreationTimestamp, now)}, nil
		}),
	}
}

func volumeAttachmentHandler() Handler {
	specDoc := storagev1.VolumeAttachmentSpec{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			// upstream marks the Attacher column with format "name" as well
			{Name: "Attacher", Type: "string", Format: "name", Description: specDoc["attacher"]},
			col("PV", "string", storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]),
			col("Node", "string", specDoc["nodeName"]),
			col("Attached", "boolean", storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]),
			ageColumn(),
		},
		Cells: typed(func(va *storagev1.VolumeAttachment, now time.Time) ([]interface{}, error) {
			return []interface{}{
				va.Name, va.Spec.Attacher, deref(va.Spec.Source.PersistentVolumeName), va.Spec.NodeName,
				va.Status.Attached, age(va.CreationTimestamp, now),
			}, nil
		}),
	}
}

func volumeAttributesClassHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("DriverName", "string", storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]),
			ageColumn(),
		},
		Cells: typed(func(c *storagev1.VolumeAttributesClass, now time.Time) ([]interface{}, error) {
			return []interface{}{c.Name, c.DriverName, age(c.CreationTimestamp, now)}, nil
		}),
	}
}

func ingressHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Class", "string", "The name of the IngressClass resource that should be used for additional configuration"),
			col("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
			col("Address", "string", "Address is a list containing ingress points for the load-balancer"),
			col("Ports", "string", "Ports of TLS configurations that open"),
			ageColumn(),
		},
		Cells: typed(func(ing *networkingv1.Ingress, now time.Time) ([]interface{}, error) {
			class := "<none>"
			if ing.Spec.IngressClassName != nil {
				class = *ing.Spec.IngressClassName
			}
			return []interface{}{ing.Name, class, ingressHosts(ing.Spec.Rules), ingressAddresses(ing), ingressPorts(ing), age(ing.CreationTimestamp, now)}, nil
		}),
	}
}

// ingressHosts lists the hosts of the first rules until three are listed;
// once three are listed and more rules follow it appends " + N more..."
// (N counting every rule past the third). No host at all is "*".
func ingressHosts(rules []networkingv1.IngressRule) string {
	const limit = 3
	var hosts []string
	more := false
	for _, r := range rules {
		if len(hosts) == limit {
			more = true
			break
		}
		if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	if len(hosts) == 0 {
		return "*"
	}
	if more {
		return fmt.Sprintf("%s + %d more...", strings.Join(hosts, ","), len(rules)-limit)
	}
	return strings.Join(hosts, ",")
}

func ingressPorts(ing *networkingv1.Ingress) string {
	if len(ing.Spec.TLS) != 0 {
		return "80, 443"
	}
	return "80"
}

func ingressAddresses(ing *networkingv1.Ingress) string {
	addrs := sets.New[string]()
	for _, in := range ing.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			addrs.Insert(in.IP)
		} else if in.Hostname != "" {
			addrs.Insert(in.Hostname)
		}
	}
	return strings.Join(sets.List(addrs), ",")
}

func ingressClassHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Controller", "string", "Controller that is responsible for handling this class"),
			col("Parameters", "string", "A reference to a resource with additional parameters"),
			ageColumn(),
		},
		Cells: typed(func(ic *networkingv1.IngressClass, now time.Time) ([]interface{}, error) {
			params := "<none>"
			if p := ic.Spec.Parameters; p != nil {
				params = p.Kind
				if p.APIGroup != nil {
					params += "." + *p.APIGroup
				}
				params += "/" + p.Name
			}
			return []interface{}{ic.Name, ic.Spec.Controller, params, age(ic.CreationTimestamp, now)}, nil
		}),
	}
}

func networkPolicyHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Pod-Selector", "string", extensionsv1beta1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]),
			ageColumn(),
		},
		Cells: typed(func(np *networkingv1.NetworkPolicy, now time.Time) ([]interface{}, error) {
			return []interface{}{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), age(np.CreationTimestamp, now)}, nil
		}),
	}
}

func runtimeClassHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			// upstream looks "handler" up in ObjectMeta's docs, which have no
			// such key: the description is empty.
			col("Handler", "string", objectMetaDoc["handler"]),
			ageColumn(),
		},
		Cells: typed(func(rc *nodev1.RuntimeClass, now time.Time) ([]interface{}, error) {
			return []interface{}{rc.Name, rc.Handler, age(rc.CreationTimestamp, now)}, nil
		}),
	}
}

func webhookColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		col("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this configuration"),
		ageColumn(),
	}
}

func mutatingWebhookHandler() Handler {
	return Handler{
		Columns: webhookColumns(),
		Cells: typed(func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) ([]interface{}, error) {
			return []interface{}{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp, now)}, nil
		}),
	}
}

func validatingWebhookHandler() Handler {
	return Handler{
		Columns: webhookColumns(),
		Cells: typed(func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) ([]interface{}, error) {
			return []interface{}{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp, now)}, nil
		}),
	}
}

func csrHandler() Handler {
	specDoc := certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			ageColumn(),
			col("SignerName", "string", specDoc["signerName"]),
			col("Requestor", "string", specDoc["request"]),
			col("RequestedDuration", "string", specDoc["expirationSeconds"]),
			col("Condition", "string", certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]),
		},
		Cells: typed(func(csr *certificatesv1.CertificateSigningRequest, now time.Time) ([]interface{}, error) {
			signer := orNone(csr.Spec.SignerName)
			requested := "<none>"
			if csr.Spec.ExpirationSeconds != nil {
				requested = duration.HumanDuration(time.Duration(*csr.Spec.ExpirationSeconds) * time.Second)
			}
			var approved, denied, failed bool
			for _, c := range csr.Status.Conditions {
				switch c.Type {
				case certificatesv1.CertificateApproved:
					approved = true
				case certificatesv1.CertificateDenied:
					denied = true
				case certificatesv1.CertificateFailed:
					failed = true
				}
			}
			status := "Pending"
			if denied {
				status = "Denied"
			} else if approved {
				status = "Approved"
			}
			if failed {
				status += ",Failed"
			}
			if len(csr.Status.Certificate) > 0 {
				status += ",Issued"
			}
			return []interface{}{csr.Name, age(csr.CreationTimestamp, now), signer, csr.Spec.Username, requested, status}, nil
		}),
	}
}

// crdView is the part of a CustomResourceDefinition the CRD table shows.
// CRDs are read through their JSON form so this package does not depend on
// the apiextensions types: any typed or unstructured CRD object works.
type crdView struct {
	Spec struct {
		Group string `json:"group"`
		Scope string `json:"scope"`
		Names struct {
			Kind       string   `json:"kind"`
			ShortNames []string `json:"shortNames"`
		} `json:"names"`
		Versions []struct {
			Name    string `json:"name"`
			Served  bool   `json:"served"`
			Storage bool   `json:"storage"`
		} `json:"versions"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

// isCRD accepts any typed CustomResourceDefinition (whatever its package)
// and unstructured objects of that kind.
func isCRD(obj runtime.Object) bool {
	const kind = "CustomResourceDefinition"
	if obj.GetObjectKind().GroupVersionKind().Kind == kind {
		return true
	}
	t := reflect.TypeOf(obj)
	return t.Kind() == reflect.Pointer && t.Elem().Name() == kind
}

// crdHandler matches the table convertor the apiextensions-apiserver (v0.37)
// registers for customresourcedefinitions.
func crdHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Scope", "string", "Cluster/Namespaced"),
			col("Versions", "string", "Served versions"),
			{Name: "Created At", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
			wideCol("Group", "string", "API group"),
			wideCol("Kind", "string", "CustomResource kind"),
			wideCol("ShortNames", "string", "Short names"),
			wideCol("Established", "boolean", "Established status"),
		},
		Cells: func(obj runtime.Object, _ time.Time) ([]interface{}, error) {
			if !isCRD(obj) {
				return nil, fmt.Errorf("printers: cannot print %T as a CustomResourceDefinition", obj)
			}
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, err
			}
			raw, err := json.Marshal(obj)
			if err != nil {
				return nil, err
			}
			var crd crdView
			if err := json.Unmarshal(raw, &crd); err != nil {
				return nil, err
			}
			var versions []string
			for _, v := range crd.Spec.Versions {
				if !v.Served {
					continue
				}
				label := v.Name
				if v.Storage {
					label += "(storage)"
				}
				versions = append(versions, label)
			}
			sort.Strings(versions)
			established := false
			for _, c := range crd.Status.Conditions {
				if c.Type == "Established" && c.Status == string(metav1.ConditionTrue) {
					established = true
					break
				}
			}
			return []interface{}{
				m.GetName(), crd.Spec.Scope, strings.Join(versions, ","),
				m.GetCreationTimestamp().Time.UTC().Format(time.RFC3339),
				crd.Spec.Group, crd.Spec.Names.Kind, strings.Join(crd.Spec.Names.ShortNames, ","), established,
			}, nil
		},
	}
}
