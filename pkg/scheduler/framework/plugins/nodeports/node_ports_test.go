package nodeports

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// newPod is upstream's test helper: ports as "PROTO/hostIP/hostPort".
func newPod(host string, hostPortInfos ...string) *corev1.Pod {
	var ports []corev1.ContainerPort
	for _, info := range hostPortInfos {
		parts := strings.Split(info, "/")
		port, _ := strconv.Atoi(parts[2])
		ports = append(ports, corev1.ContainerPort{HostIP: parts[1], HostPort: int32(port), Protocol: corev1.Protocol(parts[0])})
	}
	return &corev1.Pod{Spec: corev1.PodSpec{NodeName: host, Containers: []corev1.Container{{Name: "container", Image: "pause", Ports: ports}}}}
}

func podWithInitPort(sidecar bool, ports ...corev1.ContainerPort) *corev1.Pod {
	c := corev1.Container{Name: "init-container", Image: "pause", Ports: ports}
	if sidecar {
		c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	}
	return &corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{c}}}
}

func podWithHostPort(node string, port int32) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "container", Image: "pause", Ports: []corev1.ContainerPort{{HostPort: port}}}}}}
}

func TestNodePorts(t *testing.T) {
	conflict := framework.NewStatus(framework.Unschedulable, ErrReason)
	skip := framework.NewStatus(framework.Skip)
	for _, tt := range []struct {
		name          string
		pod           *corev1.Pod
		nodeInfo      *framework.NodeInfo
		wantPreFilter *framework.Status
		wantFilter    *framework.Status
	}{
		{name: "skip filter", pod: &corev1.Pod{}, nodeInfo: framework.NewNodeInfo(), wantPreFilter: skip},
		{name: "other port", pod: newPod("m1", "UDP/127.0.0.1/8080"), nodeInfo: framework.NewNodeInfo(newPod("m1", "UDP/127.0.0.1/9090"))},
		{name: "same udp port", pod: newPod("m1", "UDP/127.0.0.1/8080"), nodeInfo: framework.NewNodeInfo(newPod("m1", "UDP/127.0.0.1/8080")), wantFilter: conflict},
		{name: "same tcp port", pod: newPod("m1", "TCP/127.0.0.1/8080"), nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/127.0.0.1/8080")), wantFilter: conflict},
		{name: "different host ip", pod: newPod("m1", "TCP/127.0.0.1/8080"), nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/127.0.0.2/8080"))},
		{name: "different protocol", pod: newPod("m1", "UDP/127.0.0.1/8080"), nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/127.0.0.1/8080"))},
		{name: "second udp port conflict", pod: newPod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"), nodeInfo: framework.NewNodeInfo(newPod("m1", "UDP/127.0.0.1/8080")), wantFilter: conflict},
		{name: "first tcp port conflict", pod: newPod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"), nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")), wantFilter: conflict},
		{name: "first tcp port conflict due to 0.0.0.0 hostIP", pod: newPod("m1", "TCP/0.0.0.0/8001"), nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/127.0.0.1/8001")), wantFilter: conflict},
		{name: "TCP hostPort conflict due to 0.0.0.0 hostIP", pod: newPod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"), nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/127.0.0.1/8001")), wantFilter: conflict},
		{name: "second tcp port conflict to 0.0.0.0 hostIP", pod: newPod("m1", "TCP/127.0.0.1/8001"), nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/0.0.0.0/8001")), wantFilter: conflict},
		{name: "second different protocol", pod: newPod("m1", "UDP/127.0.0.1/8001"), nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/0.0.0.0/8001"))},
		{name: "UDP hostPort conflict due to 0.0.0.0 hostIP", pod: newPod("m1", "UDP/127.0.0.1/8001"), nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")), wantFilter: conflict},
		{name: "empty hostIP and protocol mean 0.0.0.0 and TCP", pod: podWithHostPort("", 8001), nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/127.0.0.1/8001")), wantFilter: conflict},
		{name: "non-sidecar initContainer using hostPort", pod: podWithInitPort(false, corev1.ContainerPort{ContainerPort: 8001, HostPort: 8001, Protocol: corev1.ProtocolTCP}),
			nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/0.0.0.0/8001")), wantPreFilter: skip},
		{name: "TCP hostPort conflict from sidecar initContainer", pod: podWithInitPort(true, corev1.ContainerPort{ContainerPort: 8001, HostPort: 8001, Protocol: corev1.ProtocolTCP}),
			nodeInfo: framework.NewNodeInfo(newPod("m1", "TCP/0.0.0.0/8001")), wantFilter: conflict},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			pl, err := New(ctx, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			state := framework.NewCycleState()
			_, st := pl.(framework.PreFilterPlugin).PreFilter(ctx, state, tt.pod, nil)
			if !st.Equal(tt.wantPreFilter) {
				t.Fatalf("PreFilter() = %v, want %v", st, tt.wantPreFilter)
			}
			if st.IsSkip() {
				return
			}
			got := pl.(framework.FilterPlugin).Filter(ctx, state, tt.pod, tt.nodeInfo)
			if !got.Equal(tt.wantFilter) {
				t.Errorf("Filter() = %v, want %v", got, tt.wantFilter)
			}
			if fits := Fits(tt.pod, tt.nodeInfo); fits != tt.wantFilter.IsSuccess() {
				t.Errorf("Fits() = %v", fits)
			}
		})
	}
}

func TestPreFilterDisabled(t *testing.T) {
	ni := framework.NewNodeInfo()
	ni.SetNode(&corev1.Node{})
	got := (&NodePorts{}).Filter(context.Background(), framework.NewCycleState(), &corev1.Pod{}, ni)
	if got.Code() != framework.Error || !errors.Is(got.AsError(), framework.ErrNotFound) {
		t.Errorf("Filter() without PreFilter = %v, want an Error wrapping ErrNotFound", got)
	}
}

func TestEventsToRegister(t *testing.T) {
	evs, err := (&NodePorts{}).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		ev   framework.ClusterEvent
		hint bool
	}{
		{framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, true},
		{framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}, false},
	}
	if len(evs) != len(want) {
		t.Fatalf("EventsToRegister() = %+v", evs)
	}
	for i, w := range want {
		if evs[i].Event != w.ev || (evs[i].QueueingHintFn != nil) != w.hint {
			t.Errorf("event %d = %+v, want %+v (hint %v)", i, evs[i], w.ev, w.hint)
		}
	}
}

func TestIsSchedulableAfterPodDeleted(t *testing.T) {
	pod := podWithHostPort("", 8080)
	nominated := podWithHostPort("", 8080)
	nominated.Status.NominatedNodeName = "fake-node"
	for _, tt := range []struct {
		name    string
		oldObj  any
		want    framework.QueueingHint
		wantErr bool
	}{
		{name: "backoff-wrong-old-object", oldObj: "not-a-pod", want: framework.Queue, wantErr: true},
		{name: "skip-queue-on-unscheduled", oldObj: &corev1.Pod{}, want: framework.QueueSkip},
		{name: "skip-queue-on-non-hostport", oldObj: &corev1.Pod{Spec: corev1.PodSpec{NodeName: "fake-node"}}, want: framework.QueueSkip},
		{name: "skip-queue-on-unrelated-hostport", oldObj: podWithHostPort("fake-node", 8081), want: framework.QueueSkip},
		{name: "queue-on-released-hostport", oldObj: podWithHostPort("fake-node", 8080), want: framework.Queue},
		{name: "queue-on-nominated-pod-released-hostport", oldObj: nominated, want: framework.Queue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := (&NodePorts{}).isSchedulableAfterPodDeleted(slog.New(slog.DiscardHandler), pod, tt.oldObj, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFilterDoesNotAllocate: Filter makes no allocation per node when
// the ports are free.
func TestFilterDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	pod := newPod("", "TCP/127.0.0.1/8080", "UDP/0.0.0.0/53")
	ni := framework.NewNodeInfo(newPod("m1", "TCP/127.0.0.1/9090", "TCP/0.0.0.0/9091"))
	state := framework.NewCycleState()
	pl := &NodePorts{}
	pl.PreFilter(ctx, state, pod, nil)
	if n := testing.AllocsPerRun(100, func() {
		if st := pl.Filter(ctx, state, pod, ni); !st.IsSuccess() {
			t.Fatal(st)
		}
	}); n != 0 {
		t.Errorf("Filter allocates %v times per node", n)
	}
}
