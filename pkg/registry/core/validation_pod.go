package core

// Validation of Pods, PodTemplates and of the PodSpec embedded in workload
// objects (Deployments, Jobs, ...).

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podSpecContext says where a PodSpec being validated lives.
type podSpecContext struct {
	// isPod is true for a real Pod, false for a template embedded in
	// another object. A few rules only apply to real Pods (their fields
	// get defaulted later for templates).
	isPod bool
	// podMeta is the Pod's metadata (nil for templates); generic ephemeral
	// volumes need the pod name to compute their PVC names.
	podMeta *metav1.ObjectMeta
}

// ValidatePod validates a Pod being created.
func ValidatePod(pod *corev1.Pod) field.ErrorList {
	allErrs := validatePodMetadataAndSpec(pod)
	specPath := field.NewPath("spec")
	// Ephemeral containers can only be added through the
	// pods/ephemeralcontainers subresource.
	if len(pod.Spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	return allErrs
}

func validatePodMetadataAndSpec(pod *corev1.Pod) field.ErrorList {
	metaPath := field.NewPath("metadata")
	specPath := field.NewPath("spec")
	allErrs := ValidateObjectMeta(&pod.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metaPath)
	allErrs = append(allErrs, validatePodSpecificAnnotations(pod.Annotations, &pod.Spec, metaPath.Child("annotations"))...)
	allErrs = append(allErrs, validatePodSpec(&pod.Spec, specPath, podSpecContext{isPod: true, podMeta: &pod.ObjectMeta})...)

	// A projected service account token needs a service account (the
	// ServiceAccount admission plugin normally sets "default").
	if pod.Spec.ServiceAccountName == "" {
		for vi, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for si, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					allErrs = append(allErrs, field.Forbidden(specPath.Child("volumes").Index(vi).Child("projected", "sources").Index(si).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	// Templates tolerate padded images (some tools use " " as a
	// placeholder); Pods do not.
	for _, group := range []struct {
		name string
		list []corev1.Container
	}{{"containers", pod.Spec.Containers}, {"initContainers", pod.Spec.InitContainers}} {
		for i, c := range group.list {
			if len(c.Image) != len(strings.TrimSpace(c.Image)) {
				allErrs = append(allErrs, field.Invalid(specPath.Child(group.name).Index(i).Child("image"), c.Image, "must not have leading or trailing whitespace"))
			}
		}
	}
	return allErrs
}

// validatePodSpecificAnnotations checks the annotations that carry meaning
// for pods.
func validatePodSpecificAnnotations(annotations map[string]string, spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if v, ok := annotations[corev1.MirrorPodAnnotationKey]; ok && spec.NodeName == "" {
		allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.MirrorPodAnnotationKey), v, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if v, ok := annotations[corev1.PodDeletionCost]; ok {
		if _, err := strconv.ParseInt(v, 10, 32); err != nil || strings.TrimSpace(v) != v {
			allErrs = append(allErrs, field.Invalid(fldPath.Key(corev1.PodDeletionCost), v, "must be a 32bit integer"))
		}
	}
	// Simplified: the legacy seccomp, AppArmor and tolerations annotations are
	// not validated.
	return allErrs
}

// ValidatePodUpdate validates an update of a Pod through the main resource.
// Almost all of a Pod's spec is immutable; see updatablePodSpecFields.
func ValidatePodUpdate(pod, old *corev1.Pod) field.ErrorList {
	metaPath := field.NewPath("metadata")
	specPath := field.NewPath("spec")
	allErrs := ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, metaPath)
	allErrs = append(allErrs, validatePodMetadataAndSpec(pod)...)
	allErrs = append(allErrs, validatePodAnnotationUpdates(pod, old, metaPath.Child("annotations"))...)

	// Containers can neither be added nor removed, and images stay set.
	for _, c := range []struct {
		name     string
		new, old []corev1.Container
	}{{"containers", pod.Spec.Containers, old.Spec.Containers}, {"initContainers", pod.Spec.InitContainers, old.Spec.InitContainers}} {
		if len(c.new) != len(c.old) {
			return append(allErrs, field.Forbidden(specPath.Child(c.name), "pod updates may not add or remove containers"))
		}
		for i, ctr := range c.new {
			if ctr.Image == "" {
				allErrs = append(allErrs, field.Required(specPath.Child(c.name).Index(i).Child("image"), ""))
			}
		}
	}

	// activeDeadlineSeconds may be set, or lowered, but not raised or unset.
	adsPath := specPath.Child("activeDeadlineSeconds")
	if ads := pod.Spec.ActiveDeadlineSeconds; ads != nil {
		if *ads < 0 || *ads > math.MaxInt32 {
			return append(allErrs, field.Invalid(adsPath, *ads, inclusiveRangeError(0, math.MaxInt32)))
		}
		if old.Spec.ActiveDeadlineSeconds != nil && *old.Spec.ActiveDeadlineSeconds < *ads {
			return append(allErrs, field.Invalid(adsPath, *ads, "must be less than or equal to previous value"))
		}
	} else if old.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Invalid(adsPath, pod.Spec.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	}

	allErrs = append(allErrs, validateOnlyAddedTolerations(pod.Spec.Tolerations, old.Spec.Tolerations, specPath.Child("tolerations"))...)
	allErrs = append(allErrs, validateOnlyDeletedSchedulingGates(pod.Spec.SchedulingGates, old.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)

	if apiequality.Semantic.DeepEqual(pod.Spec, old.Spec) {
		return allErrs
	}
	// Copy the fields that may change from the new spec onto the old one;
	// anything still different is a forbidden change.
	munged := pod.Spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = old.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = old.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	munged.SchedulingGates = old.Spec.SchedulingGates
	munged.Tolerations = old.Spec.Tolerations
	// A negative grace period (from old clients) may be fixed up to 1.
	if o := old.Spec.TerminationGracePeriodSeconds; o != nil && *o < 0 &&
		munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = o
	}
	// While a pod still has scheduling gates, node selectors may be added.
	if len(old.Spec.SchedulingGates) > 0 && !apiequality.Semantic.DeepEqual(munged.NodeSelector, old.Spec.NodeSelector) {
		for k, v := range old.Spec.NodeSelector {
			if nv, ok := munged.NodeSelector[k]; !ok || nv != v {
				allErrs = append(allErrs, field.Invalid(specPath.Child("nodeSelector"), munged.NodeSelector, "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
				break
			}
		}
		munged.NodeSelector = old.Spec.NodeSelector
	}
	// Simplified: upstream also lets gated pods add node affinity terms.
	if !apiequality.Semantic.DeepEqual(*munged, old.Spec) {
		allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("pod updates may not change fields other than %s\n%v",
			strings.Join(updatablePodSpecFields(), ","), diff.Diff(old.Spec, *munged))))
	}
	return allErrs
}

func updatablePodSpecFields() []string {
	return []string{
		"`spec.containers[*].image`",
		"`spec.initContainers[*].image`",
		"`spec.activeDeadlineSeconds`",
		"`spec.tolerations` (only additions to existing tolerations)",
		"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
	}
}

// validatePodAnnotationUpdates: the mirror pod annotation (set by the kubelet
// for static pods) cannot be added, changed or removed.
func validatePodAnnotationUpdates(pod, old *corev1.Pod, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	key := corev1.MirrorPodAnnotationKey
	oldV, oldOK := old.Annotations[key]
	newV, newOK := pod.Annotations[key]
	switch {
	case oldOK && (!newOK || newV != oldV):
		allErrs = append(allErrs, field.Forbidden(fldPath.Key(key), "may not remove or update mirror pod annotation"))
	case !oldOK && newOK:
		allErrs = append(allErrs, field.Forbidden(fldPath.Key(key), "may not add mirror pod annotation"))
	}
	return allErrs
}

func validateOnlyAddedTolerations(newT, oldT []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	for _, o := range oldT {
		found := false
		for _, n := range newT {
			// tolerationSeconds of an existing toleration may change.
			o.TolerationSeconds = n.TolerationSeconds
			if apiequality.Semantic.DeepEqual(o, n) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(fldPath, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return validateTolerations(newT, fldPath)
}

func validateOnlyDeletedSchedulingGates(newG, oldG []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, g := range newG {
		found := false
		for _, o := range oldG {
			if o.Name == g.Name {
				found = true
			}
		}
		if !found {
			allErrs = append(allErrs, field.Forbidden(fldPath.Index(i).Child("name"),
				fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return allErrs
}

// ValidatePodStatusUpdate validates an update through pods/status.
func ValidatePodStatusUpdate(pod, old *corev1.Pod) field.ErrorList {
	metaPath := field.NewPath("metadata")
	allErrs := ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, metaPath)
	allErrs = append(allErrs, validatePodAnnotationUpdates(pod, old, metaPath.Child("annotations"))...)
	// Upstream reports condition types under "metadata.conditions" (sic).
	for i, c := range pod.Status.Conditions {
		switch c.Type {
		case corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized:
		default:
			allErrs = append(allErrs, ValidateQualifiedName(string(c.Type), metaPath.Child("conditions").Index(i).Child("Type"))...)
		}
	}
	st := field.NewPath("status")
	if pod.Spec.NodeName != old.Spec.NodeName {
		allErrs = append(allErrs, field.Forbidden(st.Child("nodeName"), "may not be changed directly"))
	}
	if n := pod.Status.NominatedNodeName; n != old.Status.NominatedNodeName && n != "" {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, n, st.Child("nominatedNodeName"))...)
	}
	allErrs = append(allErrs, validateImmutable(pod.Status.QOSClass, old.Status.QOSClass, st.Child("qosClass"))...)

	// A container that terminated may not come back to life unless the
	// restart policy allows it.
	allErrs = append(allErrs, validateContainerStateTransition(pod.Status.ContainerStatuses, old.Status.ContainerStatuses, st.Child("containerStatuses"), old.Spec.RestartPolicy, nil)...)
	allErrs = append(allErrs, validateContainerStateTransition(pod.Status.InitContainerStatuses, old.Status.InitContainerStatuses, st.Child("initContainerStatuses"), old.Spec.RestartPolicy, old.Spec.InitContainers)...)
	allErrs = append(allErrs, validateContainerStateTransition(pod.Status.EphemeralContainerStatuses, old.Status.EphemeralContainerStatuses, st.Child("ephemeralContainerStatuses"), corev1.RestartPolicyNever, nil)...)

	var podIPs, hostIPs []string
	for _, ip := range pod.Status.PodIPs {
		podIPs = append(podIPs, ip.IP)
	}
	for _, ip := range pod.Status.HostIPs {
		hostIPs = append(hostIPs, ip.IP)
	}
	allErrs = append(allErrs, validateIPFamilyList(podIPs, st.Child("podIPs"), pod.Status.PodIPs)...)
	if len(hostIPs) > 0 && pod.Status.HostIP != hostIPs[0] {
		allErrs = append(allErrs, field.Invalid(st.Child("hostIPs").Index(0).Child("ip"), hostIPs[0], "must be equal to `hostIP`"))
	}
	allErrs = append(allErrs, validateIPFamilyList(hostIPs, st.Child("hostIPs"), pod.Status.HostIPs)...)
	return allErrs
}

func validateContainerStateTransition(newS, oldS []corev1.ContainerStatus, fldPath *field.Path, policy corev1.RestartPolicy, initContainers []corev1.Container) field.ErrorList {
	var allErrs field.ErrorList
	if policy == corev1.RestartPolicyAlways {
		return nil
	}
	for i, o := range oldS {
		t := o.State.Terminated
		if t == nil || (t.ExitCode != 0 && policy == corev1.RestartPolicyOnFailure) {
			continue
		}
		if isRestartableInitContainer(o.Name, initContainers) {
			continue
		}
		for _, n := range newS {
			if n.Name == o.Name && n.State.Terminated == nil {
				allErrs = append(allErrs, field.Forbidden(fldPath.Index(i).Child("state"), "may not be transitioned to non-terminated state"))
			}
		}
	}
	return allErrs
}

func isRestartableInitContainer(name string, initContainers []corev1.Container) bool {
	for _, c := range initContainers {
		if c.Name == name {
			return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
	}
	return false
}

// validateIPFamilyList checks a list of pod or host IPs: valid, no
// duplicates, at most one per IP family.
func validateIPFamilyList(ips []string, fldPath *field.Path, raw any) field.ErrorList {
	var allErrs field.ErrorList
	v4, v6 := 0, 0
	seen := map[string]bool{}
	for i, ip := range ips {
		errs := validation.IsValidIP(fldPath.Index(i), ip)
		allErrs = append(allErrs, errs...)
		if len(errs) == 0 {
			if strings.Contains(ip, ":") {
				v6++
			} else {
				v4++
			}
		}
		if seen[ip] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), ip))
		}
		seen[ip] = true
	}
	if len(ips) > 1 && (v4 > 1 || v6 > 1 || len(ips) > 2) {
		allErrs = append(allErrs, field.Invalid(fldPath, raw, "may specify no more than one IP for each IP family"))
	}
	return allErrs
}

// ValidatePodTemplate validates a PodTemplate object being created.
func ValidatePodTemplate(pt *corev1.PodTemplate) field.ErrorList {
	allErrs := ValidateObjectMeta(&pt.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, ValidatePodTemplateSpec(&pt.Template, field.NewPath("template"))...)
}

// ValidatePodTemplateUpdate validates an update of a PodTemplate (the
// template itself may change freely).
func ValidatePodTemplateUpdate(pt, old *corev1.PodTemplate) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&pt.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidatePodTemplateSpec(&pt.Template, field.NewPath("template"))...)
}

// ValidatePodTemplateSpec validates a pod template embedded in another
// object. Note that upstream reports template labels as
// "<path>.labels", not "<path>.metadata.labels".
func ValidatePodTemplateSpec(t *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	allErrs := ValidatePodTemplateMetadata(t, fldPath)
	allErrs = append(allErrs, validatePodSpec(&t.Spec, fldPath.Child("spec"), podSpecContext{})...)
	if len(t.Spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return allErrs
}

// ValidatePodTemplateMetadata validates only the labels and annotations of a
// pod template (all that StatefulSet validates of its template).
func ValidatePodTemplateMetadata(t *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	allErrs := metavalidation.ValidateLabels(t.Labels, fldPath.Child("labels"))
	allErrs = append(allErrs, apivalidation.ValidateAnnotations(t.Annotations, fldPath.Child("annotations"))...)
	return append(allErrs, validatePodSpecificAnnotations(t.Annotations, &t.Spec, fldPath.Child("annotations"))...)
}

// validatePodSpec validates a PodSpec (of a Pod or of a template).
func validatePodSpec(spec *corev1.PodSpec, fldPath *field.Path, ctx podSpecContext) field.ErrorList {
	var allErrs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("terminationGracePeriodSeconds"), ""))
	}
	hostUsers := spec.HostUsers == nil || *spec.HostUsers

	vols, vErrs := validateVolumes(spec.Volumes, fldPath.Child("volumes"), ctx)
	allErrs = append(allErrs, vErrs...)
	claimNames, cErrs := validatePodResourceClaims(spec.ResourceClaims, fldPath.Child("resourceClaims"))
	allErrs = append(allErrs, cErrs...)
	cc := containerContext{volumes: vols, claimNames: claimNames, gracePeriod: spec.TerminationGracePeriodSeconds, hostUsers: hostUsers, podRestartPolicy: spec.RestartPolicy}
	allErrs = append(allErrs, validateContainers(spec.Containers, fldPath.Child("containers"), cc)...)
	allErrs = append(allErrs, validateInitContainers(spec.InitContainers, spec.Containers, fldPath.Child("initContainers"), cc)...)
	allErrs = append(allErrs, validateEphemeralContainers(spec.EphemeralContainers, spec.Containers, spec.InitContainers, fldPath.Child("ephemeralContainers"), cc)...)
	if spec.Resources != nil {
		allErrs = append(allErrs, validatePodLevelResources(spec.Resources, fldPath.Child("resources"))...)
	}

	// With host networking, container and host ports must be the same. In
	// templates an unset hostPort is fine: it is defaulted on the Pod.
	if spec.HostNetwork {
		for i, c := range spec.Containers {
			for j, p := range c.Ports {
				if (ctx.isPod || p.HostPort != 0) && p.HostPort != p.ContainerPort {
					allErrs = append(allErrs, field.Invalid(fldPath.Child("containers").Index(i).Child("ports").Index(j).Child("hostPort"), p.HostPort, "must match `containerPort` when `hostNetwork` is true"))
				}
			}
		}
	}

	allErrs = append(allErrs, validateEnum(fldPath.Child("restartPolicy"), spec.RestartPolicy,
		corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)...)
	allErrs = append(allErrs, validateEnum(fldPath.Child("dnsPolicy"), spec.DNSPolicy,
		corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone)...)
	allErrs = append(allErrs, metavalidation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	allErrs = append(allErrs, validatePodSecurityContext(spec, fldPath.Child("securityContext"))...)
	allErrs = append(allErrs, validateAffinity(spec.Affinity, fldPath.Child("affinity"))...)
	allErrs = append(allErrs, validatePodDNSConfig(spec.DNSConfig, spec.DNSPolicy, fldPath.Child("dnsConfig"))...)
	for i, g := range spec.ReadinessGates {
		allErrs = append(allErrs, ValidateQualifiedName(string(g.ConditionType), fldPath.Child("readinessGates").Index(i).Child("conditionType"))...)
	}
	seenGates := map[string]bool{}
	for i, g := range spec.SchedulingGates {
		allErrs = append(allErrs, ValidateQualifiedName(g.Name, fldPath.Child("schedulingGates").Index(i))...)
		if seenGates[g.Name] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Child("schedulingGates").Index(i), g.Name))
		}
		seenGates[g.Name] = true
	}
	allErrs = append(allErrs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, fldPath.Child("topologySpreadConstraints"))...)
	if !hostUsers {
		// User namespaces cannot be combined with host namespaces.
		for _, h := range []struct {
			name string
			on   bool
		}{{"hostNetwork", spec.HostNetwork}, {"HostPID", spec.HostPID}, {"HostIPC", spec.HostIPC}} {
			if h.on {
				allErrs = append(allErrs, field.Forbidden(fldPath.Child(h.name), "when `pod.Spec.HostUsers` is false"))
			}
		}
	}
	if spec.ServiceAccountName != "" {
		allErrs = append(allErrs, validateName(apivalidation.ValidateServiceAccountName, spec.ServiceAccountName, fldPath.Child("serviceAccountName"))...)
	}
	if spec.NodeName != "" {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, spec.NodeName, fldPath.Child("nodeName"))...)
	}
	if ads := spec.ActiveDeadlineSeconds; ads != nil && (*ads < 1 || *ads > math.MaxInt32) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("activeDeadlineSeconds"), *ads, inclusiveRangeError(1, math.MaxInt32)))
	}
	if spec.Hostname != "" {
		allErrs = append(allErrs, validateDNS1123Label(spec.Hostname, fldPath.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		allErrs = append(allErrs, validateDNS1123Label(spec.Subdomain, fldPath.Child("subdomain"))...)
	}
	allErrs = append(allErrs, validateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	for i, ha := range spec.HostAliases {
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Child("hostAliases").Index(i).Child("ip"), ha.IP)...)
		for j, h := range ha.Hostnames {
			allErrs = append(allErrs, validateDNS1123Subdomain(h, fldPath.Child("hostAliases").Index(i).Child("hostnames").Index(j))...)
		}
	}
	if spec.PriorityClassName != "" {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, spec.PriorityClassName, fldPath.Child("priorityClassName"))...)
	}
	if spec.RuntimeClassName != nil {
		allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *spec.RuntimeClassName, fldPath.Child("runtimeClassName"))...)
	}
	if spec.PreemptionPolicy != nil {
		allErrs = append(allErrs, validateEnum(fldPath.Child("preemptionPolicy"), *spec.PreemptionPolicy, corev1.PreemptLowerPriority, corev1.PreemptNever)...)
	}
	if spec.Overhead != nil {
		allErrs = append(allErrs, validateResourceRequirements(&corev1.ResourceRequirements{Limits: spec.Overhead}, validateContainerResourceName, nil, fldPath.Child("overhead"))...)
	}
	if spec.OS != nil {
		if spec.OS.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("os", "name"), "cannot be empty"))
		} else if spec.OS.Name != corev1.Linux && spec.OS.Name != corev1.Windows {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("os"), spec.OS.Name, []corev1.OSName{corev1.Linux, corev1.Windows}))
		}
		// Simplified: the per-OS restrictions on security context fields
		// (e.g. no seLinuxOptions on Windows) are not checked.
	}
	return allErrs
}

// validateEnum: value must be one of valid; "" is reported as Required.
func validateEnum[T ~string](fldPath *field.Path, value T, valid ...T) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	for _, v := range valid {
		if value == v {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(fldPath, value, valid)}
}

func validatePodResourceClaims(claims []corev1.PodResourceClaim, fldPath *field.Path) (map[string]bool, field.ErrorList) {
	var allErrs field.ErrorList
	names := map[string]bool{}
	for i, c := range claims {
		p := fldPath.Index(i)
		switch {
		case c.Name == "":
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		case names[c.Name]:
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), c.Name))
		default:
			allErrs = append(allErrs, validateDNS1123Label(c.Name, p.Child("name"))...)
			names[c.Name] = true
		}
		if c.ResourceClaimName != nil && c.ResourceClaimTemplateName != nil {
			allErrs = append(allErrs, field.Invalid(p, c, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"))
		}
		if c.ResourceClaimName == nil && c.ResourceClaimTemplateName == nil {
			allErrs = append(allErrs, field.Invalid(p, c, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
		}
		if c.ResourceClaimName != nil {
			allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *c.ResourceClaimName, p.Child("resourceClaimName"))...)
		}
		if c.ResourceClaimTemplateName != nil {
			allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, *c.ResourceClaimTemplateName, p.Child("resourceClaimTemplateName"))...)
		}
	}
	return names, allErrs
}

// validatePodLevelResources checks spec.resources: only cpu, memory and
// hugepages. Simplified: upstream also checks that pod-level values cover
// the sum of the containers'.
func validatePodLevelResources(r *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(r.Claims) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("claims"), "claims cannot be set for Resources at pod-level"))
	}
	nameFn := func(name corev1.ResourceName, p *field.Path) field.ErrorList {
		errs := validateResourceName(name, p)
		if len(errs) == 0 && name != corev1.ResourceCPU && name != corev1.ResourceMemory && !isHugePageResourceName(name) {
			errs = append(errs, field.NotSupported(p, name, []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "hugepages-"}))
		}
		return errs
	}
	return append(allErrs, validateResourceRequirements(r, nameFn, nil, fldPath)...)
}

// validateResourceRequirements checks resource names and quantities, and
// that requests do not exceed limits.
func validateResourceRequirements(r *corev1.ResourceRequirements, nameFn func(corev1.ResourceName, *field.Path) field.ErrorList, claimNames map[string]bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	limPath, reqPath := fldPath.Child("limits"), fldPath.Child("requests")
	hasCPUOrMemory, hasHugePages := false, false
	note := func(name corev1.ResourceName) {
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
			hasCPUOrMemory = true
		}
		if isHugePageResourceName(name) {
			hasHugePages = true
		}
	}
	for name, q := range r.Limits {
		p := limPath.Key(string(name))
		allErrs = append(allErrs, nameFn(name, p)...)
		allErrs = append(allErrs, validateResourceQuantityValue(name, q, p)...)
		note(name)
	}
	for name, q := range r.Requests {
		p := reqPath.Key(string(name))
		allErrs = append(allErrs, nameFn(name, p)...)
		allErrs = append(allErrs, validateResourceQuantityValue(name, q, p)...)
		note(name)
		limit, ok := r.Limits[name]
		switch {
		case ok && q.Cmp(limit) != 0 && !isOvercommitAllowed(name):
			allErrs = append(allErrs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case ok && q.Cmp(limit) > 0:
			allErrs = append(allErrs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		case !ok && !isOvercommitAllowed(name):
			allErrs = append(allErrs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
	}
	if hasHugePages && !hasCPUOrMemory {
		allErrs = append(allErrs, field.Forbidden(fldPath, "HugePages require cpu or memory"))
	}
	seen := map[string]bool{}
	for i, c := range r.Claims {
		p := fldPath.Child("claims").Index(i)
		key := c.Name
		if c.Request != "" {
			key += "/" + c.Request
		}
		switch {
		case c.Name == "":
			allErrs = append(allErrs, field.Required(p, ""))
			continue
		case seen[key]:
			allErrs = append(allErrs, field.Duplicate(p, key))
		}
		seen[key] = true
		if !claimNames[c.Name] {
			e := field.NotFound(p, c.Name)
			e.Detail = "must be one of the names in pod.spec.resourceClaims"
			allErrs = append(allErrs, e)
		}
	}
	return allErrs
}

// ValidateTolerations checks tolerations as a pod's are checked (for other
// objects that carry them, such as a RuntimeClass's scheduling).
func ValidateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	return validateTolerations(tolerations, fldPath)
}

// ValidateOverhead checks a fixed resource overhead (a RuntimeClass's
// overhead.podFixed) as a container's limits are checked, reporting at
// fldPath.limits[<name>] as upstream does.
func ValidateOverhead(podFixed corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	return validateResourceRequirements(&corev1.ResourceRequirements{Limits: podFixed}, validateContainerResourceName, nil, fldPath)
}

// validateTolerations checks tolerations (pod spec, and only-added on update).
func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range tolerations {
		p := fldPath.Index(i)
		if t.Key != "" {
			allErrs = append(allErrs, metavalidation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			allErrs = append(allErrs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if errs := validation.IsValidLabelValue(t.Value); len(errs) != 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Value, strings.Join(errs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			// Simplified: the Lt/Gt operators of the taint-tolerations
			// comparison feature are not accepted.
			allErrs = append(allErrs, field.NotSupported(p.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if t.Effect != "" {
			allErrs = append(allErrs, validateTaintEffect(t.Effect, p.Child("effect"))...)
		}
	}
	return allErrs
}

func validateTaintEffect(effect corev1.TaintEffect, fldPath *field.Path) field.ErrorList {
	return validateEnum(fldPath, effect, corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)
}

func validatePodSecurityContext(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	sc := spec.SecurityContext
	if sc == nil {
		return nil
	}
	var allErrs field.ErrorList
	if sc.FSGroup != nil {
		allErrs = append(allErrs, validateID(validation.IsValidGroupID, *sc.FSGroup, fldPath.Child("fsGroup"))...)
	}
	if sc.RunAsUser != nil {
		allErrs = append(allErrs, validateID(validation.IsValidUserID, *sc.RunAsUser, fldPath.Child("runAsUser"))...)
	}
	if sc.RunAsGroup != nil {
		allErrs = append(allErrs, validateID(validation.IsValidGroupID, *sc.RunAsGroup, fldPath.Child("runAsGroup"))...)
	}
	for i, g := range sc.SupplementalGroups {
		allErrs = append(allErrs, validateID(validation.IsValidGroupID, g, fldPath.Child("supplementalGroups").Index(i))...)
	}
	if spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace && spec.HostPID {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("shareProcessNamespace"), *spec.ShareProcessNamespace, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	seen := map[string]bool{}
	for i, s := range sc.Sysctls {
		p := fldPath.Child("sysctls").Index(i).Child("name")
		switch {
		case s.Name == "":
			allErrs = append(allErrs, field.Required(p, ""))
		case !isValidSysctlName(s.Name):
			allErrs = append(allErrs, field.Invalid(p, s.Name, fmt.Sprintf("must have at most 253 characters and match regex %s", sysctlRegexp)))
		case seen[s.Name]:
			allErrs = append(allErrs, field.Duplicate(p, s.Name))
		}
		seen[s.Name] = true
	}
	if sc.FSGroupChangePolicy != nil {
		allErrs = append(allErrs, validateEnum(fldPath.Child("fsGroupChangePolicy"), *sc.FSGroupChangePolicy, corev1.FSGroupChangeAlways, corev1.FSGroupChangeOnRootMismatch)...)
	}
	allErrs = append(allErrs, validateSeccompProfile(sc.SeccompProfile, fldPath.Child("seccompProfile"))...)
	allErrs = append(allErrs, validateAppArmorProfile(sc.AppArmorProfile, fldPath.Child("appArmorProfile"))...)
	if sc.SupplementalGroupsPolicy != nil {
		allErrs = append(allErrs, validateEnum(fldPath.Child("supplementalGroupsPolicy"), *sc.SupplementalGroupsPolicy, corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict)...)
	}
	if sc.SELinuxChangePolicy != nil {
		allErrs = append(allErrs, validateEnum(fldPath.Child("seLinuxChangePolicy"), *sc.SELinuxChangePolicy, corev1.SELinuxChangePolicyMountOption, corev1.SELinuxChangePolicyRecursive)...)
	}
	// Simplified: windowsOptions and seLinuxOptions are not validated.
	return allErrs
}

func validateID(check func(int64) []string, id int64, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range check(id) {
		allErrs = append(allErrs, field.Invalid(fldPath, id, msg))
	}
	return allErrs
}

// sysctlRegexp matches a sysctl name: dot- or slash-separated segments.
var sysctlRegexp = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

func isValidSysctlName(name string) bool {
	return len(name) <= 253 && sysctlRegexp.MatchString(name)
}

func validateSeccompProfile(sp *corev1.SeccompProfile, fldPath *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "type is required when seccompProfile is set"))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), sp.Type, []corev1.SeccompProfileType{corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined}))
	}
	if sp.Type == corev1.SeccompProfileTypeLocalhost {
		if sp.LocalhostProfile == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
		} else {
			allErrs = append(allErrs, validateLocalDescendingPath(*sp.LocalhostProfile, fldPath.Child("localhostProfile"))...)
		}
	} else if sp.LocalhostProfile != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), sp, "can only be set when seccomp type is Localhost"))
	}
	return allErrs
}

func validateAppArmorProfile(ap *corev1.AppArmorProfile, fldPath *field.Path) field.ErrorList {
	if ap == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch ap.Type {
	case corev1.AppArmorProfileTypeLocalhost:
		if ap.LocalhostProfile == nil || strings.TrimSpace(*ap.LocalhostProfile) == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
		} else if strings.TrimSpace(*ap.LocalhostProfile) != *ap.LocalhostProfile {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), *ap.LocalhostProfile, "must not be padded with whitespace"))
		}
	case corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined:
		if ap.LocalhostProfile != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("localhostProfile"), ap.LocalhostProfile, "can only be set when AppArmor type is Localhost"))
		}
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), "type is required when appArmorProfile is set"))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), ap.Type, []corev1.AppArmorProfileType{corev1.AppArmorProfileTypeLocalhost, corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined}))
	}
	return allErrs
}

func validateAffinity(a *corev1.Affinity, fldPath *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var allErrs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := fldPath.Child("nodeAffinity")
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			allErrs = append(allErrs, validateNodeSelector(na.RequiredDuringSchedulingIgnoredDuringExecution, false, p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		}
		for i, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			if t.Weight <= 0 || t.Weight > 100 {
				allErrs = append(allErrs, field.Invalid(tp.Child("weight"), t.Weight, "must be in the range 1-100"))
			}
			// Preferred terms tolerate invalid label values.
			allErrs = append(allErrs, validateNodeSelectorTerm(t.Preference, true, tp.Child("preference"))...)
		}
	}
	for _, pa := range []struct {
		name      string
		required  []corev1.PodAffinityTerm
		preferred []corev1.WeightedPodAffinityTerm
	}{
		{"podAffinity", podAffinityRequired(a.PodAffinity), podAffinityPreferred(a.PodAffinity)},
		{"podAntiAffinity", podAntiAffinityRequired(a.PodAntiAffinity), podAntiAffinityPreferred(a.PodAntiAffinity)},
	} {
		p := fldPath.Child(pa.name)
		for i, t := range pa.required {
			allErrs = append(allErrs, validatePodAffinityTerm(t, p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
		}
		for i, t := range pa.preferred {
			tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			if t.Weight <= 0 || t.Weight > 100 {
				allErrs = append(allErrs, field.Invalid(tp.Child("weight"), t.Weight, "must be in the range 1-100"))
			}
			allErrs = append(allErrs, validatePodAffinityTerm(t.PodAffinityTerm, tp.Child("podAffinityTerm"))...)
		}
	}
	return allErrs
}

func podAffinityRequired(a *corev1.PodAffinity) []corev1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAffinityPreferred(a *corev1.PodAffinity) []corev1.WeightedPodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.PreferredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityRequired(a *corev1.PodAntiAffinity) []corev1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityPreferred(a *corev1.PodAntiAffinity) []corev1.WeightedPodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.PreferredDuringSchedulingIgnoredDuringExecution
}

func validatePodAffinityTerm(t corev1.PodAffinityTerm, fldPath *field.Path) field.ErrorList {
	allErrs := validateLabelSelector(t.LabelSelector, fldPath.Child("labelSelector"))
	allErrs = append(allErrs, validateLabelSelector(t.NamespaceSelector, fldPath.Child("namespaceSelector"))...)
	for _, ns := range t.Namespaces {
		allErrs = append(allErrs, validateName(apivalidation.ValidateNamespaceName, ns, fldPath.Child("namespace"))...)
	}
	for i, k := range t.MatchLabelKeys {
		allErrs = append(allErrs, metavalidation.ValidateLabelName(k, fldPath.Child("matchLabelKeys").Index(i))...)
	}
	for i, k := range t.MismatchLabelKeys {
		allErrs = append(allErrs, metavalidation.ValidateLabelName(k, fldPath.Child("mismatchLabelKeys").Index(i))...)
	}
	if t.TopologyKey == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("topologyKey"), "can not be empty"))
	}
	return append(allErrs, metavalidation.ValidateLabelName(t.TopologyKey, fldPath.Child("topologyKey"))...)
}

// validateNodeSelector checks a NodeSelector (node affinity, PV node
// affinity).
func validateNodeSelector(ns *corev1.NodeSelector, allowInvalidValues bool, fldPath *field.Path) field.ErrorList {
	termsPath := fldPath.Child("nodeSelectorTerms")
	if len(ns.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(termsPath, "must have at least one node selector term")}
	}
	var allErrs field.ErrorList
	for i, t := range ns.NodeSelectorTerms {
		allErrs = append(allErrs, validateNodeSelectorTerm(t, allowInvalidValues, termsPath.Index(i))...)
	}
	return allErrs
}

func validateNodeSelectorTerm(term corev1.NodeSelectorTerm, allowInvalidValues bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for j, r := range term.MatchExpressions {
		p := fldPath.Child("matchExpressions").Index(j)
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) == 0 {
				allErrs = append(allErrs, field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				allErrs = append(allErrs, field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(r.Values) != 1 {
				allErrs = append(allErrs, field.Required(p.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
			}
		default:
			allErrs = append(allErrs, field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator"))
		}
		allErrs = append(allErrs, metavalidation.ValidateLabelName(r.Key, p.Child("key"))...)
		if !allowInvalidValues {
			for k, v := range r.Values {
				for _, msg := range validation.IsValidLabelValue(v) {
					allErrs = append(allErrs, field.Invalid(p.Child("values").Index(k), v, msg))
				}
			}
		}
	}
	for j, r := range term.MatchFields {
		p := fldPath.Child("matchFields").Index(j)
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) != 1 {
				allErrs = append(allErrs, field.Required(p.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
			}
		default:
			allErrs = append(allErrs, field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator"))
		}
		if r.Key != metav1.ObjectNameField {
			allErrs = append(allErrs, field.Invalid(p.Child("key"), r.Key, "not a valid field selector key"))
		} else {
			for k, v := range r.Values {
				allErrs = append(allErrs, validateName(apivalidation.NameIsDNSSubdomain, v, p.Child("values").Index(k))...)
			}
		}
	}
	return allErrs
}

func validatePodDNSConfig(c *corev1.PodDNSConfig, policy corev1.DNSPolicy, fldPath *field.Path) field.ErrorList {
	if policy == corev1.DNSNone {
		if c == nil {
			return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must provide `dnsConfig` when `dnsPolicy` is %s", corev1.DNSNone))}
		}
		if len(c.Nameservers) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when `dnsPolicy` is %s", corev1.DNSNone))}
		}
	}
	if c == nil {
		return nil
	}
	var allErrs field.ErrorList
	if len(c.Nameservers) > 3 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nameservers"), c.Nameservers, "must not have more than 3 nameservers"))
	}
	for i, ns := range c.Nameservers {
		allErrs = append(allErrs, validation.IsValidIP(fldPath.Child("nameservers").Index(i), ns)...)
	}
	if len(c.Searches) > 32 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), c.Searches, "must not have more than 32 search paths"))
	}
	if len(strings.Join(c.Searches, " ")) > 2048 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), c.Searches, "must not have more than 2048 characters (including spaces) in the search list"))
	}
	for i, s := range c.Searches {
		// Relaxed DNS search validation (GA): "." and underscores are allowed.
		if s == "." {
			continue
		}
		s = strings.TrimSuffix(s, ".")
		for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(s) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("searches").Index(i), s, msg))
		}
	}
	for i, o := range c.Options {
		if o.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("options").Index(i), "must not be empty"))
		}
	}
	return allErrs
}

func validateTopologySpreadConstraints(cs []corev1.TopologySpreadConstraint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range cs {
		p := fldPath.Index(i)
		if c.MaxSkew <= 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, isNotPositiveErrorMsg))
		}
		if c.TopologyKey == "" {
			allErrs = append(allErrs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		switch c.WhenUnsatisfiable {
		case corev1.DoNotSchedule, corev1.ScheduleAnyway:
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}))
		}
		for _, rest := range cs[i+1:] {
			if rest.TopologyKey == c.TopologyKey && rest.WhenUnsatisfiable == c.WhenUnsatisfiable {
				allErrs = append(allErrs, field.Duplicate(p.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("minDomains"), c.MinDomains, isNotPositiveErrorMsg))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				allErrs = append(allErrs, field.Invalid(p.Child("minDomains"), c.MinDomains, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		for _, pol := range []struct {
			name  string
			value *corev1.NodeInclusionPolicy
		}{{"nodeAffinityPolicy", c.NodeAffinityPolicy}, {"nodeTaintsPolicy", c.NodeTaintsPolicy}} {
			if pol.value != nil && *pol.value != corev1.NodeInclusionPolicyHonor && *pol.value != corev1.NodeInclusionPolicyIgnore {
				allErrs = append(allErrs, field.NotSupported(p.Child(pol.name), *pol.value, []corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore}))
			}
		}
		for j, k := range c.MatchLabelKeys {
			allErrs = append(allErrs, metavalidation.ValidateLabelName(k, p.Child("matchLabelKeys").Index(j))...)
		}
		allErrs = append(allErrs, validateLabelSelector(c.LabelSelector, p.Child("labelSelector"))...)
	}
	return allErrs
}
