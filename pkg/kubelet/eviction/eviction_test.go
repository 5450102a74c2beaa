package eviction

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/clock"
)

func q(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

func TestParseThresholds(t *testing.T) {
	tests := []struct {
		name                    string
		hard, soft, grace, mins map[string]string
		want                    []string // "signal<value/grace min"
		err                     string
	}{
		{name: "upstream defaults", hard: DefaultEvictionHard,
			want: []string{"imagefs.available<15%/0s", "imagefs.inodesFree<5%/0s", "memory.available<100Mi/0s", "nodefs.available<10%/0s", "nodefs.inodesFree<5%/0s"}},
		{name: "0% disables", hard: map[string]string{"nodefs.available": "0%", "pid.available": "1k"}, want: []string{"pid.available<1k/0s"}},
		{name: "soft with grace and min reclaim", soft: map[string]string{"memory.available": "1Gi"}, grace: map[string]string{"memory.available": "1m30s"},
			mins: map[string]string{"memory.available": "500Mi"}, want: []string{"memory.available<1Gi/1m30s min 500Mi"}},
		{name: "soft without grace", soft: map[string]string{"memory.available": "1Gi"}, err: "grace period must be specified for the soft eviction threshold memory.available"},
		{name: "unknown signal", hard: map[string]string{"memory.free": "1Gi"}, err: "unsupported eviction signal memory.free"},
		{name: "not positive", hard: map[string]string{"memory.available": "0"}, err: "eviction threshold memory.available must be positive: 0"},
		{name: "over 100%", hard: map[string]string{"nodefs.available": "110%"}, err: "eviction percentage threshold nodefs.available must be <= 100%: 110%"},
		{name: "negative grace", soft: map[string]string{"memory.available": "1Gi"}, grace: map[string]string{"memory.available": "-1s"},
			err: "invalid eviction grace period specified: -1s, must be a positive value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseThresholds(tt.hard, tt.soft, tt.grace, tt.mins)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, th := range got {
				x := th.key()
				if th.MinReclaim != nil {
					x += " min " + th.MinReclaim.String()
				}
				if th.Operator != OpLessThan {
					t.Errorf("operator %q", th.Operator)
				}
				s = append(s, x)
			}
			if !reflect.DeepEqual(s, tt.want) {
				t.Errorf("got %q, want %q", s, tt.want)
			}
		})
	}
}

func TestParseFlagMaps(t *testing.T) {
	m, err := ParseLangleMap("memory.available<100Mi, nodefs.available<10%")
	if err != nil || !reflect.DeepEqual(m, map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"}) {
		t.Errorf("%v %v", m, err)
	}
	if _, err := ParseLangleMap("memory.available=100Mi"); err == nil || err.Error() != "malformed pair, expect string<string" {
		t.Errorf("err %v", err)
	}
	m, err = ParseEqualsMap("memory.available=1m30s")
	if err != nil || m["memory.available"] != "1m30s" {
		t.Errorf("%v %v", m, err)
	}
}

type podSpec struct {
	name      string
	priority  int32
	memReq    string
	memUse    string
	diskUse   string
	diskReq   string
	procs     uint64
	critical  bool
	noStats   bool
	container string
}

func mkPods(specs []podSpec) ([]*corev1.Pod, StatsFunc) {
	var pods []*corev1.Pod
	stats := map[types.UID]PodStats{}
	for _, s := range specs {
		cname := s.container
		if cname == "" {
			cname = "app"
		}
		c := corev1.Container{Name: cname, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}
		if s.memReq != "" {
			c.Resources.Requests[corev1.ResourceMemory] = *q(s.memReq)
		}
		if s.diskReq != "" {
			c.Resources.Requests[corev1.ResourceEphemeralStorage] = *q(s.diskReq)
		}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: "default", UID: types.UID(s.name)},
			Spec: corev1.PodSpec{Priority: &s.priority, Containers: []corev1.Container{c}}}
		if s.critical {
			p.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
		}
		pods = append(pods, p)
		if s.noStats {
			continue
		}
		use, disk := q("0"), q("0")
		if s.memUse != "" {
			use = q(s.memUse)
		}
		if s.diskUse != "" {
			disk = q(s.diskUse)
		}
		stats[p.UID] = PodStats{Memory: use, Processes: s.procs,
			Containers: []ContainerStats{{Name: cname, Memory: use, Rootfs: disk, Logs: q("0")}}}
	}
	return pods, func(p *corev1.Pod) (PodStats, bool) { s, ok := stats[p.UID]; return s, ok }
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func obsMem(avail string) Observations {
	return Observations{SignalMemoryAvailable: {Available: q(avail), Capacity: q("8Gi")}}
}

func TestDecide(t *testing.T) {
	hard := DefaultThresholds()
	pid, _ := ParseThresholds(map[string]string{"pid.available": "100"}, nil, nil, nil)
	tests := []struct {
		name      string
		th        []Threshold
		obs       Observations
		pods      []podSpec
		wantConds []corev1.NodeConditionType
		wantRank  []string
		wantEvict string
		wantMsg   string
	}{{
		name: "no pressure", th: hard,
		obs: Observations{SignalMemoryAvailable: {Available: q("6Gi"), Capacity: q("8Gi")},
			SignalNodeFsAvailable: {Available: q("50Gi"), Capacity: q("100Gi")}},
		pods: []podSpec{{name: "a", memUse: "1Gi"}},
	}, {
		name: "memory: over requests first, then priority, then usage above requests", th: hard, obs: obsMem("50Mi"),
		pods: []podSpec{
			{name: "guaranteed-big", memReq: "500Mi", memUse: "400Mi"},
			{name: "high-prio-over", priority: 1000, memUse: "300Mi"},
			{name: "besteffort-small", memUse: "10Mi"},
			{name: "burstable-over", memReq: "100Mi", memUse: "150Mi"},
		},
		wantConds: []corev1.NodeConditionType{corev1.NodeMemoryPressure},
		wantRank:  []string{"burstable-over", "besteffort-small", "high-prio-over", "guaranteed-big"},
		wantEvict: "burstable-over",
		wantMsg:   "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container app was using 150Mi, request is 100Mi, has larger consumption of memory. ",
	}, {
		name: "critical pods are not evicted", th: hard, obs: obsMem("51200Ki"),
		pods:      []podSpec{{name: "static", memUse: "2Gi", critical: true}, {name: "app-pod", memUse: "90Mi"}},
		wantConds: []corev1.NodeConditionType{corev1.NodeMemoryPressure},
		wantRank:  []string{"static", "app-pod"}, wantEvict: "app-pod",
		wantMsg: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container app was using 90Mi, request is 0, has larger consumption of memory. ",
	}, {
		name: "pods without stats first", th: hard, obs: obsMem("10Mi"),
		pods:      []podSpec{{name: "known", memUse: "1Gi"}, {name: "unknown", noStats: true}},
		wantConds: []corev1.NodeConditionType{corev1.NodeMemoryPressure},
		wantRank:  []string{"unknown", "known"}, wantEvict: "unknown",
		wantMsg: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 10Mi. ",
	}, {
		name: "disk: ephemeral storage over requests first", th: hard,
		obs: Observations{SignalNodeFsAvailable: {Available: q("5Gi"), Capacity: q("100Gi")}},
		pods: []podSpec{
			{name: "big-under-request", diskUse: "20Gi", diskReq: "30Gi"},
			{name: "small-over", diskUse: "1Gi"},
			{name: "bigger-over", diskUse: "3Gi", diskReq: "1Gi"},
		},
		wantConds: []corev1.NodeConditionType{corev1.NodeDiskPressure},
		wantRank:  []string{"bigger-over", "small-over", "big-under-request"}, wantEvict: "bigger-over",
		// 10% of 100Gi through a float32, as upstream's message shows it.
		wantMsg: "The node was low on resource: ephemeral-storage. Threshold quantity: 10737418400, available: 5Gi. Container app was using 3Gi, request is 1Gi, has larger consumption of ephemeral-storage. ",
	}, {
		name: "imagefs inodes", th: hard,
		obs:       Observations{SignalImageFsInodesFree: {Available: q("10"), Capacity: q("1000")}},
		pods:      []podSpec{{name: "a"}},
		wantConds: []corev1.NodeConditionType{corev1.NodeDiskPressure}, wantRank: []string{"a"}, wantEvict: "a",
		wantMsg: "The node was low on resource: inodes. Threshold quantity: 50, available: 10. ",
	}, {
		name: "pids: priority, then processes", th: pid,
		obs: Observations{SignalPIDAvailable: {Available: q("50"), Capacity: q("4194304")}},
		pods: []podSpec{
			{name: "many-high", priority: 10, procs: 500},
			{name: "few", procs: 3},
			{name: "many", procs: 300},
		},
		wantConds: []corev1.NodeConditionType{corev1.NodePIDPressure},
		wantRank:  []string{"many", "few", "many-high"}, wantEvict: "many",
		wantMsg: "The node was low on resource: pids. Threshold quantity: 100, available: 50. ",
	}, {
		name: "memory before disk", th: hard,
		obs: Observations{SignalNodeFsAvailable: {Available: q("5Gi"), Capacity: q("100Gi")},
			SignalMemoryAvailable: {Available: q("10Mi"), Capacity: q("8Gi")}},
		pods:      []podSpec{{name: "disk-hog", diskUse: "50Gi"}, {name: "mem-hog", memUse: "4Gi"}},
		wantConds: []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure},
		wantRank:  []string{"mem-hog", "disk-hog"}, wantEvict: "mem-hog",
		wantMsg: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 10Mi. Container app was using 4Gi, request is 0, has larger consumption of memory. ",
	}}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, stats := mkPods(tt.pods)
			d, _ := Decide(Input{Thresholds: tt.th, Observations: tt.obs, Pods: pods, Stats: stats, PressureTransitionPeriod: 5 * time.Minute}, State{}, now)
			if !reflect.DeepEqual(d.Conditions, tt.wantConds) {
				t.Errorf("conditions %v, want %v", d.Conditions, tt.wantConds)
			}
			if got := names(d.Ranked); !reflect.DeepEqual(got, tt.wantRank) {
				t.Errorf("ranked %v, want %v", got, tt.wantRank)
			}
			evict := ""
			if d.Evict != nil {
				evict = d.Evict.Name
			}
			if evict != tt.wantEvict || d.Message != tt.wantMsg {
				t.Errorf("evict %q %q, want %q %q", evict, d.Message, tt.wantEvict, tt.wantMsg)
			}
			if d.Evict != nil && d.GracePeriod != ImmediateGracePeriodSeconds {
				t.Errorf("grace %d for a hard threshold", d.GracePeriod)
			}
		})
	}
}

// The pressure condition stays for the transition period after the signal
// recovered; soft thresholds evict after their grace period, with the
// pod's grace period bounded by MaxPodGracePeriodSeconds; a met threshold
// with a minimum reclaim stays met until the reclaim is done.
func TestDecideOverTime(t *testing.T) {
	soft, err := ParseThresholds(map[string]string{"memory.available": "100Mi"}, map[string]string{"memory.available": "1Gi"},
		map[string]string{"memory.available": "1m"}, map[string]string{"memory.available": "500Mi"})
	if err != nil {
		t.Fatal(err)
	}
	tgps := int64(45)
	pods, stats := mkPods([]podSpec{{name: "a", memUse: "3Gi"}})
	pods[0].Spec.TerminationGracePeriodSeconds = &tgps
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	type step struct {
		at        time.Duration
		avail     string
		wantCond  bool
		wantEvict bool
		wantGrace int64
	}
	steps := []step{
		{at: 0, avail: "4Gi"},
		{at: 10 * time.Second, avail: "900Mi", wantCond: true},                                 // soft met: condition at once, no eviction
		{at: 40 * time.Second, avail: "900Mi", wantCond: true},                                 // grace period running
		{at: 70 * time.Second, avail: "900Mi", wantCond: true, wantEvict: true, wantGrace: 30}, // min(30, 45)
		{at: 80 * time.Second, avail: "1.2Gi", wantCond: true, wantEvict: true, wantGrace: 30}, // above 1Gi but not 1Gi+500Mi: still met
		{at: 90 * time.Second, avail: "2Gi", wantCond: true},                                   // reclaimed: the transition period from the last pressure seen (80 s) holds the condition
		{at: 80*time.Second + 5*time.Minute - time.Second, avail: "2Gi", wantCond: true},
		{at: 80*time.Second + 5*time.Minute, avail: "2Gi"},
		{at: 7 * time.Minute, avail: "50Mi", wantCond: true, wantEvict: true, wantGrace: 1}, // hard: at once
	}
	var st State
	for _, s := range steps {
		d, next := Decide(Input{Thresholds: soft, Observations: obsMem(s.avail), Pods: pods, Stats: stats,
			PressureTransitionPeriod: 5 * time.Minute, MaxPodGracePeriodSeconds: 30}, st, start.Add(s.at))
		st = next
		if got := len(d.Conditions) == 1 && d.Conditions[0] == corev1.NodeMemoryPressure; got != s.wantCond {
			t.Errorf("at %v: MemoryPressure %v, want %v", s.at, got, s.wantCond)
		}
		if got := d.Evict != nil; got != s.wantEvict || got && d.GracePeriod != s.wantGrace {
			t.Errorf("at %v: evict %v grace %d, want %v %d", s.at, got, d.GracePeriod, s.wantEvict, s.wantGrace)
		}
	}
}

func TestAdmit(t *testing.T) {
	be := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	burstable := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: *q("1Gi")}}}}}}
	tolerating := be.DeepCopy()
	tolerating.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	critical := be.DeepCopy()
	prio := int32(2000001000)
	critical.Spec.Priority = &prio
	mem := []corev1.NodeConditionType{corev1.NodeMemoryPressure}
	disk := []corev1.NodeConditionType{corev1.NodeDiskPressure}
	tests := []struct {
		name  string
		conds []corev1.NodeConditionType
		pod   *corev1.Pod
		ok    bool
		msg   string
	}{
		{"no pressure", nil, be, true, ""},
		{"memory pressure refuses BestEffort", mem, be, false, "The node had condition: [MemoryPressure]. "},
		{"memory pressure admits Burstable", mem, burstable, true, ""},
		{"memory pressure admits a tolerating BestEffort", mem, tolerating, true, ""},
		{"disk pressure refuses all", disk, burstable, false, "The node had condition: [DiskPressure]. "},
		{"disk pressure admits critical", disk, critical, true, ""},
		{"both refuse Burstable", append(mem, disk...), burstable, false, "The node had condition: [MemoryPressure DiskPressure]. "},
	}
	for _, tt := range tests {
		ok, reason, msg := Admit(tt.conds, tt.pod)
		if ok != tt.ok || msg != tt.msg || !ok && reason != "Evicted" {
			t.Errorf("%s: %v %q %q", tt.name, ok, reason, msg)
		}
	}
}

func TestManagerReclaimsDiskBeforeEvicting(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	pods, stats := mkPods([]podSpec{{name: "a", diskUse: "10Gi"}})
	avail := "5Gi"
	reclaimed, evicted := 0, 0
	var events []string
	m, err := New(Config{Thresholds: DefaultThresholds(), Clock: clk,
		Observe: func(context.Context) (Observations, StatsFunc, error) {
			return Observations{SignalNodeFsAvailable: {Available: q(avail), Capacity: q("100Gi")}}, stats, nil
		},
		ActivePods:  func() []*corev1.Pod { return pods },
		ReclaimDisk: []func(context.Context) error{func(context.Context) error { reclaimed++; avail = "20Gi"; return nil }},
		Evict:       func(context.Context, *corev1.Pod, int64, string, bool) error { evicted++; return nil },
		Event: func(p *corev1.Pod, typ, reason, msg string) {
			events = append(events, typ+" "+reason+" "+msg)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := m.Synchronize(context.Background()); err != nil || p != nil {
		t.Fatalf("evicted %v, %v", p, err)
	}
	if reclaimed != 1 || evicted != 0 || !m.Under(corev1.NodeDiskPressure) {
		t.Errorf("reclaimed %d evicted %d conditions %v", reclaimed, evicted, m.Conditions())
	}
	if strings.Join(events, "|") != "Warning EvictionThresholdMet Attempting to reclaim ephemeral-storage" {
		t.Errorf("events %q", events)
	}
	// Reclaiming no longer helps: the pod goes.
	m.cfg.ReclaimDisk = []func(context.Context) error{func(context.Context) error { reclaimed++; return nil }}
	avail = "5Gi"
	p, err := m.Synchronize(context.Background())
	if err != nil || p == nil || p.Name != "a" || evicted != 1 {
		t.Fatalf("evicted %v (%d), %v", p, evicted, err)
	}
	if last := events[len(events)-1]; !strings.HasPrefix(last, "Warning Evicted The node was low on resource: ephemeral-storage.") {
		t.Errorf("event %q", last)
	}
}

func TestLocalStorageEvictions(t *testing.T) {
	limit := func(c *corev1.Container, v string) {
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: *q(v)}
	}
	tests := []struct {
		name      string
		pod       func(p *corev1.Pod)
		stats     PodStats
		dedicated bool
		want      string
	}{
		{name: "emptyDir over its sizeLimit",
			pod: func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: q("1Gi")}}}}
			},
			stats: PodStats{VolumeUsage: map[string]*resource.Quantity{"data": q("2Gi")}, Volumes: q("2Gi")},
			want:  `Usage of EmptyDir volume "data" exceeds the limit "1Gi". `},
		{name: "emptyDir under its sizeLimit",
			pod: func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: q("1Gi")}}}}
			},
			stats: PodStats{VolumeUsage: map[string]*resource.Quantity{"data": q("1Gi")}}},
		{name: "pod over the sum of its containers' limits",
			pod: func(p *corev1.Pod) {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b"})
				limit(&p.Spec.Containers[0], "1Gi")
				limit(&p.Spec.Containers[1], "1Gi")
			},
			stats: PodStats{Volumes: q("1500Mi"), Containers: []ContainerStats{{Name: "app", Rootfs: q("300Mi"), Logs: q("300Mi")}}},
			want:  "Pod ephemeral local storage usage exceeds the total limit of containers 2Gi. "},
		{name: "container over its limit",
			pod: func(p *corev1.Pod) {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b"})
				limit(&p.Spec.Containers[0], "1Gi")
				limit(&p.Spec.Containers[1], "5Gi")
			},
			stats: PodStats{Containers: []ContainerStats{{Name: "app", Rootfs: q("1Gi"), Logs: q("1Mi")}}},
			want:  `Container app exceeded its local ephemeral storage limit "1Gi". `},
		{name: "a dedicated image fs leaves the writable layer out of the container's usage",
			pod: func(p *corev1.Pod) {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b"})
				limit(&p.Spec.Containers[0], "1Gi")
				limit(&p.Spec.Containers[1], "5Gi")
			},
			stats:     PodStats{Containers: []ContainerStats{{Name: "app", Rootfs: q("2Gi"), Logs: q("1Mi")}}},
			dedicated: true},
		{name: "no limits", pod: func(*corev1.Pod) {},
			stats: PodStats{Volumes: q("100Gi"), Containers: []ContainerStats{{Name: "app", Rootfs: q("50Gi")}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}}
			tt.pod(p)
			got := LocalStorageEvictions([]*corev1.Pod{p}, func(*corev1.Pod) (PodStats, bool) { return tt.stats, true }, tt.dedicated)
			msg := ""
			if len(got) == 1 {
				msg = got[0].Message
			}
			if len(got) > 1 || msg != tt.want {
				t.Errorf("got %+v, want %q", got, tt.want)
			}
			p.Annotations = map[string]string{"kubernetes.io/config.mirror": "x"}
			if got := LocalStorageEvictions([]*corev1.Pod{p}, func(*corev1.Pod) (PodStats, bool) { return tt.stats, true }, tt.dedicated); len(got) != 0 {
				t.Errorf("a critical pod: %+v", got)
			}
		})
	}
}
