package printers

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
)

const (
	// nodeRoleLabelPrefix marks a role with a node-role.kubernetes.io/<role> label.
	nodeRoleLabelPrefix = "node-role.kubernetes.io/"
	// nodeRoleLabel names a role in its value (kubernetes.io/role=<role>).
	nodeRoleLabel = "kubernetes.io/role"
	// betaStorageClassAnnotation takes precedence over spec.storageClassName.
	betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"
)

// layoutContainers joins container names and images with commas.
func layoutContainers(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i := range containers {
		n[i] = containers[i].Name
		im[i] = containers[i].Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

func podTemplateHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Containers", "string", "Names of each container in the template."),
			col("Images", "string", "Images referenced by each container in the template."),
			col("Pod Labels", "string", "The labels for the pod template."),
		},
		Cells: typed(func(obj *corev1.PodTemplate, _ time.Time) ([]interface{}, error) {
			names, images := layoutContainers(obj.Template.Spec.Containers)
			return []interface{}{obj.Name, names, images, labels.FormatLabels(obj.Template.Labels)}, nil
		}),
	}
}

func replicationControllerHandler() Handler {
	specDoc := corev1.ReplicationControllerSpec{}.SwaggerDoc()
	statusDoc := corev1.ReplicationControllerStatus{}.SwaggerDoc()
	return Handler{
		Columns: append([]metav1.TableColumnDefinition{
			nameColumn(),
			col("Desired", "integer", specDoc["replicas"]),
			col("Current", "integer", statusDoc["replicas"]),
			col("Ready", "integer", statusDoc["readyReplicas"]),
			ageColumn(),
		}, append(containersColumns(), wideCol("Selector", "string", specDoc["selector"]))...),
		Cells: typed(func(obj *corev1.ReplicationController, now time.Time) ([]interface{}, error) {
			var containers []corev1.Container
			if obj.Spec.Template != nil {
				containers = obj.Spec.Template.Spec.Containers
			}
			names, images := layoutContainers(containers)
			return []interface{}{
				obj.Name, int64(deref(obj.Spec.Replicas)), int64(obj.Status.Replicas), int64(obj.Status.ReadyReplicas),
				age(obj.CreationTimestamp, now), names, images, labels.FormatLabels(obj.Spec.Selector),
			}, nil
		}),
	}
}

func serviceHandler() Handler {
	specDoc := corev1.ServiceSpec{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Type", "string", specDoc["type"]),
			col("Cluster-IP", "string", specDoc["clusterIP"]),
			col("External-IP", "string", specDoc["externalIPs"]),
			col("Port(s)", "string", specDoc["ports"]),
			ageColumn(),
			wideCol("Selector", "string", specDoc["selector"]),
		},
		Cells: typed(func(svc *corev1.Service, now time.Time) ([]interface{}, error) {
			clusterIP := "<none>"
			if len(svc.Spec.ClusterIPs) > 0 {
				clusterIP = svc.Spec.ClusterIPs[0]
			} else if svc.Spec.ClusterIP != "" {
				clusterIP = svc.Spec.ClusterIP
			}
			ports := servicePorts(svc.Spec.Ports)
			if ports == "" {
				ports = "<none>"
			}
			return []interface{}{
				svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc), ports,
				age(svc.CreationTimestamp, now), labels.FormatLabels(svc.Spec.Selector),
			}, nil
		}),
	}
}

// loadBalancerAddresses returns the sorted, de-duplicated IPs (or hostnames
// where there is no IP) of a load balancer status, joined by commas. The
// server always renders the untruncated (wide) form.
func loadBalancerAddresses(ingress []corev1.LoadBalancerIngress) string {
	addrs := sets.New[string]()
	for _, in := range ingress {
		if in.IP != "" {
			addrs.Insert(in.IP)
		} else if in.Hostname != "" {
			addrs.Insert(in.Hostname)
		}
	}
	return strings.Join(sets.List(addrs), ",")
}

func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		lb := loadBalancerAddresses(svc.Status.LoadBalancer.Ingress)
		if len(svc.Spec.ExternalIPs) > 0 {
			var all []string
			if lb != "" {
				all = append(all, strings.Split(lb, ",")...)
			}
			all = append(all, svc.Spec.ExternalIPs...)
			return strings.Join(all, ",")
		}
		if lb != "" {
			return lb
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// servicePorts renders ports as port/PROTO, or port:nodePort/PROTO when a
// node port is allocated, joined by commas.
func servicePorts(ports []corev1.ServicePort) string {
	out := make([]string, len(ports))
	for i, p := range ports {
		if p.NodePort > 0 {
			out[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			out[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	return strings.Join(out, ",")
}

func endpointsHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Endpoints", "string", corev1.Endpoints{}.SwaggerDoc()["subsets"]),
			ageColumn(),
		},
		Cells: typed(func(obj *corev1.Endpoints, now time.Time) ([]interface{}, error) {
			return []interface{}{obj.Name, formatEndpoints(obj), age(obj.CreationTimestamp, now)}, nil
		}),
	}
}

// formatEndpoints lists up to three ip:port pairs (bare IPs for subsets
// without ports), then "+ N more...".
func formatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	const limit = 3
	var list []string
	total := 0
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			// headless service without ports
			total += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == limit {
					break
				}
				list = append(list, a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			total += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == limit {
					break
				}
				list = append(list, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	s := strings.Join(list, ",")
	if total > limit {
		return fmt.Sprintf("%s + %d more...", s, total-limit)
	}
	return s
}

func nodeHandler() Handler {
	infoDoc := corev1.NodeSystemInfo{}.SwaggerDoc()
	statusDoc := corev1.NodeStatus{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Status", "string", "The status of the node"),
			col("Roles", "string", "The roles of the node"),
			ageColumn(),
			col("Version", "string", infoDoc["kubeletVersion"]),
			wideCol("Internal-IP", "string", statusDoc["addresses"]),
			wideCol("External-IP", "string", statusDoc["addresses"]),
			wideCol("OS-Image", "string", infoDoc["osImage"]),
			wideCol("Kernel-Version", "string", infoDoc["kernelVersion"]),
			wideCol("Container-Runtime", "string", infoDoc["containerRuntimeVersion"]),
		},
		Cells: typed(func(node *corev1.Node, now time.Time) ([]interface{}, error) {
			roles := strings.Join(nodeRoles(node), ",")
			if roles == "" {
				roles = "<none>"
			}
			info := node.Status.NodeInfo
			return []interface{}{
				node.Name, nodeStatus(node), roles, age(node.CreationTimestamp, now), info.KubeletVersion,
				nodeAddress(node, corev1.NodeInternalIP), nodeAddress(node, corev1.NodeExternalIP),
				orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion),
			}, nil
		}),
	}
}

// nodeStatus is "Ready", "NotReady" or "Unknown" (no Ready condition),
// followed by ",SchedulingDisabled" for a cordoned node.
func nodeStatus(node *corev1.Node) string {
	status := "Unknown"
	// The last Ready condition wins, as in upstream's condition map.
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			status = string(corev1.NodeReady)
		} else {
			status = "Not" + string(corev1.NodeReady)
		}
	}
	if node.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	return status
}

// nodeRoles returns the sorted roles named by node-role.kubernetes.io/<role>
// label keys and by the kubernetes.io/role label value.
func nodeRoles(node *corev1.Node) []string {
	roles := sets.New[string]()
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, nodeRoleLabelPrefix):
			if role := strings.TrimPrefix(k, nodeRoleLabelPrefix); role != "" {
				roles.Insert(role)
			}
		case k == nodeRoleLabel && v != "":
			roles.Insert(v)
		}
	}
	return sets.List(roles)
}

// nodeAddress returns the node's first address of type t, or "<none>".
func nodeAddress(node *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// eventHandler prints both core/v1 Events and events.k8s.io/v1 Events; the
// latter are shown through their deprecated core-compatible fields, as
// upstream converts them to the core type before printing. Upstream's event
// table is the one whose Name column is not first: it is last and wide-only.
func eventHandler() Handler {
	eventDoc := corev1.Event{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			col("Last Seen", "string", eventDoc["lastTimestamp"]),
			col("Type", "string", eventDoc["type"]),
			col("Reason", "string", eventDoc["reason"]),
			col("Object", "string", eventDoc["involvedObject"]),
			wideCol("Subobject", "string", corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]),
			wideCol("Source", "string", eventDoc["source"]),
			col("Message", "string", eventDoc["message"]),
			wideCol("First Seen", "string", eventDoc["firstTimestamp"]),
			wideCol("Count", "string", eventDoc["count"]),
			{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: objectMetaDoc["name"]},
		},
		Cells: func(obj runtime.Object, now time.Time) ([]interface{}, error) {
			switch e := obj.(type) {
			case *corev1.Event:
				return eventCells(e, now), nil
			case *eventsv1.Event:
				return eventCells(coreEvent(e), now), nil
			}
			return nil, fmt.Errorf("printers: cannot print %T as an event", obj)
		},
	}
}

// coreEvent maps the fields of an events.k8s.io/v1 Event that the event table
// shows onto a core/v1 Event.
func coreEvent(e *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		ObjectMeta:          e.ObjectMeta,
		InvolvedObject:      e.Regarding,
		Reason:              e.Reason,
		Message:             e.Note,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
		Type:                e.Type,
		EventTime:           e.EventTime,
		Action:              e.Action,
		Related:             e.Related,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

func eventCells(e *corev1.Event, now time.Time) []interface{} {
	first := age(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = ageMicro(e.EventTime, now)
	}
	last := age(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = ageMicro(e.Series.LastObservedTime, now)
		count = e.Series.Count
	} else if count == 0 {
		// singleton events of the new API carry no count
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	return []interface{}{
		last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath,
		eventSource(e), strings.TrimSpace(e.Message), first, int64(count), e.Name,
	}
}

// eventSource is "component, host", falling back to the reporting
// controller and instance, omitting an empty host.
func eventSource(e *corev1.Event) string {
	component := e.Source.Component
	if component == "" {
		component = e.ReportingController
	}
	host := e.Source.Host
	if host == "" {
		host = e.ReportingInstance
	}
	if host == "" {
		return component
	}
	return component + ", " + host
}

func namespaceHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Status", "string", "The status of the namespace"),
			ageColumn(),
		},
		Cells: typed(func(obj *corev1.Namespace, now time.Time) ([]interface{}, error) {
			return []interface{}{obj.Name, string(obj.Status.Phase), age(obj.CreationTimestamp, now)}, nil
		}),
	}
}

func secretHandler() Handler {
	doc := corev1.Secret{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Type", "string", doc["type"]),
			col("Data", "string", doc["data"]),
			ageColumn(),
		},
		Cells: typed(func(obj *corev1.Secret, now time.Time) ([]interface{}, error) {
			// stringData is write-only and merged into data on the way in.
			n := len(obj.Data)
			for k := range obj.StringData {
				if _, dup := obj.Data[k]; !dup {
					n++
				}
			}
			return []interface{}{obj.Name, string(obj.Type), int64(n), age(obj.CreationTimestamp, now)}, nil
		}),
	}
}

func serviceAccountHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Secrets", "string", corev1.ServiceAccount{}.SwaggerDoc()["secrets"]),
			ageColumn(),
		},
		Cells: typed(func(obj *corev1.ServiceAccount, now time.Time) ([]interface{}, error) {
			return []interface{}{obj.Name, int64(len(obj.Secrets)), age(obj.CreationTimestamp, now)}, nil
		}),
	}
}

func configMapHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Data", "string", corev1.ConfigMap{}.SwaggerDoc()["data"]),
			ageColumn(),
		},
		Cells: typed(func(obj *corev1.ConfigMap, now time.Time) ([]interface{}, error) {
			return []interface{}{obj.Name, int64(len(obj.Data) + len(obj.BinaryData)), age(obj.CreationTimestamp, now)}, nil
		}),
	}
}

// accessModes renders access modes as RWO,ROX,RWX,RWOP (in that order,
// without duplicates).
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"},
		{corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"},
		{corev1.ReadWriteOncePod, "RWOP"},
	} {
		for _, have := range modes {
			if have == m.mode {
				out = append(out, m.short)
				break
			}
		}
	}
	return strings.Join(out, ",")
}

func persistentVolumeHandler() Handler {
	specDoc := corev1.PersistentVolumeSpec{}.SwaggerDoc()
	statusDoc := corev1.PersistentVolumeStatus{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Capacity", "string", specDoc["capacity"]),
			col("Access Modes", "string", specDoc["accessModes"]),
			col("Reclaim Policy", "string", specDoc["persistentVolumeReclaimPolicy"]),
			col("Status", "string", statusDoc["phase"]),
			col("Claim", "string", specDoc["claimRef"]),
			col("StorageClass", "string", "StorageClass of the pv"),
			col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
			col("Reason", "string", statusDoc["reason"]),
			ageColumn(),
			wideCol("VolumeMode", "string", specDoc["volumeMode"]),
		},
		Cells: typed(func(pv *corev1.PersistentVolume, now time.Time) ([]interface{}, error) {
			claim := ""
			if ref := pv.Spec.ClaimRef; ref != nil {
				claim = ref.Namespace + "/" + ref.Name
			}
			capacity := pv.Spec.Capacity[corev1.ResourceStorage]
			phase := string(pv.Status.Phase)
			if pv.DeletionTimestamp != nil {
				phase = "Terminating"
			}
			class := pv.Spec.StorageClassName
			if c, ok := pv.Annotations[betaStorageClassAnnotation]; ok {
				class = c
			}
			vac := "<unset>"
			if pv.Spec.VolumeAttributesClassName != nil {
				vac = *pv.Spec.VolumeAttributesClassName
			}
			mode := "<unset>"
			if pv.Spec.VolumeMode != nil {
				mode = string(*pv.Spec.VolumeMode)
			}
			return []interface{}{
				pv.Name, capacity.String(), accessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
				phase, claim, class, vac, pv.Status.Reason, age(pv.CreationTimestamp, now), mode,
			}, nil
		}),
	}
}

func persistentVolumeClaimHandler() Handler {
	specDoc := corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()
	statusDoc := corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Status", "string", statusDoc["phase"]),
			col("Volume", "string", specDoc["volumeName"]),
			col("Capacity", "string", statusDoc["capacity"]),
			col("Access Modes", "string", statusDoc["accessModes"]),
			col("StorageClass", "string", "StorageClass of the pvc"),
			col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
			ageColumn(),
			wideCol("VolumeMode", "string", specDoc["volumeMode"]),
		},
		Cells: typed(func(pvc *corev1.PersistentVolumeClaim, now time.Time) ([]interface{}, error) {
			phase := string(pvc.Status.Phase)
			if pvc.DeletionTimestamp != nil {
				phase = "Terminating"
			}
			capacity, modes := "", ""
			if pvc.Spec.VolumeName != "" {
				modes = accessModes(pvc.Status.AccessModes)
				q := pvc.Status.Capacity[corev1.ResourceStorage]
				capacity = q.String()
			}
			class := ""
			if c, ok := pvc.Annotations[betaStorageClassAnnotation]; ok {
				class = c
			} else if pvc.Spec.StorageClassName != nil {
				class = *pvc.Spec.StorageClassName
			}
			vac := "<unset>"
			if pvc.Spec.VolumeAttributesClassName != nil {
				vac = *pvc.Spec.VolumeAttributesClassName
			}
			mode := "<unset>"
			if pvc.Spec.VolumeMode != nil {
				mode = string(*pvc.Spec.VolumeMode)
			}
			return []interface{}{
				pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, class, vac, age(pvc.CreationTimestamp, now), mode,
			}, nil
		}),
	}
}

func resourceQuotaHandler() Handler {
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
			col("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
			ageColumn(),
		},
		Cells: typed(func(rq *corev1.ResourceQuota, now time.Time) ([]interface{}, error) {
			names := make([]string, 0, len(rq.Status.Hard))
			for name := range rq.Status.Hard {
				names = append(names, string(name))
			}
			sort.Strings(names)
			var requests, limits []string
			for _, name := range names {
				used := rq.Status.Used[corev1.ResourceName(name)]
				hard := rq.Status.Hard[corev1.ResourceName(name)]
				entry := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
				if pieces := strings.Split(name, "."); len(pieces) > 1 && pieces[0] == "limits" {
					limits = append(limits, entry)
				} else {
					requests = append(requests, entry)
				}
			}
			return []interface{}{rq.Name, strings.Join(requests, ", "), strings.Join(limits, ", "), age(rq.CreationTimestamp, now)}, nil
		}),
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
