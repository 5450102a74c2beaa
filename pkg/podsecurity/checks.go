package podsecurity

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Violation is one failed check: upstream's reason and detail.
type Violation struct {
	Reason, Detail string
}

// checkFn evaluates one check at a minor version; nil is allowed.
type checkFn func(minor int, meta *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation

type check struct {
	id    string
	level Level
	// min is the first minor version the check applies at.
	min int
	fn  checkFn
	// overrides: the baseline check this restricted check replaces, from
	// version overridesFrom on.
	overrides     string
	overridesFrom int
}

// checks in upstream's evaluation order: baseline IDs sorted, then
// restricted IDs sorted.
var checks = []check{
	{id: "appArmorProfile", level: Baseline, fn: appArmorProfile},
	{id: "capabilities_baseline", level: Baseline, fn: capabilitiesBaseline},
	{id: "hostNamespaces", level: Baseline, fn: hostNamespaces},
	{id: "hostPathVolumes", level: Baseline, fn: hostPathVolumes},
	{id: "hostPorts", level: Baseline, fn: hostPorts},
	{id: "hostProbesAndHostLifecycle", level: Baseline, min: 34, fn: hostProbesAndHostLifecycle},
	{id: "privileged", level: Baseline, fn: privileged},
	{id: "procMount", level: Baseline, fn: procMount},
	{id: "seLinuxOptions", level: Baseline, fn: seLinuxOptions},
	{id: "seccompProfile_baseline", level: Baseline, fn: seccompBaseline},
	{id: "sysctls", level: Baseline, fn: sysctls},
	{id: "windowsHostProcess", level: Baseline, fn: windowsHostProcess},
	{id: "allowPrivilegeEscalation", level: Restricted, min: 8, fn: allowPrivilegeEscalation},
	{id: "capabilities_restricted", level: Restricted, min: 22, fn: capabilitiesRestricted, overrides: "capabilities_baseline", overridesFrom: 22},
	{id: "restrictedVolumes", level: Restricted, fn: restrictedVolumes, overrides: "hostPathVolumes"},
	{id: "runAsNonRoot", level: Restricted, fn: runAsNonRoot},
	{id: "runAsUser", level: Restricted, min: 23, fn: runAsUser},
	{id: "seccompProfile_restricted", level: Restricted, min: 19, fn: seccompRestricted, overrides: "seccompProfile_baseline", overridesFrom: 19},
}

// Evaluate is the violations of a pod against a level at a version, in
// upstream's order (none for privileged).
func Evaluate(lv LevelVersion, meta *metav1.ObjectMeta, spec *corev1.PodSpec) []Violation {
	if lv.Level == Privileged {
		return nil
	}
	if meta == nil {
		meta = &metav1.ObjectMeta{}
	}
	minor := lv.Version.minor()
	overridden := map[string]bool{}
	if lv.Level == Restricted {
		for _, c := range checks {
			if c.level == Restricted && c.overrides != "" && minor >= c.min && minor >= c.overridesFrom {
				overridden[c.overrides] = true
			}
		}
	}
	var out []Violation
	for _, c := range checks {
		if minor < c.min || overridden[c.id] || (c.level == Restricted && lv.Level != Restricted) {
			continue
		}
		if v := c.fn(minor, meta, spec); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// Reasons is upstream's ForbiddenReason: the reasons joined by ", ".
func Reasons(vs []Violation) string {
	r := make([]string, len(vs))
	for i, v := range vs {
		r[i] = v.Reason
	}
	return strings.Join(r, ", ")
}

// Details is upstream's ForbiddenDetail: "reason (detail), ...".
func Details(vs []Violation) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.Reason)
		if v.Detail != "" {
			b.WriteString(" (" + v.Detail + ")")
		}
	}
	return b.String()
}

// --- helpers -----------------------------------------------------------------

func visit(spec *corev1.PodSpec, f func(c *corev1.Container)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		f(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		f((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
}

func quoted(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return `"` + strings.Join(items, `", "`) + `"`
}

func plural(singular, plural string, n int) string {
	if n == 1 {
		return singular
	}
	return plural
}

// sortedSet collects distinct strings, listed sorted.
type sortedSet map[string]bool

func (s sortedSet) list() []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func containersPhrase(names []string) string {
	return plural("container", "containers", len(names)) + " " + quoted(names)
}

func isWindows(spec *corev1.PodSpec) bool { return spec.OS != nil && spec.OS.Name == corev1.Windows }

// --- baseline ----------------------------------------------------------------

func privileged(_ int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	visit(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"privileged", containersPhrase(bad) + " must not set securityContext.privileged=true"}
}

func hostNamespaces(_ int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var ns []string
	if spec.HostNetwork {
		ns = append(ns, "hostNetwork=true")
	}
	if spec.HostPID {
		ns = append(ns, "hostPID=true")
	}
	if spec.HostIPC {
		ns = append(ns, "hostIPC=true")
	}
	if len(ns) == 0 {
		return nil
	}
	return &Violation{"host namespaces", strings.Join(ns, ", ")}
}

func hostPorts(_ int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	ports := sortedSet{}
	visit(spec, func(c *corev1.Container) {
		found := false
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				found = true
				ports[strconv.Itoa(int(p.HostPort))] = true
			}
		}
		if found {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"hostPort", fmt.Sprintf("%s %s %s %s", containersPhrase(bad), plural("uses", "use", len(bad)),
		plural("hostPort", "hostPorts", len(ports)), strings.Join(ports.list(), ", "))}
}

func hostPathVolumes(_ int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			bad = append(bad, v.Name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"hostPath volumes", plural("volume", "volumes", len(bad)) + " " + quoted(bad)}
}

var baselineCapabilities = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

func capabilitiesBaseline(_ int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	caps := sortedSet{}
	visit(spec, func(c *corev1.Container) {
		if c.SecurityContext == nil || c.SecurityContext.Capabilities == nil {
			return
		}
		found := false
		for _, cp := range c.SecurityContext.Capabilities.Add {
			if !slices.Contains(baselineCapabilities, string(cp)) {
				found = true
				caps[string(cp)] = true
			}
		}
		if found {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"non-default capabilities", fmt.Sprintf("%s must not include %s in securityContext.capabilities.add",
		containersPhrase(bad), quoted(caps.list()))}
}

func procMount(_ int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	types := sortedSet{}
	visit(spec, func(c *corev1.Container) {
		if c.SecurityContext == nil || c.SecurityContext.ProcMount == nil {
			return
		}
		if pm := *c.SecurityContext.ProcMount; pm != corev1.DefaultProcMount {
			bad = append(bad, c.Name)
			types[string(pm)] = true
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"procMount", fmt.Sprintf("%s must not set securityContext.procMount to %s", containersPhrase(bad), quoted(types.list()))}
}

func seLinuxOptions(minor int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	allowed := []string{"", "container_t", "container_init_t", "container_kvm_t"}
	if minor >= 31 {
		allowed = append(allowed, "container_engine_t")
	}
	badTypes := sortedSet{}
	setUser, setRole := false, false
	valid := func(o *corev1.SELinuxOptions) bool {
		ok := true
		if !slices.Contains(allowed, o.Type) {
			ok = false
			badTypes[o.Type] = true
		}
		if o.User != "" {
			ok, setUser = false, true
		}
		if o.Role != "" {
			ok, setRole = false, true
		}
		return ok
	}
	var setters []string
	if sc := spec.SecurityContext; sc != nil && sc.SELinuxOptions != nil && !valid(sc.SELinuxOptions) {
		setters = append(setters, "pod")
	}
	var bad []string
	visit(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && sc.SELinuxOptions != nil && !valid(sc.SELinuxOptions) {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersPhrase(bad))
	}
	if len(setters) == 0 {
		return nil
	}
	var data []string
	if len(badTypes) > 0 {
		data = append(data, plural("type", "types", len(badTypes))+" "+quoted(badTypes.list()))
	}
	if setUser {
		data = append(data, "user may not be set")
	}
	if setRole {
		data = append(data, "role may not be set")
	}
	return &Violation{"seLinuxOptions", fmt.Sprintf("%s set forbidden securityContext.seLinuxOptions: %s",
		strings.Join(setters, " and "), strings.Join(data, "; "))}
}

const (
	seccompPodAnnotation             = "seccomp.security.alpha.kubernetes.io/pod"
	seccompContainerAnnotationPrefix = "container.seccomp.security.alpha.kubernetes.io/"
)

func validSeccomp(t corev1.SeccompProfileType) bool {
	return t == corev1.SeccompProfileTypeLocalhost || t == corev1.SeccompProfileTypeRuntimeDefault
}

func seccompBaseline(minor int, meta *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	if minor < 19 {
		validAnnotation := func(v string) bool {
			return v == corev1.SeccompProfileRuntimeDefault || v == corev1.DeprecatedSeccompProfileDockerDefault ||
				strings.HasPrefix(v, corev1.SeccompLocalhostProfileNamePrefix)
		}
		bad := sortedSet{}
		if v, ok := meta.Annotations[seccompPodAnnotation]; ok && !validAnnotation(v) {
			bad[fmt.Sprintf("%s=%q", seccompPodAnnotation, v)] = true
		}
		visit(spec, func(c *corev1.Container) {
			key := seccompContainerAnnotationPrefix + c.Name
			if v, ok := meta.Annotations[key]; ok && !validAnnotation(v) {
				bad[fmt.Sprintf("%s=%q", key, v)] = true
			}
		})
		if len(bad) == 0 {
			return nil
		}
		return &Violation{"seccompProfile", fmt.Sprintf("forbidden %s %s", plural("annotation", "annotations", len(bad)), strings.Join(bad.list(), ", "))}
	}
	var setters []string
	values := sortedSet{}
	if sc := spec.SecurityContext; sc != nil && sc.SeccompProfile != nil && !validSeccomp(sc.SeccompProfile.Type) {
		setters = append(setters, "pod")
		values[string(sc.SeccompProfile.Type)] = true
	}
	var bad []string
	visit(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && sc.SeccompProfile != nil && !validSeccomp(sc.SeccompProfile.Type) {
			bad = append(bad, c.Name)
			values[string(sc.SeccompProfile.Type)] = true
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersPhrase(bad))
	}
	if len(setters) == 0 {
		return nil
	}
	return &Violation{"seccompProfile", fmt.Sprintf("%s must not set securityContext.seccompProfile.type to %s",
		strings.Join(setters, " and "), quoted(values.list()))}
}

func allowedSysctls(minor int) []string {
	out := []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
		"net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start"}
	if minor >= 27 {
		out = append(out, "net.ipv4.ip_local_reserved_ports")
	}
	if minor >= 29 {
		out = append(out, "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes")
	}
	if minor >= 32 {
		out = append(out, "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem")
	}
	return out
}

func sysctls(minor int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	if spec.SecurityContext == nil {
		return nil
	}
	allowed := allowedSysctls(minor)
	var bad []string
	for _, s := range spec.SecurityContext.Sysctls {
		if !slices.Contains(allowed, s.Name) {
			bad = append(bad, s.Name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"forbidden sysctls", strings.Join(bad, ", ")}
}

func appArmorProfile(_ int, meta *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	allowedType := func(t corev1.AppArmorProfileType) bool {
		return t == corev1.AppArmorProfileTypeRuntimeDefault || t == corev1.AppArmorProfileTypeLocalhost
	}
	var setters []string
	values := sortedSet{}
	if sc := spec.SecurityContext; sc != nil && sc.AppArmorProfile != nil && !allowedType(sc.AppArmorProfile.Type) {
		setters = append(setters, "pod")
		values[string(sc.AppArmorProfile.Type)] = true
	}
	var bad []string
	visit(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && sc.AppArmorProfile != nil && !allowedType(sc.AppArmorProfile.Type) {
			bad = append(bad, c.Name)
			values[string(sc.AppArmorProfile.Type)] = true
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersPhrase(bad))
	}
	var annotations []string
	for k, v := range meta.Annotations {
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) &&
			v != "" && v != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && !strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
			annotations = append(annotations, fmt.Sprintf("%s=%q", k, v))
		}
	}
	list := values.list()
	if len(annotations) > 0 {
		sort.Strings(annotations)
		list = append(list, annotations...)
		setters = append(setters, plural("annotation", "annotations", len(annotations)))
	}
	if len(setters) == 0 {
		return nil
	}
	return &Violation{plural("forbidden AppArmor profile", "forbidden AppArmor profiles", len(list)),
		fmt.Sprintf("%s must not set AppArmor profile type to %s", strings.Join(setters, " and "), quoted(list))}
}

func windowsHostProcess(_ int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	hostProcess := func(o *corev1.WindowsSecurityContextOptions) bool {
		return o != nil && o.HostProcess != nil && *o.HostProcess
	}
	var setters []string
	if sc := spec.SecurityContext; sc != nil && hostProcess(sc.WindowsOptions) {
		setters = append(setters, "pod")
	}
	var bad []string
	visit(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && hostProcess(sc.WindowsOptions) {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersPhrase(bad))
	}
	if len(setters) == 0 {
		return nil
	}
	return &Violation{"hostProcess", strings.Join(setters, " and ") + " must not set securityContext.windowsOptions.hostProcess=true"}
}

func hostProbesAndHostLifecycle(_ int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	bad, hosts := sortedSet{}, sortedSet{}
	note := func(name string, hs ...string) {
		for _, h := range hs {
			if h != "" {
				bad[name], hosts[h] = true, true
			}
		}
	}
	visit(spec, func(c *corev1.Container) {
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if p == nil {
				continue
			}
			if p.HTTPGet != nil {
				note(c.Name, p.HTTPGet.Host)
			}
			if p.TCPSocket != nil {
				note(c.Name, p.TCPSocket.Host)
			}
		}
		if c.Lifecycle != nil {
			for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
				if h == nil {
					continue
				}
				if h.HTTPGet != nil {
					note(c.Name, h.HTTPGet.Host)
				}
				if h.TCPSocket != nil {
					note(c.Name, h.TCPSocket.Host)
				}
			}
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"probe or lifecycle host", fmt.Sprintf("%s %s %s %s", containersPhrase(bad.list()), plural("uses", "use", len(bad)),
		plural("probe or lifecycle host", "probe or lifecycle hosts", len(hosts)), quoted(hosts.list()))}
}

// --- restricted --------------------------------------------------------------

func allowPrivilegeEscalation(minor int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	if minor >= 25 && isWindows(spec) {
		return nil
	}
	var bad []string
	visit(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"allowPrivilegeEscalation != false", containersPhrase(bad) + " must set securityContext.allowPrivilegeEscalation=false"}
}

func capabilitiesRestricted(minor int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	if minor >= 25 && isWindows(spec) {
		return nil
	}
	var missingDrop, adding []string
	forbidden := sortedSet{}
	visit(spec, func(c *corev1.Container) {
		if c.SecurityContext == nil || c.SecurityContext.Capabilities == nil {
			missingDrop = append(missingDrop, c.Name)
			return
		}
		if !slices.Contains(c.SecurityContext.Capabilities.Drop, "ALL") {
			missingDrop = append(missingDrop, c.Name)
		}
		found := false
		for _, cp := range c.SecurityContext.Capabilities.Add {
			if cp != "NET_BIND_SERVICE" {
				found = true
				forbidden[string(cp)] = true
			}
		}
		if found {
			adding = append(adding, c.Name)
		}
	})
	var details []string
	if len(missingDrop) > 0 {
		details = append(details, containersPhrase(missingDrop)+` must set securityContext.capabilities.drop=["ALL"]`)
	}
	if len(adding) > 0 {
		details = append(details, fmt.Sprintf("%s must not include %s in securityContext.capabilities.add", containersPhrase(adding), quoted(forbidden.list())))
	}
	if len(details) == 0 {
		return nil
	}
	return &Violation{"unrestricted capabilities", strings.Join(details, "; ")}
}

// restrictedVolumeType names the type of a volume the restricted level
// forbids ("" when allowed).
func restrictedVolumeType(v *corev1.Volume) string {
	switch {
	case v.ConfigMap != nil, v.CSI != nil, v.DownwardAPI != nil, v.EmptyDir != nil, v.Ephemeral != nil, v.Image != nil,
		v.PersistentVolumeClaim != nil, v.Projected != nil, v.Secret != nil:
		return ""
	case v.HostPath != nil:
		return "hostPath"
	case v.GCEPersistentDisk != nil:
		return "gcePersistentDisk"
	case v.AWSElasticBlockStore != nil:
		return "awsElasticBlockStore"
	case v.GitRepo != nil:
		return "gitRepo"
	case v.NFS != nil:
		return "nfs"
	case v.ISCSI != nil:
		return "iscsi"
	case v.Glusterfs != nil:
		return "glusterfs"
	case v.RBD != nil:
		return "rbd"
	case v.FlexVolume != nil:
		return "flexVolume"
	case v.Cinder != nil:
		return "cinder"
	case v.CephFS != nil:
		return "cephfs"
	case v.Flocker != nil:
		return "flocker"
	case v.FC != nil:
		return "fc"
	case v.AzureFile != nil:
		return "azureFile"
	case v.VsphereVolume != nil:
		return "vsphereVolume"
	case v.Quobyte != nil:
		return "quobyte"
	case v.AzureDisk != nil:
		return "azureDisk"
	case v.PhotonPersistentDisk != nil:
		return "photonPersistentDisk"
	case v.PortworxVolume != nil:
		return "portworxVolume"
	case v.ScaleIO != nil:
		return "scaleIO"
	case v.StorageOS != nil:
		return "storageos"
	}
	return "unknown"
}

func restrictedVolumes(_ int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	types := sortedSet{}
	for i := range spec.Volumes {
		if t := restrictedVolumeType(&spec.Volumes[i]); t != "" {
			bad = append(bad, spec.Volumes[i].Name)
			types[t] = true
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"restricted volume types", fmt.Sprintf("%s %s %s %s %s", plural("volume", "volumes", len(bad)), quoted(bad),
		plural("uses", "use", len(bad)), plural("restricted volume type", "restricted volume types", len(types)), quoted(types.list()))}
}

func runAsNonRoot(_ int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var setters []string
	podNonRoot := false
	if sc := spec.SecurityContext; sc != nil && sc.RunAsNonRoot != nil {
		if !*sc.RunAsNonRoot {
			setters = append(setters, "pod")
		} else {
			podNonRoot = true
		}
	}
	var explicit, implicit []string
	visit(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && sc.RunAsNonRoot != nil {
			if !*sc.RunAsNonRoot {
				explicit = append(explicit, c.Name)
			}
		} else if !podNonRoot {
			implicit = append(implicit, c.Name)
		}
	})
	if len(explicit) > 0 {
		setters = append(setters, containersPhrase(explicit))
	}
	if len(setters) > 0 {
		return &Violation{"runAsNonRoot != true", strings.Join(setters, " and ") + " must not set securityContext.runAsNonRoot=false"}
	}
	if len(implicit) > 0 {
		return &Violation{"runAsNonRoot != true", "pod or " + containersPhrase(implicit) + " must set securityContext.runAsNonRoot=true"}
	}
	return nil
}

func runAsUser(_ int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var setters []string
	if sc := spec.SecurityContext; sc != nil && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		setters = append(setters, "pod")
	}
	var bad []string
	visit(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) > 0 {
		setters = append(setters, containersPhrase(bad))
	}
	if len(setters) == 0 {
		return nil
	}
	return &Violation{"runAsUser=0", strings.Join(setters, " and ") + " must not set runAsUser=0"}
}

func seccompRestricted(minor int, _ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	if minor >= 25 && isWindows(spec) {
		return nil
	}
	var setters []string
	values := sortedSet{}
	podSet := false
	if sc := spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
		if !validSeccomp(sc.SeccompProfile.Type) {
			setters = append(setters, "pod")
			values[string(sc.SeccompProfile.Type)] = true
		} else {
			podSet = true
		}
	}
	var explicit, implicit []string
	visit(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && sc.SeccompProfile != nil {
			if !validSeccomp(sc.SeccompProfile.Type) {
				explicit = append(explicit, c.Name)
				values[string(sc.SeccompProfile.Type)] = true
			}
		} else if !podSet {
			implicit = append(implicit, c.Name)
		}
	})
	if len(explicit) > 0 {
		setters = append(setters, containersPhrase(explicit))
	}
	if len(setters) > 0 {
		return &Violation{"seccompProfile", fmt.Sprintf("%s must not set securityContext.seccompProfile.type to %s",
			strings.Join(setters, " and "), quoted(values.list()))}
	}
	if len(implicit) > 0 {
		return &Violation{"seccompProfile", "pod or " + containersPhrase(implicit) + ` must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`}
	}
	return nil
}
