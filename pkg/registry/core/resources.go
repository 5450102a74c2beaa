package core

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/events"
)

// Definitions are the core/v1 resources (and events.k8s.io/v1, which
// shares the events storage).
func Definitions() []*registry.Definition {
	return []*registry.Definition{
		namespaces(), pods(), podTemplates(), replicationControllers(), services(), endpoints(), nodes(),
		configMaps(), secrets(), serviceAccounts(), coreEvents(),
		persistentVolumes(), persistentVolumeClaims(), limitRanges(), resourceQuotas(),
	}
}

func def(resource, kind string, namespaced bool, newObj, newList func() runtime.Object, s *registry.Strategy) *registry.Definition {
	return registry.NewDefinition("", "v1", resource, kind, namespaced, newObj, newList, s)
}

// NamespaceFinalizerKubernetes holds a namespace until its content is gone.
const NamespaceFinalizerKubernetes = corev1.FinalizerKubernetes

func namespaces() *registry.Definition {
	d := def("namespaces", "Namespace", false,
		func() runtime.Object { return &corev1.Namespace{} }, func() runtime.Object { return &corev1.NamespaceList{} },
		&registry.Strategy{
			Default: registry.Default(DefaultNamespace),
			PrepareForCreate: registry.Prepare(func(ns *corev1.Namespace) {
				ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
				if !hasString(ns.Spec.Finalizers, NamespaceFinalizerKubernetes) {
					ns.Spec.Finalizers = append(ns.Spec.Finalizers, NamespaceFinalizerKubernetes)
				}
			}),
			PrepareForUpdate: registry.PrepareUpdate(func(ns, old *corev1.Namespace) {
				// spec.finalizers change only through the finalize subresource.
				ns.Spec.Finalizers = old.Spec.Finalizers
			}),
			Validate:       registry.Validate(ValidateNamespace),
			ValidateUpdate: registry.ValidateUpdate(ValidateNamespaceUpdate),
			HasStatus:      true,
			Finalizing: func(obj runtime.Object) bool {
				ns := obj.(*corev1.Namespace)
				ns.Status.Phase = corev1.NamespaceTerminating
				return len(ns.Spec.Finalizers) > 0
			},
			ReturnDeletedObject: true,
			Fields: registry.Fields(func(ns *corev1.Namespace) map[string]string {
				return map[string]string{"status.phase": string(ns.Status.Phase)}
			}),
		})
	d.ShortNames = []string{"ns"}
	d.Actions = []registry.Action{{Name: "finalize", Verbs: []string{"update"}}}
	d.ValidateStatus = registry.ValidateUpdate(ValidateNamespaceStatusUpdate)
	return d
}

func hasString[T comparable](list []T, s T) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func pods() *registry.Definition {
	d := def("pods", "Pod", true,
		func() runtime.Object { return &corev1.Pod{} }, func() runtime.Object { return &corev1.PodList{} },
		&registry.Strategy{
			Default: registry.Default(DefaultPod),
			PrepareForCreate: registry.Prepare(func(p *corev1.Pod) {
				p.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: QOSClass(&p.Spec)}
				// Admission may have set serviceAccountName after defaulting.
				SyncServiceAccountAlias(&p.Spec)
				preparePodCreate(p)
			}),
			Validate:       registry.Validate(ValidatePod),
			ValidateUpdate: registry.ValidateUpdate(ValidatePodUpdate),
			Generation:     true,
			HasStatus:      true,
			GracePeriod: func(obj runtime.Object) (int64, bool) {
				p := obj.(*corev1.Pod)
				grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
				if p.Spec.TerminationGracePeriodSeconds != nil {
					grace = *p.Spec.TerminationGracePeriodSeconds
				}
				// Unscheduled and finished pods have nothing to stop: they go at once.
				running := p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
				return grace, running
			},
			ReturnDeletedObject: true,
			Fields: registry.Fields(func(p *corev1.Pod) map[string]string {
				return map[string]string{
					"spec.nodeName":            p.Spec.NodeName,
					"spec.restartPolicy":       string(p.Spec.RestartPolicy),
					"spec.schedulerName":       p.Spec.SchedulerName,
					"spec.serviceAccountName":  p.Spec.ServiceAccountName,
					"spec.hostNetwork":         strconv.FormatBool(p.Spec.HostNetwork),
					"status.phase":             string(p.Status.Phase),
					"status.podIP":             p.Status.PodIP,
					"status.nominatedNodeName": p.Status.NominatedNodeName,
				}
			}),
		})
	d.ShortNames = []string{"po"}
	// Binding and eviction act on the pod; log, exec, attach and
	// port-forward stream from the node's kubelet.
	d.Actions = []registry.Action{
		{Name: "binding", Kind: schema.GroupVersionKind{Version: "v1", Kind: "Binding"}, Verbs: []string{"create"}},
		{Name: "eviction", Kind: schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}, Verbs: []string{"create"}},
		{Name: "log", Verbs: []string{"get"}},
		{Name: "exec", Kind: schema.GroupVersionKind{Version: "v1", Kind: "PodExecOptions"}, Verbs: []string{"create", "get"}},
		{Name: "attach", Kind: schema.GroupVersionKind{Version: "v1", Kind: "PodAttachOptions"}, Verbs: []string{"create", "get"}},
		{Name: "portforward", Kind: schema.GroupVersionKind{Version: "v1", Kind: "PodPortForwardOptions"}, Verbs: []string{"create", "get"}},
	}
	d.Categories = []string{"all"}
	d.ValidateStatus = registry.ValidateUpdate(ValidatePodStatusUpdate)
	// kubectl debug adds ephemeral containers through their subresource.
	d.Subresources = []registry.UpdateSubresource{{Name: "ephemeralcontainers",
		Keep:           registry.PrepareUpdate(PrepareEphemeralContainersUpdate),
		ValidateUpdate: registry.ValidateUpdate(ValidatePodEphemeralContainersUpdate)}}
	return d
}

// QOSClass computes a pod's quality of service class as upstream does:
// Guaranteed when every container's CPU and memory requests equal limits,
// BestEffort when no container asks for anything, Burstable otherwise.
func QOSClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	all := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	for _, c := range all {
		for name, q := range c.Resources.Requests {
			if name != corev1.ResourceCPU && name != corev1.ResourceMemory || q.IsZero() {
				continue
			}
			add(requests, name, q)
		}
		seen := 0
		for name, q := range c.Resources.Limits {
			if name != corev1.ResourceCPU && name != corev1.ResourceMemory || q.IsZero() {
				continue
			}
			seen++
			add(limits, name, q)
		}
		if seen < 2 {
			guaranteed = false
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if l, ok := limits[name]; !ok || l.Cmp(req) != 0 {
				guaranteed = false
			}
		}
	}
	if guaranteed && len(limits) == 2 {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

func add(list corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	if cur, ok := list[name]; ok {
		cur.Add(q)
		list[name] = cur
		return
	}
	list[name] = q.DeepCopy()
}

func podTemplates() *registry.Definition {
	return def("podtemplates", "PodTemplate", true,
		func() runtime.Object { return &corev1.PodTemplate{} }, func() runtime.Object { return &corev1.PodTemplateList{} },
		&registry.Strategy{
			Default:             registry.Default(DefaultPodTemplate),
			Validate:            registry.Validate(ValidatePodTemplate),
			ValidateUpdate:      registry.ValidateUpdate(ValidatePodTemplateUpdate),
			ReturnDeletedObject: true,
		})
}

func services() *registry.Definition {
	d := def("services", "Service", true,
		func() runtime.Object { return &corev1.Service{} }, func() runtime.Object { return &corev1.ServiceList{} },
		&registry.Strategy{
			Default:             registry.Default(DefaultService),
			Validate:            registry.Validate(ValidateService),
			ValidateUpdate:      registry.ValidateUpdate(ValidateServiceUpdate),
			HasStatus:           true,
			ReturnDeletedObject: true,
			Fields: registry.Fields(func(s *corev1.Service) map[string]string {
				return map[string]string{"spec.clusterIP": s.Spec.ClusterIP, "spec.type": string(s.Spec.Type)}
			}),
		})
	d.ShortNames = []string{"svc"}
	d.Categories = []string{"all"}
	d.ValidateStatus = registry.ValidateUpdate(ValidateServiceStatusUpdate)
	d.NewHooks = ServiceHooks
	return d
}

func endpoints() *registry.Definition {
	d := def("endpoints", "Endpoints", true,
		func() runtime.Object { return &corev1.Endpoints{} }, func() runtime.Object { return &corev1.EndpointsList{} },
		&registry.Strategy{
			Default:             registry.Default(DefaultEndpoints),
			Validate:            registry.Validate(ValidateEndpoints),
			ValidateUpdate:      registry.ValidateUpdate(ValidateEndpointsUpdate),
			AllowCreateOnUpdate: true,
		})
	d.ShortNames = []string{"ep"}
	d.Singular = "endpoints"
	d.Warning = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
	return d
}

func nodes() *registry.Definition {
	d := def("nodes", "Node", false,
		func() runtime.Object { return &corev1.Node{} }, func() runtime.Object { return &corev1.NodeList{} },
		&registry.Strategy{
			Default:            registry.Default(DefaultNode),
			Validate:           registry.Validate(ValidateNode),
			ValidateUpdate:     registry.ValidateUpdate(ValidateNodeUpdate),
			HasStatus:          true,
			KeepStatusOnCreate: true,
			Fields: registry.Fields(func(n *corev1.Node) map[string]string {
				return map[string]string{"spec.unschedulable": strconv.FormatBool(n.Spec.Unschedulable)}
			}),
		})
	d.ShortNames = []string{"no"}
	// nodes/proxy reaches the node's kubelet (the API server proxies).
	d.Actions = []registry.Action{{Name: "proxy", Kind: schema.GroupVersionKind{Version: "v1", Kind: "NodeProxyOptions"},
		Verbs: []string{"create", "delete", "get", "patch", "update"}}}
	d.ValidateStatus = registry.ValidateUpdate(ValidateNodeStatusUpdate)
	return d
}

func configMaps() *registry.Definition {
	d := def("configmaps", "ConfigMap", true,
		func() runtime.Object { return &corev1.ConfigMap{} }, func() runtime.Object { return &corev1.ConfigMapList{} },
		&registry.Strategy{
			Default:        registry.Default(DefaultConfigMap),
			Validate:       registry.Validate(ValidateConfigMap),
			ValidateUpdate: registry.ValidateUpdate(ValidateConfigMapUpdate),
		})
	d.ShortNames = []string{"cm"}
	return d
}

func secrets() *registry.Definition {
	return def("secrets", "Secret", true,
		func() runtime.Object { return &corev1.Secret{} }, func() runtime.Object { return &corev1.SecretList{} },
		&registry.Strategy{
			Default: registry.Default(DefaultSecret),
			// stringData is write-only: it is merged into data and dropped
			// (before validation, which checks the merged data).
			PrepareForCreate: registry.Prepare(mergeStringData),
			PrepareForUpdate: registry.PrepareUpdate(func(s, _ *corev1.Secret) { mergeStringData(s) }),
			Validate:         registry.Validate(ValidateSecret),
			ValidateUpdate:   registry.ValidateUpdate(ValidateSecretUpdate),
			Fields: registry.Fields(func(s *corev1.Secret) map[string]string {
				return map[string]string{"type": string(s.Type)}
			}),
		})
}

func serviceAccounts() *registry.Definition {
	d := def("serviceaccounts", "ServiceAccount", true,
		func() runtime.Object { return &corev1.ServiceAccount{} }, func() runtime.Object { return &corev1.ServiceAccountList{} },
		&registry.Strategy{
			Default:        registry.Default(DefaultServiceAccount),
			Validate:       registry.Validate(ValidateServiceAccount),
			ValidateUpdate: registry.ValidateUpdate(ValidateServiceAccountUpdate),
		})
	d.ShortNames = []string{"sa"}
	d.Actions = []registry.Action{{Name: "token", Kind: schema.GroupVersionKind{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest"}, Verbs: []string{"create"}}}
	return d
}

func coreEvents() *registry.Definition {
	d := def("events", "Event", true,
		func() runtime.Object { return &corev1.Event{} }, func() runtime.Object { return &corev1.EventList{} },
		&registry.Strategy{
			Default:             registry.Default(DefaultEvent),
			Validate:            registry.Validate(events.ValidateCoreEvent),
			ValidateUpdate:      registry.ValidateUpdate(events.ValidateCoreEventUpdate),
			AllowCreateOnUpdate: true,
			Fields: registry.Fields(func(e *corev1.Event) map[string]string {
				source := e.Source.Component
				if source == "" {
					source = e.ReportingController
				}
				return map[string]string{
					"involvedObject.kind":            e.InvolvedObject.Kind,
					"involvedObject.namespace":       e.InvolvedObject.Namespace,
					"involvedObject.name":            e.InvolvedObject.Name,
					"involvedObject.uid":             string(e.InvolvedObject.UID),
					"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
					"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
					"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
					"reason":                         e.Reason,
					"reportingComponent":             e.ReportingController,
					"source":                         source,
					"type":                           e.Type,
				}
			}),
		})
	d.ShortNames = []string{"ev"}
	d.Extra = []registry.VersionDef{{
		Group: "events.k8s.io", Version: "v1",
		New:     func() runtime.Object { return &eventsv1.Event{} },
		NewList: func() runtime.Object { return &eventsv1.EventList{} },
		ToStorage: func(obj runtime.Object) (runtime.Object, error) {
			e := obj.(*eventsv1.Event)
			if errs := events.ValidateEvent(e); len(errs) > 0 {
				return nil, apierrors.NewInvalid(schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, e.Name, errs)
			}
			return events.ToCore(e), nil
		},
		FromStorage: func(obj runtime.Object) (runtime.Object, error) {
			return events.FromCore(obj.(*corev1.Event)), nil
		},
		FieldLabels: events.FieldLabels,
	}}
	return d
}

func persistentVolumes() *registry.Definition {
	d := def("persistentvolumes", "PersistentVolume", false,
		func() runtime.Object { return &corev1.PersistentVolume{} }, func() runtime.Object { return &corev1.PersistentVolumeList{} },
		&registry.Strategy{
			Default: registry.Default(DefaultPersistentVolume),
			PrepareForCreate: registry.Prepare(func(pv *corev1.PersistentVolume) {
				pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending}
			}),
			Validate:            registry.Validate(ValidatePersistentVolume),
			ValidateUpdate:      registry.ValidateUpdate(ValidatePersistentVolumeUpdate),
			HasStatus:           true,
			ReturnDeletedObject: true,
		})
	d.ShortNames = []string{"pv"}
	d.ValidateStatus = registry.ValidateUpdate(ValidatePersistentVolumeStatusUpdate)
	return d
}

func persistentVolumeClaims() *registry.Definition {
	d := def("persistentvolumeclaims", "PersistentVolumeClaim", true,
		func() runtime.Object { return &corev1.PersistentVolumeClaim{} }, func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },
		&registry.Strategy{
			Default: registry.Default(DefaultPersistentVolumeClaim),
			PrepareForCreate: registry.Prepare(func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
			}),
			Validate:            registry.Validate(ValidatePersistentVolumeClaim),
			ValidateUpdate:      registry.ValidateUpdate(ValidatePersistentVolumeClaimUpdate),
			HasStatus:           true,
			ReturnDeletedObject: true,
		})
	d.ShortNames = []string{"pvc"}
	d.ValidateStatus = registry.ValidateUpdate(ValidatePersistentVolumeClaimStatusUpdate)
	return d
}

func limitRanges() *registry.Definition {
	d := def("limitranges", "LimitRange", true,
		func() runtime.Object { return &corev1.LimitRange{} }, func() runtime.Object { return &corev1.LimitRangeList{} },
		&registry.Strategy{
			Default:        registry.Default(DefaultLimitRange),
			Validate:       registry.Validate(ValidateLimitRange),
			ValidateUpdate: registry.ValidateUpdate(ValidateLimitRangeUpdate),
		})
	d.ShortNames = []string{"limits"}
	return d
}

func resourceQuotas() *registry.Definition {
	d := def("resourcequotas", "ResourceQuota", true,
		func() runtime.Object { return &corev1.ResourceQuota{} }, func() runtime.Object { return &corev1.ResourceQuotaList{} },
		&registry.Strategy{
			Default:             registry.Default(DefaultResourceQuota),
			Validate:            registry.Validate(ValidateResourceQuota),
			ValidateUpdate:      registry.ValidateUpdate(ValidateResourceQuotaUpdate),
			HasStatus:           true,
			ReturnDeletedObject: true,
		})
	d.ShortNames = []string{"quota"}
	d.ValidateStatus = registry.ValidateUpdate(ValidateResourceQuotaStatusUpdate)
	return d
}

func mergeStringData(s *corev1.Secret) {
	for k, v := range s.StringData {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}
