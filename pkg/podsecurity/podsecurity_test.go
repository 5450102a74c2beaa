package podsecurity

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

// restrictedPod passes the restricted level.
func restrictedPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "c", Image: "i", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		},
	}
}

func lv(level Level, version string) LevelVersion {
	v, err := ParseVersion(version)
	if err != nil {
		panic(err)
	}
	return LevelVersion{Level: level, Version: v}
}

// One case per policy field, with upstream's documented reason and detail
// (the Pod Security Standards page and the checks' tests).
func TestEvaluate(t *testing.T) {
	sc := func(p *corev1.Pod) *corev1.SecurityContext { return p.Spec.Containers[0].SecurityContext }
	tests := []struct {
		name   string
		lv     LevelVersion
		mutate func(p *corev1.Pod)
		want   string
	}{
		{name: "restricted pod passes restricted", lv: lv(Restricted, "latest"), mutate: func(*corev1.Pod) {}},
		{name: "bare pod fails restricted", lv: lv(Restricted, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext = nil
			p.Spec.Containers[0].SecurityContext = nil
		}, want: `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
			`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
			`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
			`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`},
		{name: "bare pod passes baseline", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext = nil
			p.Spec.Containers[0].SecurityContext = nil
		}},
		{name: "privileged", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) { sc(p).Privileged = ptr(true) },
			want: `privileged (container "c" must not set securityContext.privileged=true)`},
		{name: "host namespaces", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.HostNetwork, p.Spec.HostPID, p.Spec.HostIPC = true, true, true
		}, want: `host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)`},
		{name: "hostPath volumes at baseline", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "a", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}},
				{Name: "b", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}, want: `hostPath volumes (volumes "a", "b")`},
		{name: "restricted volumes replace hostPath at restricted", lv: lv(Restricted, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "a", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}},
				{Name: "b", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}, want: `restricted volume types (volumes "a", "b" use restricted volume types "hostPath", "nfs")`},
		{name: "host ports", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "d", Ports: []corev1.ContainerPort{{ContainerPort: 1, HostPort: 30}, {ContainerPort: 2, HostPort: 10}}})
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 3, HostPort: 20}}
		}, want: `hostPort (containers "c", "d" use hostPorts 10, 20, 30)`},
		{name: "capabilities at baseline", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			sc(p).Capabilities.Add = []corev1.Capability{"NET_ADMIN", "CHOWN", "SYS_TIME"}
		}, want: `non-default capabilities (container "c" must not include "NET_ADMIN", "SYS_TIME" in securityContext.capabilities.add)`},
		{name: "capabilities at restricted", lv: lv(Restricted, "latest"), mutate: func(p *corev1.Pod) {
			sc(p).Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE", "CHOWN"}}
		}, want: `unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "CHOWN" in securityContext.capabilities.add)`},
		{name: "capabilities at restricted v1.21 are baseline's", lv: lv(Restricted, "v1.21"), mutate: func(p *corev1.Pod) {
			sc(p).Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"CHOWN"}}
		}},
		{name: "procMount", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			sc(p).ProcMount = ptr(corev1.UnmaskedProcMount)
		}, want: `procMount (container "c" must not set securityContext.procMount to "Unmasked")`},
		{name: "seLinuxOptions", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t", User: "u"}
			sc(p).SELinuxOptions = &corev1.SELinuxOptions{Role: "r"}
		}, want: `seLinuxOptions (pod and container "c" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)`},
		{name: "seLinux container_engine_t allowed from v1.31", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			sc(p).SELinuxOptions = &corev1.SELinuxOptions{Type: "container_engine_t"}
		}},
		{name: "seLinux container_engine_t forbidden at v1.30", lv: lv(Baseline, "v1.30"), mutate: func(p *corev1.Pod) {
			sc(p).SELinuxOptions = &corev1.SELinuxOptions{Type: "container_engine_t"}
		}, want: `seLinuxOptions (container "c" set forbidden securityContext.seLinuxOptions: type "container_engine_t")`},
		{name: "seccomp Unconfined at baseline", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}, want: `seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")`},
		{name: "seccomp annotations before v1.19", lv: lv(Baseline, "v1.18"), mutate: func(p *corev1.Pod) {
			p.Annotations = map[string]string{"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}
		}, want: `seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")`},
		{name: "sysctls", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}, {Name: "net.ipv4.tcp_rmem", Value: "1"}}
		}, want: `forbidden sysctls (kernel.msgmax)`},
		{name: "sysctls tcp_rmem forbidden at v1.31", lv: lv(Baseline, "v1.31"), mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.tcp_rmem", Value: "1"}}
		}, want: `forbidden sysctls (net.ipv4.tcp_rmem)`},
		{name: "appArmor", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}, want: `forbidden AppArmor profile (pod must not set AppArmor profile type to "Unconfined")`},
		{name: "windows hostProcess", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			sc(p).WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr(true)}
		}, want: `hostProcess (container "c" must not set securityContext.windowsOptions.hostProcess=true)`},
		{name: "probe host", lv: lv(Baseline, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "invalid.host"}}}
		}, want: `probe or lifecycle host (container "c" uses probe or lifecycle host "invalid.host")`},
		{name: "probe host allowed before v1.34", lv: lv(Baseline, "v1.33"), mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "invalid.host"}}}
		}},
		{name: "runAsNonRoot false", lv: lv(Restricted, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext.RunAsNonRoot = ptr(false)
			sc(p).RunAsNonRoot = ptr(false)
		}, want: `runAsNonRoot != true (pod and container "c" must not set securityContext.runAsNonRoot=false)`},
		{name: "runAsUser 0", lv: lv(Restricted, "latest"), mutate: func(p *corev1.Pod) {
			sc(p).RunAsUser = ptr(int64(0))
		}, want: `runAsUser=0 (container "c" must not set runAsUser=0)`},
		{name: "runAsUser 0 allowed before v1.23", lv: lv(Restricted, "v1.22"), mutate: func(p *corev1.Pod) {
			sc(p).RunAsUser = ptr(int64(0))
		}},
		{name: "windows pods exempt from linux-only checks from v1.25", lv: lv(Restricted, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
			p.Spec.SecurityContext.SeccompProfile = nil
			p.Spec.Containers[0].SecurityContext = nil
		}},
		{name: "the brief's privileged pod at restricted", lv: lv(Restricted, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext = nil
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr(true)}
		}, want: `privileged (container "c" must not set securityContext.privileged=true), ` +
			`allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
			`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
			`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
			`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`},
		{name: "privileged level checks nothing", lv: lv(Privileged, "latest"), mutate: func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := restrictedPod()
			tt.mutate(p)
			if got := Details(Evaluate(tt.lv, &p.ObjectMeta, &p.Spec)); got != tt.want {
				t.Errorf("got\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}

func TestPolicyFromLabels(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   string // enforce/audit/warn
		errs   string
	}{
		{name: "none", want: "privileged:latest/privileged:latest/privileged:latest"},
		{name: "warn follows enforce", labels: map[string]string{EnforceLevelLabel: "baseline", EnforceVersionLabel: "v1.30"},
			want: "baseline:v1.30/privileged:latest/baseline:v1.30"},
		{name: "explicit warn kept", labels: map[string]string{EnforceLevelLabel: "restricted", WarnLevelLabel: "baseline"},
			want: "restricted:latest/privileged:latest/baseline:latest"},
		{name: "invalid", labels: map[string]string{EnforceLevelLabel: "strict", AuditVersionLabel: "1.30"},
			want: "restricted:latest/privileged:latest/privileged:latest",
			errs: `metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted; ` +
				`metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "1.30": must be "latest" or "v1.x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, errs := PolicyFromLabels(tt.labels, DefaultPolicy())
			if got := p.Enforce.String() + "/" + p.Audit.String() + "/" + p.Warn.String(); got != tt.want {
				t.Errorf("policy %s, want %s", got, tt.want)
			}
			var got string
			for i, e := range errs {
				if i > 0 {
					got += "; "
				}
				got += e.Error()
			}
			if got != tt.errs {
				t.Errorf("errors\n  %s\nwant\n  %s", got, tt.errs)
			}
		})
	}
}
