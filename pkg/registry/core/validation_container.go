package core

// Validation of containers (regular, init and ephemeral) inside a PodSpec.

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// containerContext carries what container validation needs from the pod.
type containerContext struct {
	volumes          map[string]corev1.VolumeSource
	claimNames       map[string]bool
	gracePeriod      *int64
	hostUsers        bool
	podRestartPolicy corev1.RestartPolicy
}

func validateContainers(containers []corev1.Container, fldPath *field.Path, cc containerContext) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	names := map[string]bool{}
	for i := range containers {
		c := &containers[i]
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(c, p, cc)...)
		if names[c.Name] {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), c.Name))
		}
		names[c.Name] = true
		if c.Lifecycle != nil {
			allErrs = append(allErrs, validateLifecycle(c.Lifecycle, cc.gracePeriod, p.Child("lifecycle"))...)
		}
		allErrs = append(allErrs, validateProbes(c, p, cc.gracePeriod)...)
		// With container restart rules (beta, on by default) regular
		// containers may override the pod's restart policy.
		if c.RestartPolicy != nil {
			allErrs = append(allErrs, validateEnum(p.Child("restartPolicy"), *c.RestartPolicy,
				corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyOnFailure, corev1.ContainerRestartPolicyNever)...)
		}
		allErrs = append(allErrs, validateRestartPolicyRules(c, p)...)
	}
	// Host ports may not collide across the pod's containers.
	allErrs = append(allErrs, checkHostPortConflicts(containers, fldPath)...)
	return allErrs
}

func validateInitContainers(inits, regular []corev1.Container, fldPath *field.Path, cc containerContext) field.ErrorList {
	var allErrs field.ErrorList
	names := map[string]bool{}
	for _, c := range regular {
		names[c.Name] = true
	}
	for i := range inits {
		c := &inits[i]
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(c, p, cc)...)
		restartAlways := false
		if c.RestartPolicy != nil {
			allErrs = append(allErrs, validateEnum(p.Child("restartPolicy"), *c.RestartPolicy,
				corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyOnFailure, corev1.ContainerRestartPolicyNever)...)
			restartAlways = *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
		allErrs = append(allErrs, validateRestartPolicyRules(c, p)...)
		// Names are unique across regular and init containers.
		if names[c.Name] {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), c.Name))
		} else if c.Name != "" {
			names[c.Name] = true
		}
		// Init containers run one at a time, so host ports only need to be
		// unique within each of them.
		allErrs = append(allErrs, checkHostPortConflicts([]corev1.Container{*c}, fldPath)...)
		if restartAlways {
			// Sidecar containers (restartPolicy: Always) keep running, so
			// they may have probes and lifecycle hooks.
			if c.Lifecycle != nil {
				allErrs = append(allErrs, validateLifecycle(c.Lifecycle, cc.gracePeriod, p.Child("lifecycle"))...)
			}
			allErrs = append(allErrs, validateProbes(c, p, cc.gracePeriod)...)
		} else {
			for _, f := range []struct {
				name string
				set  bool
			}{{"lifecycle", c.Lifecycle != nil}, {"livenessProbe", c.LivenessProbe != nil}, {"readinessProbe", c.ReadinessProbe != nil}, {"startupProbe", c.StartupProbe != nil}} {
				if f.set {
					allErrs = append(allErrs, field.Forbidden(p.Child(f.name), "may not be set for init containers without restartPolicy=Always"))
				}
			}
		}
	}
	return allErrs
}

// allowedEphemeralContainerFields are the Container fields an ephemeral
// (debug) container may set: no ports, probes, lifecycle or resources.
func allowedEphemeralContainerField(name string) bool {
	switch name {
	case "Ports", "Resources", "ResizePolicy", "LivenessProbe", "ReadinessProbe", "StartupProbe", "Lifecycle", "RestartPolicy", "RestartPolicyRules":
		return false
	}
	return true
}

func validateEphemeralContainers(ecs []corev1.EphemeralContainer, regular, inits []corev1.Container, fldPath *field.Path, cc containerContext) field.ErrorList {
	var allErrs field.ErrorList
	others, all := map[string]bool{}, map[string]bool{}
	for _, c := range append(append([]corev1.Container{}, regular...), inits...) {
		others[c.Name] = true
		all[c.Name] = true
	}
	for i := range ecs {
		ec := &ecs[i]
		p := fldPath.Index(i)
		c := (*corev1.Container)(&ec.EphemeralContainerCommon)
		allErrs = append(allErrs, validateContainerCommon(c, p, cc)...)
		if len(c.Image) != len(strings.TrimSpace(c.Image)) {
			allErrs = append(allErrs, field.Invalid(p.Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
		if all[ec.Name] {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), ec.Name))
		}
		all[ec.Name] = true
		if ec.TargetContainerName != "" && !others[ec.TargetContainerName] {
			allErrs = append(allErrs, field.NotFound(p.Child("targetContainerName"), ec.TargetContainerName))
		}
		v := reflect.ValueOf(ec.EphemeralContainerCommon)
		for j := 0; j < v.NumField(); j++ {
			name := v.Type().Field(j).Name
			if !allowedEphemeralContainerField(name) && !v.Field(j).IsZero() {
				r, n := utf8.DecodeRuneInString(name)
				allErrs = append(allErrs, field.Forbidden(p.Child(string(unicode.ToLower(r))+name[n:]), "cannot be set for an Ephemeral Container"))
			}
		}
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				allErrs = append(allErrs, field.Forbidden(p.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if vm.SubPathExpr != "" {
				allErrs = append(allErrs, field.Forbidden(p.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return allErrs
}

// validateContainerCommon applies the rules shared by all container kinds.
func validateContainerCommon(c *corev1.Container, p *field.Path, cc containerContext) field.ErrorList {
	var allErrs field.ErrorList
	if c.Name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), ""))
	} else {
		allErrs = append(allErrs, validateDNS1123Label(c.Name, p.Child("name"))...)
	}
	// Templates tolerate whitespace-only images (see validatePodMetadataAndSpec).
	if c.Image == "" {
		allErrs = append(allErrs, field.Required(p.Child("image"), ""))
	}
	allErrs = append(allErrs, validateEnum(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy,
		corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError)...)
	allErrs = append(allErrs, validateContainerPorts(c.Ports, p.Child("ports"))...)
	allErrs = append(allErrs, validateEnv(c.Env, p.Child("env"))...)
	allErrs = append(allErrs, validateEnvFrom(c.EnvFrom, p.Child("envFrom"))...)
	allErrs = append(allErrs, validateVolumeMounts(c, cc.volumes, p.Child("volumeMounts"))...)
	allErrs = append(allErrs, validateVolumeDevices(c, cc.volumes, p.Child("volumeDevices"))...)
	allErrs = append(allErrs, validateEnum(p.Child("imagePullPolicy"), c.ImagePullPolicy, corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)...)
	allErrs = append(allErrs, validateResourceRequirements(&c.Resources, validateContainerResourceName, cc.claimNames, p.Child("resources"))...)
	allErrs = append(allErrs, validateResizePolicy(c.ResizePolicy, cc.podRestartPolicy, p.Child("resizePolicy"))...)
	allErrs = append(allErrs, validateSecurityContext(c.SecurityContext, cc.hostUsers, p.Child("securityContext"))...)
	return allErrs
}

func validateContainerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := map[string]bool{}
	for i, port := range ports {
		p := fldPath.Index(i)
		if port.Name != "" {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, msg := range msgs {
					allErrs = append(allErrs, field.Invalid(p.Child("name"), port.Name, msg))
				}
			} else if names[port.Name] {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), port.Name))
			} else {
				names[port.Name] = true
			}
		}
		if port.ContainerPort == 0 {
			allErrs = append(allErrs, field.Required(p.Child("containerPort"), ""))
		} else {
			allErrs = append(allErrs, validatePortNumber(port.ContainerPort, p.Child("containerPort"))...)
		}
		if port.HostPort != 0 {
			allErrs = append(allErrs, validatePortNumber(port.HostPort, p.Child("hostPort"))...)
		}
		allErrs = append(allErrs, validateProtocol(port.Protocol, p.Child("protocol"))...)
	}
	return allErrs
}

func validatePortNumber(port int32, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsValidPortNum(int(port)) {
		allErrs = append(allErrs, field.Invalid(fldPath, port, msg))
	}
	return allErrs
}

func validateProtocol(proto corev1.Protocol, fldPath *field.Path) field.ErrorList {
	return validateEnum(fldPath, proto, corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP)
}

// validatePortNumOrName checks an IntOrString port (probes, service target
// ports): a number in 1-65535 or an IANA-style port name.
func validatePortNumOrName(port intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, port.StrVal, msg))
		}
	default:
		allErrs = append(allErrs, field.InternalError(fldPath, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return allErrs
}

func checkHostPortConflicts(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for ci, c := range containers {
		for pi, port := range c.Ports {
			if port.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
			if seen[key] {
				allErrs = append(allErrs, field.Duplicate(fldPath.Index(ci).Child("ports").Index(pi).Child("hostPort"), key))
			}
			seen[key] = true
		}
	}
	return allErrs
}

func validateEnv(vars []corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range vars {
		p := fldPath.Index(i)
		if ev.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			// Relaxed environment variable names (GA): any printable ASCII
			// except '='.
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Name) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), ev.Name, msg))
			}
		}
		allErrs = append(allErrs, validateEnvVarValueFrom(ev, p.Child("valueFrom"))...)
	}
	return allErrs
}

func validateEnvVarValueFrom(ev corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	vf := ev.ValueFrom
	if vf == nil {
		return nil
	}
	var allErrs field.ErrorList
	n := 0
	if vf.FieldRef != nil {
		n++
		allErrs = append(allErrs, validateObjectFieldSelector(vf.FieldRef, envFieldPaths(), fldPath.Child("fieldRef"))...)
	}
	if vf.ResourceFieldRef != nil {
		n++
		allErrs = append(allErrs, validateResourceFieldSelector(vf.ResourceFieldRef, false, fldPath.Child("resourceFieldRef"))...)
	}
	if vf.ConfigMapKeyRef != nil {
		n++
		allErrs = append(allErrs, validateKeySelector(vf.ConfigMapKeyRef.Name, vf.ConfigMapKeyRef.Key, fldPath.Child("configMapKeyRef"))...)
	}
	if vf.SecretKeyRef != nil {
		n++
		allErrs = append(allErrs, validateKeySelector(vf.SecretKeyRef.Name, vf.SecretKeyRef.Key, fldPath.Child("secretKeyRef"))...)
	}
	if vf.FileKeyRef != nil {
		n++
		p := fldPath.Child("fileKeyRef")
		if vf.FileKeyRef.VolumeName == "" {
			allErrs = append(allErrs, field.Required(p.Child("volumeName"), ""))
		}
		if vf.FileKeyRef.Path == "" {
			allErrs = append(allErrs, field.Required(p.Child("path"), ""))
		}
		if vf.FileKeyRef.Key == "" {
			allErrs = append(allErrs, field.Required(p.Child("key"), ""))
		}
	}
	switch {
	case n == 0:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
	case ev.Value != "":
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not be specified when `value` is not empty"))
	case n > 1:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
	}
	return allErrs
}

// envFieldPaths are the downward API fields an environment variable can
// read (besides single labels and annotations).
func envFieldPaths() []string {
	return []string{"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
		"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"}
}

// volumeFieldPaths are the downward API fields a downwardAPI volume file
// can hold.
func volumeFieldPaths() []string {
	return []string{"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"}
}

func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, valid []string, fldPath *field.Path) field.ErrorList {
	if fs.APIVersion == "" {
		return field.ErrorList{field.Required(fldPath.Child("apiVersion"), "")}
	}
	if fs.FieldPath == "" {
		return field.ErrorList{field.Required(fldPath.Child("fieldPath"), "")}
	}
	if fs.APIVersion != "v1" {
		return field.ErrorList{field.Invalid(fldPath.Child("fieldPath"), fs.FieldPath, fmt.Sprintf("error converting fieldPath: unsupported pod version: %s", fs.APIVersion))}
	}
	// metadata.labels['key'] and metadata.annotations['key'] select one entry.
	if i := strings.Index(fs.FieldPath, "['"); i > 0 && strings.HasSuffix(fs.FieldPath, "']") {
		path, subscript := fs.FieldPath[:i], fs.FieldPath[i+2:len(fs.FieldPath)-2]
		switch path {
		case "metadata.annotations":
			return ValidateQualifiedName(strings.ToLower(subscript), fldPath)
		case "metadata.labels":
			return ValidateQualifiedName(subscript, fldPath)
		}
		return field.ErrorList{field.Invalid(fldPath, path, "does not support subscript")}
	}
	if !slices.Contains(valid, fs.FieldPath) {
		return field.ErrorList{field.NotSupported(fldPath.Child("fieldPath"), fs.FieldPath, valid)}
	}
	return nil
}

func validateResourceFieldSelector(fs *corev1.ResourceFieldSelector, inVolume bool, fldPath *field.Path) field.ErrorList {
	valid := []string{"limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"}
	var allErrs field.ErrorList
	switch {
	case inVolume && fs.ContainerName == "":
		allErrs = append(allErrs, field.Required(fldPath.Child("containerName"), ""))
	case fs.Resource == "":
		allErrs = append(allErrs, field.Required(fldPath.Child("resource"), ""))
	default:
		ok := strings.HasPrefix(fs.Resource, "requests.hugepages-") || strings.HasPrefix(fs.Resource, "limits.hugepages-")
		for _, v := range valid {
			ok = ok || fs.Resource == v
		}
		if !ok {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("resource"), fs.Resource, valid))
		}
	}
	if !fs.Divisor.IsZero() {
		d := fs.Divisor.String()
		switch {
		case strings.HasSuffix(fs.Resource, ".cpu"):
			if d != "1m" && d != "1" {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), fs.Resource, "only divisor's values 1m and 1 are supported with the cpu resource"))
			}
		case fs.Resource != "":
			if !isByteDivisor(fs.Divisor) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("divisor"), fs.Resource, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource"))
			}
		}
	}
	return allErrs
}

func isByteDivisor(q resource.Quantity) bool {
	switch q.String() {
	case "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei":
		return true
	}
	return false
}

// validateKeySelector checks a configMapKeyRef or secretKeyRef.
func validateKeySelector(name, key string, fldPath *field.Path) field.ErrorList {
	allErrs := validateName(apivalidation.NameIsDNSSubdomain, name, fldPath.Child("name"))
	if key == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	} else {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), key, msg))
		}
	}
	return allErrs
}

func validateEnvFrom(sources []corev1.EnvFromSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, s := range sources {
		p := fldPath.Index(i)
		if s.Prefix != "" {
			for _, msg := range validation.IsRelaxedEnvVarName(s.Prefix) {
				allErrs = append(allErrs, field.Invalid(p.Child("prefix"), s.Prefix, msg))
			}
		}
		n := 0
		if s.ConfigMapRef != nil {
			n++
			allErrs = append(allErrs, validateEnvSourceName(s.ConfigMapRef.Name, p.Child("configMapRef"))...)
		}
		if s.SecretRef != nil {
			n++
			allErrs = append(allErrs, validateEnvSourceName(s.SecretRef.Name, p.Child("secretRef"))...)
		}
		// Upstream reports these on the list, not on the item.
		if n == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `configMapRef` or `secretRef`"))
		} else if n > 1 {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
		}
	}
	return allErrs
}

func validateEnvSourceName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath.Child("name"), "")}
	}
	var allErrs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, true) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), name, msg))
	}
	return allErrs
}

func validateVolumeMounts(c *corev1.Container, volumes map[string]corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	devices := map[string]string{}
	for _, d := range c.VolumeDevices {
		devices[d.Name] = d.DevicePath
	}
	mountPaths := map[string]bool{}
	for i, m := range c.VolumeMounts {
		p := fldPath.Index(i)
		if m.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		}
		src, ok := volumes[m.Name]
		if !ok {
			allErrs = append(allErrs, field.NotFound(p.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			allErrs = append(allErrs, field.Required(p.Child("mountPath"), ""))
		}
		if mountPaths[m.MountPath] {
			allErrs = append(allErrs, field.Invalid(p.Child("mountPath"), m.MountPath, "must be unique"))
		}
		mountPaths[m.MountPath] = true
		if _, ok := devices[m.Name]; ok {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), m.Name, "must not already exist in volumeDevices"))
		}
		for _, dp := range devices {
			if dp == m.MountPath {
				allErrs = append(allErrs, field.Invalid(p.Child("mountPath"), m.MountPath, "must not already exist as a path in volumeDevices"))
			}
		}
		if ok && src.Image != nil {
			if m.SubPath != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("subPath"), m.SubPath, "not allowed in image volume sources"))
			}
			if m.SubPathExpr != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("subPathExpr"), m.SubPathExpr, "not allowed in image volume sources"))
			}
		}
		// Upstream reports subPath errors on the list path (no index).
		if m.SubPath != "" {
			allErrs = append(allErrs, validateLocalDescendingPath(m.SubPath, fldPath.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			allErrs = append(allErrs, validateLocalDescendingPath(m.SubPathExpr, fldPath.Child("subPathExpr"))...)
		}
		if mp := m.MountPropagation; mp != nil {
			allErrs = append(allErrs, validateEnum(fldPath.Child("mountPropagation"), *mp,
				corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone)...)
			privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
			if *mp == corev1.MountPropagationBidirectional && !privileged {
				allErrs = append(allErrs, field.Forbidden(fldPath.Child("mountPropagation"), "Bidirectional mount propagation is available only to privileged containers"))
			}
		}
		if rro := m.RecursiveReadOnly; rro != nil {
			rp := fldPath.Child("recursiveReadOnly")
			switch *rro {
			case corev1.RecursiveReadOnlyDisabled:
			case corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible:
				if !m.ReadOnly {
					allErrs = append(allErrs, field.Forbidden(rp, "may only be specified when readOnly is true"))
				}
				if m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone {
					allErrs = append(allErrs, field.Forbidden(rp, "may only be specified when mountPropagation is None or not specified"))
				}
			default:
				allErrs = append(allErrs, field.NotSupported(rp, *rro, []corev1.RecursiveReadOnlyMode{corev1.RecursiveReadOnlyDisabled, corev1.RecursiveReadOnlyIfPossible, corev1.RecursiveReadOnlyEnabled}))
			}
		}
	}
	return allErrs
}

func validateVolumeDevices(c *corev1.Container, volumes map[string]corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	names, paths := map[string]bool{}, map[string]bool{}
	for i, d := range c.VolumeDevices {
		p := fldPath.Index(i)
		if d.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		}
		if names[d.Name] {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), d.Name, "must be unique"))
		}
		src, ok := volumes[d.Name]
		switch {
		case !ok:
			allErrs = append(allErrs, field.NotFound(p.Child("name"), d.Name))
		case src.PersistentVolumeClaim == nil && src.Ephemeral == nil:
			allErrs = append(allErrs, field.Invalid(p.Child("name"), d.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if d.DevicePath == "" {
			allErrs = append(allErrs, field.Required(p.Child("devicePath"), ""))
		}
		if paths[d.DevicePath] {
			allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), d.DevicePath, "must be unique"))
		}
		if d.DevicePath != "" && hasBacksteps(d.DevicePath) {
			allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), d.DevicePath, "can not contain backsteps ('..')"))
		} else {
			paths[d.DevicePath] = true
		}
		if _, ok := mounts[d.Name]; ok {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), d.Name, "must not already exist in volumeMounts"))
		}
		for _, mp := range mounts {
			if mp == d.DevicePath {
				allErrs = append(allErrs, field.Invalid(p.Child("devicePath"), d.DevicePath, "must not already exist as a path in volumeMounts"))
			}
		}
		if d.Name != "" {
			names[d.Name] = true
		}
	}
	return allErrs
}

func validateResizePolicy(policies []corev1.ContainerResizePolicy, podRestart corev1.RestartPolicy, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[corev1.ResourceName]bool{}
	for i, rp := range policies {
		if seen[rp.ResourceName] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), rp.ResourceName))
		}
		seen[rp.ResourceName] = true
		allErrs = append(allErrs, validateEnum(fldPath, rp.ResourceName, corev1.ResourceCPU, corev1.ResourceMemory)...)
		allErrs = append(allErrs, validateEnum(fldPath, rp.RestartPolicy, corev1.NotRequired, corev1.RestartContainer)...)
		if podRestart == corev1.RestartPolicyNever && rp.RestartPolicy != corev1.NotRequired {
			allErrs = append(allErrs, field.Invalid(fldPath, rp.RestartPolicy, "must be 'NotRequired' when `restartPolicy` is 'Never'"))
		}
	}
	return allErrs
}

// validateRestartPolicyRules: rules need an explicit container restart
// policy. Simplified: the content of each rule is only lightly checked.
func validateRestartPolicyRules(c *corev1.Container, p *field.Path) field.ErrorList {
	if len(c.RestartPolicyRules) == 0 {
		return nil
	}
	var allErrs field.ErrorList
	if c.RestartPolicy == nil {
		allErrs = append(allErrs, field.Required(p.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
	}
	if len(c.RestartPolicyRules) > 20 {
		allErrs = append(allErrs, field.TooMany(p.Child("restartPolicyRules"), len(c.RestartPolicyRules), 20))
	}
	for i, r := range c.RestartPolicyRules {
		allErrs = append(allErrs, validateEnum(p.Child("restartPolicyRules").Index(i).Child("action"), r.Action, corev1.ContainerRestartRuleActionRestart)...)
		if r.ExitCodes == nil {
			allErrs = append(allErrs, field.Required(p.Child("restartPolicyRules").Index(i).Child("exitCodes"), "must be specified"))
		}
	}
	return allErrs
}

func validateProbes(c *corev1.Container, p *field.Path, gracePeriod *int64) field.ErrorList {
	var allErrs field.ErrorList
	if c.LivenessProbe != nil {
		pp := p.Child("livenessProbe")
		allErrs = append(allErrs, validateProbe(c.LivenessProbe, gracePeriod, pp)...)
		if c.LivenessProbe.SuccessThreshold != 1 {
			allErrs = append(allErrs, field.Invalid(pp.Child("successThreshold"), c.LivenessProbe.SuccessThreshold, "must be 1"))
		}
	}
	if c.ReadinessProbe != nil {
		pp := p.Child("readinessProbe")
		allErrs = append(allErrs, validateProbe(c.ReadinessProbe, gracePeriod, pp)...)
		if c.ReadinessProbe.TerminationGracePeriodSeconds != nil {
			allErrs = append(allErrs, field.Invalid(pp.Child("terminationGracePeriodSeconds"), c.ReadinessProbe.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
		}
	}
	if c.StartupProbe != nil {
		pp := p.Child("startupProbe")
		allErrs = append(allErrs, validateProbe(c.StartupProbe, gracePeriod, pp)...)
		if c.StartupProbe.SuccessThreshold != 1 {
			allErrs = append(allErrs, field.Invalid(pp.Child("successThreshold"), c.StartupProbe.SuccessThreshold, "must be 1"))
		}
	}
	return allErrs
}

func validateProbe(pr *corev1.Probe, gracePeriod *int64, p *field.Path) field.ErrorList {
	h := pr.ProbeHandler
	allErrs := validateHandler(handler{exec: h.Exec, httpGet: h.HTTPGet, tcpSocket: h.TCPSocket, grpc: h.GRPC}, gracePeriod, p)
	for _, f := range []struct {
		name string
		v    int32
	}{{"initialDelaySeconds", pr.InitialDelaySeconds}, {"timeoutSeconds", pr.TimeoutSeconds}, {"periodSeconds", pr.PeriodSeconds},
		{"successThreshold", pr.SuccessThreshold}, {"failureThreshold", pr.FailureThreshold}} {
		allErrs = append(allErrs, validateNonnegative(int64(f.v), p.Child(f.name))...)
	}
	if t := pr.TerminationGracePeriodSeconds; t != nil && *t <= 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *t, "must be greater than 0"))
	}
	return allErrs
}

func validateLifecycle(l *corev1.Lifecycle, gracePeriod *int64, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, hk := range []struct {
		name string
		h    *corev1.LifecycleHandler
	}{{"postStart", l.PostStart}, {"preStop", l.PreStop}} {
		if hk.h != nil {
			allErrs = append(allErrs, validateHandler(handler{exec: hk.h.Exec, httpGet: hk.h.HTTPGet, tcpSocket: hk.h.TCPSocket, sleep: hk.h.Sleep}, gracePeriod, p.Child(hk.name))...)
		}
	}
	// Simplified: stopSignal (container lifecycle stop signals) is not
	// checked against the pod's OS.
	return allErrs
}

// handler is the union of probe and lifecycle handler actions.
type handler struct {
	exec      *corev1.ExecAction
	httpGet   *corev1.HTTPGetAction
	tcpSocket *corev1.TCPSocketAction
	grpc      *corev1.GRPCAction
	sleep     *corev1.SleepAction
}

// validateHandler: exactly one action, each valid.
func validateHandler(h handler, gracePeriod *int64, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	n := 0
	count := func(name string) bool {
		if n > 0 {
			allErrs = append(allErrs, field.Forbidden(p.Child(name), "may not specify more than 1 handler type"))
			return false
		}
		n++
		return true
	}
	if h.exec != nil && count("exec") && len(h.exec.Command) == 0 {
		allErrs = append(allErrs, field.Required(p.Child("exec", "command"), ""))
	}
	if h.httpGet != nil && count("httpGet") {
		hp := p.Child("httpGet")
		if h.httpGet.Path == "" {
			allErrs = append(allErrs, field.Required(hp.Child("path"), ""))
		}
		allErrs = append(allErrs, validatePortNumOrName(h.httpGet.Port, hp.Child("port"))...)
		if h.httpGet.Scheme != corev1.URISchemeHTTP && h.httpGet.Scheme != corev1.URISchemeHTTPS {
			allErrs = append(allErrs, field.NotSupported(hp.Child("scheme"), h.httpGet.Scheme, []corev1.URIScheme{corev1.URISchemeHTTP, corev1.URISchemeHTTPS}))
		}
		for _, hdr := range h.httpGet.HTTPHeaders {
			for _, msg := range validation.IsHTTPHeaderName(hdr.Name) {
				allErrs = append(allErrs, field.Invalid(hp.Child("httpHeaders"), hdr.Name, msg))
			}
		}
	}
	if h.tcpSocket != nil && count("tcpSocket") {
		allErrs = append(allErrs, validatePortNumOrName(h.tcpSocket.Port, p.Child("tcpSocket", "port"))...)
	}
	if h.grpc != nil && count("grpc") {
		allErrs = append(allErrs, validatePortNumOrName(intstr.FromInt32(h.grpc.Port), p.Child("grpc", "port"))...)
	}
	if h.sleep != nil && count("sleep") {
		// A zero-second sleep is allowed (PodLifecycleSleepActionAllowZero).
		if gracePeriod != nil && (h.sleep.Seconds < 0 || h.sleep.Seconds > *gracePeriod) {
			allErrs = append(allErrs, field.Invalid(p.Child("sleep"), h.sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *gracePeriod)))
		}
	}
	if n == 0 {
		allErrs = append(allErrs, field.Required(p, "must specify a handler type"))
	}
	return allErrs
}

// validateSecurityContext checks a container's securityContext.
func validateSecurityContext(sc *corev1.SecurityContext, hostUsers bool, p *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var allErrs field.ErrorList
	// Privileged containers are allowed (as with kube-apiserver
	// --allow-privileged=true, which every common installer sets).
	if sc.RunAsUser != nil {
		allErrs = append(allErrs, validateID(validation.IsValidUserID, *sc.RunAsUser, p.Child("runAsUser"))...)
	}
	if sc.RunAsGroup != nil {
		allErrs = append(allErrs, validateID(validation.IsValidGroupID, *sc.RunAsGroup, p.Child("runAsGroup"))...)
	}
	if sc.ProcMount != nil {
		allErrs = append(allErrs, validateEnum(p.Child("procMount"), *sc.ProcMount, corev1.DefaultProcMount, corev1.UnmaskedProcMount)...)
		if hostUsers && *sc.ProcMount == corev1.UnmaskedProcMount {
			allErrs = append(allErrs, field.Invalid(p.Child("procMount"), sc.ProcMount, "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	allErrs = append(allErrs, validateSeccompProfile(sc.SeccompProfile, p.Child("seccompProfile"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			allErrs = append(allErrs, field.Invalid(p, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if string(c) == "CAP_SYS_ADMIN" {
					allErrs = append(allErrs, field.Invalid(p, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	allErrs = append(allErrs, validateAppArmorProfile(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
	return allErrs
}
