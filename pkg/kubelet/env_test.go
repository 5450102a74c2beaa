package kubelet

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Cases of upstream's expansion tests.
func TestExpand(t *testing.T) {
	mapping := mappingFor(map[string]string{"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""})
	for _, tc := range []struct{ in, want string }{
		{"$(VAR_A)", "A"},
		{"$(VAR_A)-$(VAR_A)", "A-A"},
		{"$(VAR_A)-1", "A-1"},
		{"___$(VAR_B)___", "___B___"},
		{"___$(VAR_C)", "___C"},
		{"$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"},
		{"$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"},
		{"$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"},
		{"f000-$$VAR_A", "f000-$VAR_A"},
		{"foo\\$(VAR_C)bar", "foo\\Cbar"},
		{"foo\\\\$(VAR_C)bar", "foo\\\\Cbar"},
		{"foo\\\\\\\\$(VAR_A)bar", "foo\\\\\\\\Abar"},
		{"$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"},
		{"$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"},
		{"$(VAR_REF)", "$(VAR_A)"},
		{"%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"},
		{"foo$(VAR_EMPTY)bar", "foobar"},
		{"foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"},
		{"f00__(VAR_A)__", "f00__(VAR_A)__"},
		{"$?_boo_$!", "$?_boo_$!"},
		{"$VAR_A", "$VAR_A"},
		{"$(VAR_DNE)", "$(VAR_DNE)"},
		{"$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"},
		{"$$$$$$(VAR_A)", "$$$(VAR_A)"},
		{"$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"},
		{"$$$$$$$(VAR_A)", "$$$A"},
		{"$VAR_A)", "$VAR_A)"},
		{"${VAR_A}", "${VAR_A}"},
		{"$(VAR_B)_______$(A", "B_______$(A"},
		{"$(VAR_C)_______$(", "C_______$("},
		{"$(VAR_A)foobarzab$", "Afoobarzab$"},
		{"foo-\\$(VAR_A", "foo-\\$(VAR_A"},
		{"--$($($($($--", "--$($($($($--"},
		{"$($($($($--foo$(", "$($($($($--foo$("},
		{"foo0--$($($($(", "foo0--$($($($("},
		{"$(foo$$var)", "$(foo$$var)"},
		{"\n", "\n"},
		{"$£FOO", "$£FOO"},
		{"prefix-$€-suffix", "prefix-$€-suffix"},
		{"$中文", "$中文"},
	} {
		if got := expand(tc.in, mapping); got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func svc(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

type fakeObjects struct {
	cms      map[string]*corev1.ConfigMap
	secrets  map[string]*corev1.Secret
	services []*corev1.Service
}

func (f fakeObjects) lookups() Lookups {
	return Lookups{
		ConfigMap: func(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
			if cm, ok := f.cms[ns+"/"+name]; ok {
				return cm, nil
			}
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
		},
		Secret: func(_ context.Context, ns, name string) (*corev1.Secret, error) {
			if s, ok := f.secrets[ns+"/"+name]; ok {
				return s, nil
			}
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
		},
		Services: func(ns string) ([]*corev1.Service, error) {
			var out []*corev1.Service
			for _, s := range f.services {
				if s.Namespace == ns {
					out = append(out, s)
				}
			}
			return out, nil
		},
	}
}

func envMap(env []envVar) map[string]string {
	m := map[string]string{}
	for _, e := range env {
		m[e.Name] = e.Value
	}
	return m
}

func TestServiceEnv(t *testing.T) {
	objs := fakeObjects{services: []*corev1.Service{
		svc("default", "kubernetes", "10.96.0.1", corev1.ServicePort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}),
		svc("default", "other", "10.96.0.9", corev1.ServicePort{Port: 80}),
		svc("ns", "my-svc", "10.96.0.2", corev1.ServicePort{Port: 80}, corev1.ServicePort{Name: "dns-udp", Port: 53, Protocol: corev1.ProtocolUDP}),
		svc("ns", "headless", "None", corev1.ServicePort{Port: 80}),
		svc("ns", "kubernetes", "10.96.0.3", corev1.ServicePort{Port: 8443}),
		svc("other", "far", "10.96.0.4", corev1.ServicePort{Port: 80}),
	}}
	master := map[string]string{
		"KUBERNETES_SERVICE_HOST":       "10.96.0.1",
		"KUBERNETES_SERVICE_PORT":       "443",
		"KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT":               "tcp://10.96.0.1:443",
		"KUBERNETES_PORT_443_TCP":       "tcp://10.96.0.1:443",
		"KUBERNETES_PORT_443_TCP_PROTO": "tcp",
		"KUBERNETES_PORT_443_TCP_PORT":  "443",
		"KUBERNETES_PORT_443_TCP_ADDR":  "10.96.0.1",
	}
	mySvc := map[string]string{
		"MY_SVC_SERVICE_HOST":         "10.96.0.2",
		"MY_SVC_SERVICE_PORT":         "80",
		"MY_SVC_SERVICE_PORT_DNS_UDP": "53",
		"MY_SVC_PORT":                 "tcp://10.96.0.2:80",
		"MY_SVC_PORT_80_TCP":          "tcp://10.96.0.2:80",
		"MY_SVC_PORT_80_TCP_PROTO":    "tcp",
		"MY_SVC_PORT_80_TCP_PORT":     "80",
		"MY_SVC_PORT_80_TCP_ADDR":     "10.96.0.2",
		"MY_SVC_PORT_53_UDP":          "udp://10.96.0.2:53",
		"MY_SVC_PORT_53_UDP_PROTO":    "udp",
		"MY_SVC_PORT_53_UDP_PORT":     "53",
		"MY_SVC_PORT_53_UDP_ADDR":     "10.96.0.2",
	}
	union := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	nsKubernetes := envMap(serviceEnvVars(objs.services[4]))
	if nsKubernetes["KUBERNETES_SERVICE_HOST"] != "10.96.0.3" {
		t.Fatal(nsKubernetes)
	}
	other := map[string]string{}
	for k, v := range envMap(serviceEnvVars(objs.services[1])) {
		other[k] = v
	}
	for _, tc := range []struct {
		name  string
		ns    string
		links bool
		want  map[string]string
	}{
		// A "kubernetes" service of the pod's namespace wins over the
		// master service (as upstream's map, whatever the list order).
		{"links", "ns", true, union(nsKubernetes, mySvc)},
		{"no links: only the master service", "ns", false, master},
		{"default namespace", "default", true, union(master, other)},
		{"default namespace without links", "default", false, master},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := serviceEnv(objs.lookups(), tc.ns, tc.links)
			if err != nil {
				t.Fatal(err)
			}
			if m := envMap(got); !reflect.DeepEqual(m, tc.want) {
				t.Errorf("got %v\nwant %v", m, tc.want)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestMakeEnvironment(t *testing.T) {
	objs := fakeObjects{
		cms:     map[string]*corev1.ConfigMap{"ns/cm": {Data: map[string]string{"a": "from-cm", "b": "cm-b", "1bad": "x"}}},
		secrets: map[string]*corev1.Secret{"ns/sec": {Data: map[string][]byte{"pw": []byte("s3cret"), "a": []byte("from-secret")}}},
		services: []*corev1.Service{svc("default", "kubernetes", "10.96.0.1", corev1.ServicePort{Name: "https", Port: 443}),
			svc("ns", "db", "10.96.0.5", corev1.ServicePort{Port: 5432})},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u-1", Labels: map[string]string{"app": "web", "tier": "fe"},
			Annotations: map[string]string{"note": "a \"quoted\" value"}},
		Spec: corev1.PodSpec{NodeName: "node-1", ServiceAccountName: "sa", Containers: []corev1.Container{{Name: "other",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}}},
	}
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")}
	in := envInput{Lookups: objs.lookups(), PodIPs: []string{"10.244.0.5", "fd00::5"}, HostIPs: []string{"192.168.1.2"}, Allocatable: alloc}
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
	}
	res := func(r, div string) *corev1.EnvVarSource {
		s := &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: r}}
		if div != "" {
			s.ResourceFieldRef.Divisor = resource.MustParse(div)
		}
		return s
	}
	resources := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("100Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
	}
	for _, tc := range []struct {
		name    string
		links   *bool
		c       corev1.Container
		want    map[string]string
		wantErr string
	}{{
		name: "values and expansion",
		c: corev1.Container{Env: []corev1.EnvVar{{Name: "A", Value: "x"}, {Name: "B", Value: "$(A)-$(DB_SERVICE_HOST)-$$(A)-$(NOPE)"},
			{Name: "C", Value: "$(D)"}, {Name: "D", Value: "d"}, {Name: "E"}}},
		want: map[string]string{"A": "x", "B": "x-10.96.0.5-$(A)-$(NOPE)", "C": "$(D)", "D": "d", "E": ""},
	}, {
		name: "field refs",
		c: corev1.Container{Env: []corev1.EnvVar{{Name: "NAME", ValueFrom: field("metadata.name")}, {Name: "NS", ValueFrom: field("metadata.namespace")},
			{Name: "UID", ValueFrom: field("metadata.uid")}, {Name: "APP", ValueFrom: field("metadata.labels['app']")},
			{Name: "MISSING", ValueFrom: field("metadata.labels['nope']")}, {Name: "LABELS", ValueFrom: field("metadata.labels")},
			{Name: "ANN", ValueFrom: field("metadata.annotations")}, {Name: "NODE", ValueFrom: field("spec.nodeName")},
			{Name: "SA", ValueFrom: field("spec.serviceAccountName")}, {Name: "IP", ValueFrom: field("status.podIP")},
			{Name: "IPS", ValueFrom: field("status.podIPs")}, {Name: "HOST", ValueFrom: field("status.hostIP")},
			{Name: "HOSTS", ValueFrom: field("status.hostIPs")}, {Name: "REF", Value: "ip=$(IP)"}}},
		want: map[string]string{"NAME": "p", "NS": "ns", "UID": "u-1", "APP": "web", "MISSING": "", "LABELS": "app=\"web\"\ntier=\"fe\"",
			"ANN": `note="a \"quoted\" value"`, "NODE": "node-1", "SA": "sa", "IP": "10.244.0.5", "IPS": "10.244.0.5,fd00::5",
			"HOST": "192.168.1.2", "HOSTS": "192.168.1.2", "REF": "ip=10.244.0.5"},
	}, {
		name: "resource field refs",
		c: corev1.Container{Resources: resources, Env: []corev1.EnvVar{
			{Name: "CPU_LIMIT", ValueFrom: res("limits.cpu", "")}, {Name: "CPU_LIMIT_M", ValueFrom: res("limits.cpu", "1m")},
			{Name: "CPU_REQ", ValueFrom: res("requests.cpu", "")}, {Name: "CPU_REQ_M", ValueFrom: res("requests.cpu", "1m")},
			{Name: "MEM_REQ_MI", ValueFrom: res("requests.memory", "1Mi")}, {Name: "MEM_LIMIT", ValueFrom: res("limits.memory", "")},
			{Name: "EPH_LIMIT_GI", ValueFrom: res("limits.ephemeral-storage", "1Gi")},
			{Name: "OTHER_MEM", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "other", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}}}},
		// Limits not set read as the node's allocatable; values round up.
		want: map[string]string{"CPU_LIMIT": "2", "CPU_LIMIT_M": "1500", "CPU_REQ": "1", "CPU_REQ_M": "250", "MEM_REQ_MI": "100",
			"MEM_LIMIT": "8589934592", "EPH_LIMIT_GI": "100", "OTHER_MEM": "64"},
	}, {
		name: "configmap and secret refs, envFrom with prefix, env wins",
		c: corev1.Container{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}},
			{Prefix: "S_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}}},
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: ptrTo(true)}}},
			Env: []corev1.EnvVar{{Name: "b", Value: "env-b"}, {Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "pw"}}},
				{Name: "CMA", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "a"}}},
				{Name: "OPT", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "zz", Optional: ptrTo(true)}}},
				{Name: "OPT2", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nosuch"}, Key: "zz", Optional: ptrTo(true)}}},
				{Name: "X", Value: "$(S_pw)"}}},
		// 1.34 passes every key of envFrom (RelaxedEnvironmentVariableValidation).
		want: map[string]string{"a": "from-cm", "b": "env-b", "1bad": "x", "S_pw": "s3cret", "S_a": "from-secret", "PW": "s3cret", "CMA": "from-cm", "X": "s3cret"},
	}, {
		name:    "missing configmap key",
		c:       corev1.Container{Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "zz"}}}}},
		wantErr: "couldn't find key zz in ConfigMap ns/cm",
	}, {
		name:    "missing secret key",
		c:       corev1.Container{Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "zz"}}}}},
		wantErr: "couldn't find key zz in Secret ns/sec",
	}, {
		name:    "missing configmap",
		c:       corev1.Container{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}}}}},
		wantErr: `configmaps "gone" not found`,
	}, {
		name:    "missing secret",
		c:       corev1.Container{Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Key: "k"}}}}},
		wantErr: `secrets "gone" not found`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod.DeepCopy()
			p.Spec.EnableServiceLinks = tc.links
			got, err := makeEnvironment(context.Background(), p, &tc.c, in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := envMap(got)
			for k, v := range tc.want {
				if m[k] != v {
					t.Errorf("%s = %q, want %q", k, m[k], v)
				}
			}
			if m["KUBERNETES_SERVICE_HOST"] != "10.96.0.1" || m["DB_SERVICE_HOST"] != "10.96.0.5" {
				t.Errorf("service variables missing: %v", m)
			}
			if len(m) != len(got) {
				t.Errorf("duplicate variables in %v", got)
			}
		})
	}
	// Declaration order: envFrom keys, then env; services last.
	c := corev1.Container{Env: []corev1.EnvVar{{Name: "Z", Value: "1"}, {Name: "A", Value: "2"}}}
	got, err := makeEnvironment(context.Background(), pod, &c, in)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Name != "Z" || got[1].Name != "A" || !strings.HasSuffix(got[2].Name, "_SERVICE_HOST") {
		t.Errorf("order: %v", got)
	}
	// enableServiceLinks=false keeps only the master service.
	p := pod.DeepCopy()
	p.Spec.EnableServiceLinks = ptrTo(false)
	got, _ = makeEnvironment(context.Background(), p, &c, in)
	if m := envMap(got); m["DB_SERVICE_HOST"] != "" || m["KUBERNETES_SERVICE_HOST"] == "" {
		t.Errorf("enableServiceLinks=false: %v", m)
	}
	// Services not listed yet: no environment (upstream's error).
	in2 := in
	in2.Lookups.ServicesSynced = func() bool { return false }
	if _, err := makeEnvironment(context.Background(), pod, &c, in2); err == nil || !strings.Contains(err.Error(), "services have not yet been read") {
		t.Errorf("unsynced services: %v", err)
	}
}

func TestExpandCommand(t *testing.T) {
	c := &corev1.Container{Command: []string{"/bin/sh", "-c", "echo $(MSG) $$(MSG) $(NONE)"}, Args: []string{"$(MSG)", "$$HOME"}}
	cmd, args := expandCommand(c, []envVar{{"MSG", "hi"}})
	if want := []string{"/bin/sh", "-c", "echo hi $(MSG) $(NONE)"}; !reflect.DeepEqual(cmd, want) {
		t.Errorf("command %q, want %q", cmd, want)
	}
	if want := []string{"hi", "$HOME"}; !reflect.DeepEqual(args, want) {
		t.Errorf("args %q, want %q", args, want)
	}
}
