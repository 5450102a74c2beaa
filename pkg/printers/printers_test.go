package printers

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
)

// now is the fixed server clock used by every test.
var now = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

// ago returns a timestamp d before now.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func ptr[T any](v T) *T { return &v }

func om(name string, created time.Duration) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(created)}
}

func gr(group, res string) schema.GroupResource {
	return schema.GroupResource{Group: group, Resource: res}
}

func mustHandler(t *testing.T, g schema.GroupResource) Handler {
	t.Helper()
	h, ok := For(g)
	if !ok {
		t.Fatalf("For(%v): no handler", g)
	}
	return h
}

func cells(t *testing.T, g schema.GroupResource, obj runtime.Object) []interface{} {
	t.Helper()
	h := mustHandler(t, g)
	c, err := h.Cells(obj, now)
	if err != nil {
		t.Fatalf("Cells(%v): %v", g, err)
	}
	if len(c) != len(h.Columns) {
		t.Fatalf("Cells(%v): %d cells for %d columns: %#v", g, len(c), len(h.Columns), c)
	}
	return c
}

// cell returns the cell under the column named col.
func cell(t *testing.T, g schema.GroupResource, obj runtime.Object, col string) interface{} {
	t.Helper()
	h := mustHandler(t, g)
	c := cells(t, g, obj)
	for i, cd := range h.Columns {
		if cd.Name == col {
			return c[i]
		}
	}
	t.Fatalf("%v has no column %q", g, col)
	return nil
}

// columnNames lists the columns; wide (priority 1) ones end in "*".
func columnNames(h Handler) []string {
	var out []string
	for _, c := range h.Columns {
		n := c.Name
		if c.Priority == 1 {
			n += "*"
		}
		out = append(out, n)
	}
	return out
}

func TestColumns(t *testing.T) {
	tests := []struct {
		gr   schema.GroupResource
		want string
	}{
		{gr("", "pods"), "Name Ready Status Restarts Age IP* Node* Nominated Node* Readiness Gates*"},
		{gr("", "podtemplates"), "Name Containers Images Pod Labels"},
		{gr("", "replicationcontrollers"), "Name Desired Current Ready Age Containers* Images* Selector*"},
		{gr("", "services"), "Name Type Cluster-IP External-IP Port(s) Age Selector*"},
		{gr("", "endpoints"), "Name Endpoints Age"},
		{gr("", "nodes"), "Name Status Roles Age Version Internal-IP* External-IP* OS-Image* Kernel-Version* Container-Runtime*"},
		{gr("", "events"), "Last Seen Type Reason Object Subobject* Source* Message First Seen* Count* Name*"},
		{gr("events.k8s.io", "events"), "Last Seen Type Reason Object Subobject* Source* Message First Seen* Count* Name*"},
		{gr("", "namespaces"), "Name Status Age"},
		{gr("", "secrets"), "Name Type Data Age"},
		{gr("", "serviceaccounts"), "Name Secrets Age"},
		{gr("", "configmaps"), "Name Data Age"},
		{gr("", "persistentvolumes"), "Name Capacity Access Modes Reclaim Policy Status Claim StorageClass VolumeAttributesClass Reason Age VolumeMode*"},
		{gr("", "persistentvolumeclaims"), "Name Status Volume Capacity Access Modes StorageClass VolumeAttributesClass Age VolumeMode*"},
		{gr("", "resourcequotas"), "Name Request Limit Age"},
		{gr("", "limitranges"), "Name Created At"},
		{gr("apps", "deployments"), "Name Ready Up-to-date Available Age Containers* Images* Selector*"},
		{gr("apps", "replicasets"), "Name Desired Current Ready Age Containers* Images* Selector*"},
		{gr("apps", "statefulsets"), "Name Ready Age Containers* Images*"},
		{gr("apps", "daemonsets"), "Name Desired Current Ready Up-to-date Available Node Selector Age Containers* Images* Selector*"},
		{gr("apps", "controllerrevisions"), "Name Controller Revision Age"},
		{gr("batch", "jobs"), "Name Status Completions Duration Age Containers* Images* Selector*"},
		{gr("batch", "cronjobs"), "Name Schedule Timezone Suspend Active Last Schedule Age Containers* Images* Selector*"},
		{gr("coordination.k8s.io", "leases"), "Name Holder Age"},
		{gr("discovery.k8s.io", "endpointslices"), "Name AddressType Ports Endpoints Age"},
		{gr("autoscaling", "horizontalpodautoscalers"), "Name Reference Targets MinPods MaxPods Replicas Age"},
		{gr("policy", "poddisruptionbudgets"), "Name Min Available Max Unavailable Allowed Disruptions Age"},
		{gr("rbac.authorization.k8s.io", "roles"), "Name Created At"},
		{gr("rbac.authorization.k8s.io", "clusterroles"), "Name Created At"},
		{gr("rbac.authorization.k8s.io", "rolebindings"), "Name Role Age Users* Groups* ServiceAccounts*"},
		{gr("rbac.authorization.k8s.io", "clusterrolebindings"), "Name Role Age Users* Groups* ServiceAccounts*"},
		{gr("scheduling.k8s.io", "priorityclasses"), "Name Value Global-Default Age PreemptionPolicy"},
		{gr("storage.k8s.io", "storageclasses"), "Name Provisioner ReclaimPolicy VolumeBindingMode AllowVolumeExpansion Age"},
		{gr("storage.k8s.io", "csidrivers"), "Name AttachRequired PodInfoOnMount StorageCapacity TokenRequests RequiresRepublish Modes Age"},
		{gr("storage.k8s.io", "csinodes"), "Name Drivers Age"},
		{gr("storage.k8s.io", "csistoragecapacities"), "Name Created At"},
		{gr("storage.k8s.io", "volumeattributesclasses"), "Name DriverName Age"},
		{gr("storage.k8s.io", "volumeattachments"), "Name Attacher PV Node Attached Age"},
		{gr("networking.k8s.io", "ingresses"), "Name Class Hosts Address Ports Age"},
		{gr("networking.k8s.io", "ingressclasses"), "Name Controller Parameters Age"},
		{gr("networking.k8s.io", "networkpolicies"), "Name Pod-Selector Age"},
		{gr("networking.k8s.io", "ipaddresses"), "Name ParentRef"},
		{gr("", "componentstatuses"), "Name Status Message Error"},
		{gr("networking.k8s.io", "servicecidrs"), "Name CIDRs Age"},
		{gr("node.k8s.io", "runtimeclasses"), "Name Handler Age"},
		{gr("resource.k8s.io", "deviceclasses"), "Name Age"},
		{gr("resource.k8s.io", "resourceclaims"), "Name State Age"},
		{gr("resource.k8s.io", "resourceclaimtemplates"), "Name Age"},
		{gr("resource.k8s.io", "resourceslices"), "Name Node Driver Pool Age"},
		{gr("resource.k8s.io", "devicetaintrules"), "Name Key Value Effect TimeAdded Age"},
		{gr("storagemigration.k8s.io", "storageversionmigrations"), "Name Resource"},
		{gr("admissionregistration.k8s.io", "mutatingwebhookconfigurations"), "Name Webhooks Age"},
		{gr("admissionregistration.k8s.io", "validatingwebhookconfigurations"), "Name Webhooks Age"},
		{gr("admissionregistration.k8s.io", "validatingadmissionpolicies"), "Name Validations ParamKind Age"},
		{gr("admissionregistration.k8s.io", "validatingadmissionpolicybindings"), "Name PolicyName ParamRef Age"},
		{gr("admissionregistration.k8s.io", "mutatingadmissionpolicies"), "Name Mutations ParamKind Age"},
		{gr("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"), "Name PolicyName ParamRef Age"},
		{gr("certificates.k8s.io", "certificatesigningrequests"), "Name Age SignerName Requestor RequestedDuration Condition"},
		{gr("certificates.k8s.io", "clustertrustbundles"), "Name SignerName"},
		{gr("certificates.k8s.io", "podcertificaterequests"), "Name PodName ServiceAccountName NodeName SignerName State"},
		{gr("apiextensions.k8s.io", "customresourcedefinitions"), "Name Scope Versions Created At Group* Kind* ShortNames* Established*"},
		{gr("apiregistration.k8s.io", "apiservices"), "Name Service Available Age"},
		{gr("flowcontrol.apiserver.k8s.io", "flowschemas"), "Name PriorityLevel MatchingPrecedence DistinguisherMethod Age MissingPL"},
		{gr("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"), "Name Type NominalConcurrencyShares Queues HandSize QueueLengthLimit Age"},
	}
	seen := map[schema.GroupResource]bool{}
	for _, tt := range tests {
		seen[tt.gr] = true
		h := mustHandler(t, tt.gr)
		if got := strings.Join(columnNames(h), " "); got != tt.want {
			t.Errorf("%v columns:\n got  %s\n want %s", tt.gr, got, tt.want)
		}
	}
	for _, g := range Resources() {
		if !seen[g] {
			t.Errorf("%v is registered but has no column expectation", g)
		}
	}
	if _, ok := For(gr("example.com", "widgets")); ok {
		t.Errorf("For(unknown) = ok")
	}
}

func TestColumnInvariants(t *testing.T) {
	metaDoc := metav1.ObjectMeta{}.SwaggerDoc()
	validTypes := map[string]bool{"string": true, "integer": true, "boolean": true, "date": true, "number": true}
	for _, g := range Resources() {
		h := mustHandler(t, g)
		names := map[string]bool{}
		hasName := false
		for i, c := range h.Columns {
			if !validTypes[c.Type] {
				t.Errorf("%v column %q: type %q", g, c.Name, c.Type)
			}
			if c.Priority != 0 && c.Priority != 1 {
				t.Errorf("%v column %q: priority %d", g, c.Name, c.Priority)
			}
			if names[c.Name] {
				t.Errorf("%v: duplicate column %q", g, c.Name)
			}
			names[c.Name] = true
			// upstream's runtimeclass Handler column reads a key ObjectMeta lacks
			if c.Description == "" && !(g.Resource == "runtimeclasses" && c.Name == "Handler") {
				t.Errorf("%v column %q: empty description", g, c.Name)
			}
			if c.Name == "Name" {
				hasName = true
				// upstream's storageversionmigrations Name column has no format
				wantFormat := "name"
				if g.Resource == "storageversionmigrations" {
					wantFormat = ""
				}
				if c.Type != "string" || c.Format != wantFormat || c.Description != metaDoc["name"] {
					t.Errorf("%v Name column = %+v", g, c)
				}
				if i != 0 && g.Resource != "events" {
					t.Errorf("%v: Name is column %d", g, i)
				}
			}
			if c.Name == "Age" && (c.Type != "string" || c.Description != metaDoc["creationTimestamp"]) {
				t.Errorf("%v Age column = %+v", g, c)
			}
		}
		if !hasName {
			t.Errorf("%v has no Name column", g)
		}
	}
}

func TestForReturnsCopies(t *testing.T) {
	h := mustHandler(t, gr("", "pods"))
	h.Columns[0].Name = "mutated"
	if again := mustHandler(t, gr("", "pods")); again.Columns[0].Name != "Name" {
		t.Fatalf("For shares its column slice: %q", again.Columns[0].Name)
	}
	d := Default()
	d.Columns[1].Name = "mutated"
	if Default().Columns[1].Name != "Created At" {
		t.Fatalf("Default shares its column slice")
	}
}

func TestDefault(t *testing.T) {
	h := Default()
	if got := strings.Join(columnNames(h), "|"); got != "Name|Created At" {
		t.Fatalf("columns %s", got)
	}
	if h.Columns[1].Type != "date" {
		t.Fatalf("Created At type %q", h.Columns[1].Type)
	}
	obj := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", CreationTimestamp: metav1.NewTime(time.Date(2023, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)))}}
	c, err := h.Cells(obj, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := []interface{}{"r", "2023-01-02T02:04:05Z"}; !reflect.DeepEqual(c, want) {
		t.Fatalf("cells %#v, want %#v", c, want)
	}
	c = cells(t, gr("rbac.authorization.k8s.io", "clusterroles"), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "admin"}})
	if c[1] != "0001-01-01T00:00:00Z" {
		t.Fatalf("zero created at %v", c[1])
	}
}

func TestWrongType(t *testing.T) {
	for _, g := range Resources() {
		h := mustHandler(t, g)
		if _, err := h.Cells(&corev1.Binding{}, now); err == nil && h.Columns[1].Name != "Created At" {
			t.Errorf("%v: printing a Binding did not fail", g)
		}
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		ts   metav1.Time
		want string
	}{
		{metav1.Time{}, "<unknown>"},
		{ago(30 * time.Second), "30s"},
		{ago(5*time.Minute + 7*time.Second), "5m7s"},
		{ago(90 * time.Minute), "90m"},
		{ago(5*time.Hour + 3*time.Minute), "5h3m"},
		{ago(3*24*time.Hour + 4*time.Hour), "3d4h"},
		{ago(400 * 24 * time.Hour), "400d"},
		{metav1.NewTime(now.Add(10 * time.Second)), "<invalid>"},
	}
	for _, tt := range tests {
		got := cell(t, gr("", "namespaces"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", CreationTimestamp: tt.ts}}, "Age")
		if got != tt.want {
			t.Errorf("age(%v) = %v, want %s", tt.ts, got, tt.want)
		}
	}
}

func running(name string, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Ready: true, RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func TestPodCells(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	twoContainers := corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}
	tests := []struct {
		name string
		pod  corev1.Pod
		// ready, status, restarts
		want [3]string
	}{
		{
			name: "running ready",
			pod: corev1.Pod{Spec: twoContainers, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{running("a", 0), running("b", 0)}}},
			want: [3]string{"2/2", "Running", "0"},
		},
		{
			name: "pending no statuses",
			pod:  corev1.Pod{Spec: twoContainers, Status: corev1.PodStatus{Phase: corev1.PodPending}},
			want: [3]string{"0/2", "Pending", "0"},
		},
		{
			name: "crashloop with last restart",
			pod: corev1.Pod{Spec: twoContainers, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{
					{Name: "a", RestartCount: 4,
						State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
						LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: ago(3 * time.Minute)}}},
					running("b", 1),
				}}},
			want: [3]string{"1/2", "CrashLoopBackOff", "5 (3m ago)"},
		},
		{
			name: "restarts without termination time",
			pod: corev1.Pod{Spec: twoContainers, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{running("a", 2), running("b", 0)}}},
			want: [3]string{"2/2", "Running", "2"},
		},
		{
			name: "completed",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded,
				ContainerStatuses: []corev1.ContainerStatus{{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}}}},
			want: [3]string{"0/1", "Completed", "0"},
		},
		{
			name: "completed but another still running and ready",
			pod: corev1.Pod{Spec: twoContainers, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
				ContainerStatuses: []corev1.ContainerStatus{
					running("a", 0),
					{Name: "b", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
				}}},
			want: [3]string{"1/2", "Running", "0"},
		},
		{
			name: "completed but another still running, not ready",
			pod: corev1.Pod{Spec: twoContainers, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{
					running("a", 0),
					{Name: "b", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
				}}},
			want: [3]string{"1/2", "NotReady", "0"},
		},
		{
			name: "terminated without reason: signal",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}, Status: corev1.PodStatus{Phase: corev1.PodFailed,
				ContainerStatuses: []corev1.ContainerStatus{{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Signal: 9, ExitCode: 137}}}}}},
			want: [3]string{"0/1", "Signal:9", "0"},
		},
		{
			name: "terminated without reason: exit code",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}, Status: corev1.PodStatus{Phase: corev1.PodFailed,
				ContainerStatuses: []corev1.ContainerStatus{{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}}}},
			want: [3]string{"0/1", "ExitCode:2", "0"},
		},
		{
			name: "first container's reason wins",
			pod: corev1.Pod{Spec: twoContainers, Status: corev1.PodStatus{Phase: corev1.PodPending,
				ContainerStatuses: []corev1.ContainerStatus{
					{Name: "a", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}},
					{Name: "b", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
				}}},
			want: [3]string{"0/2", "ImagePullBackOff", "0"},
		},
		{
			name: "init containers progressing",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i1"}, {Name: "i2"}}, Containers: []corev1.Container{{Name: "a"}}},
				Status: corev1.PodStatus{Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{
						{Name: "i1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
						{Name: "i2", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
					},
					ContainerStatuses: []corev1.ContainerStatus{{Name: "a", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}}},
			want: [3]string{"0/1", "Init:1/2", "0"},
		},
		{
			name: "init waiting PodInitializing counts as progress",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i1"}}, Containers: []corev1.Container{{Name: "a"}}},
				Status: corev1.PodStatus{Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "i1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}}},
			want: [3]string{"0/1", "Init:0/1", "0"},
		},
		{
			name: "init crashloop counts init restarts",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i1"}}, Containers: []corev1.Container{{Name: "a"}}},
				Status: corev1.PodStatus{Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "i1", RestartCount: 3,
						State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
						LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: ago(10 * time.Second)}}}}}},
			want: [3]string{"0/1", "Init:CrashLoopBackOff", "3 (10s ago)"},
		},
		{
			name: "init failed with reason",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i1"}}, Containers: []corev1.Container{{Name: "a"}}},
				Status: corev1.PodStatus{Phase: corev1.PodFailed,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "i1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}}},
			want: [3]string{"0/1", "Init:Error", "0"},
		},
		{
			name: "init failed by signal",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i1"}}, Containers: []corev1.Container{{Name: "a"}}},
				Status: corev1.PodStatus{Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "i1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Signal: 9}}}}}},
			want: [3]string{"0/1", "Init:Signal:9", "0"},
		},
		{
			name: "init failed by exit code",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i1"}}, Containers: []corev1.Container{{Name: "a"}}},
				Status: corev1.PodStatus{Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "i1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}}}}}},
			want: [3]string{"0/1", "Init:ExitCode:3", "0"},
		},
		{
			name: "sidecar started and ready counts towards ready and total",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "side", RestartPolicy: &always}}, Containers: []corev1.Container{{Name: "a"}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning,
					Conditions: []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}},
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "side", Ready: true, Started: ptr(true), RestartCount: 2,
						State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
						LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: ago(2 * time.Hour)}}}},
					ContainerStatuses: []corev1.ContainerStatus{running("a", 1)}}},
			want: [3]string{"2/2", "Running", "3 (120m ago)"},
		},
		{
			name: "sidecar not started yet",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "side", RestartPolicy: &always}}, Containers: []corev1.Container{{Name: "a"}}},
				Status: corev1.PodStatus{Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "side", Started: ptr(false), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}},
			want: [3]string{"0/2", "Init:0/1", "0"},
		},
		{
			name: "terminating",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: ptr(ago(time.Second))}, Spec: twoContainers,
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("a", 0), running("b", 0)}}},
			want: [3]string{"2/2", "Terminating", "0"},
		},
		{
			name: "deleted but already succeeded keeps its status",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: ptr(ago(time.Second))}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}},
				Status: corev1.PodStatus{Phase: corev1.PodSucceeded,
					ContainerStatuses: []corev1.ContainerStatus{{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}}}},
			want: [3]string{"0/1", "Completed", "0"},
		},
		{
			name: "node lost",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: ptr(ago(time.Second))}, Spec: twoContainers,
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Reason: "NodeLost"}},
			want: [3]string{"0/2", "Unknown", "0"},
		},
		{
			name: "status reason overrides phase",
			pod:  corev1.Pod{Spec: twoContainers, Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}},
			want: [3]string{"0/2", "Evicted", "0"},
		},
		{
			name: "scheduling gated",
			pod: corev1.Pod{Spec: twoContainers, Status: corev1.PodStatus{Phase: corev1.PodPending,
				Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}}},
			want: [3]string{"0/2", "SchedulingGated", "0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := tt.pod
			pod.Name = "p"
			c := cells(t, gr("", "pods"), &pod)
			got := [3]string{c[1].(string), c[2].(string), c[3].(string)}
			if got != tt.want {
				t.Errorf("ready/status/restarts = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPodWideAndConditions(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: om("web", 2*time.Hour)}
	c := cells(t, gr("", "pods"), pod)
	want := []interface{}{"web", "0/0", "", "0", "120m", "<none>", "<none>", "<none>", "<none>"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("empty pod cells %#v\nwant %#v", c, want)
	}

	pod = &corev1.Pod{
		ObjectMeta: om("web", time.Minute),
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "a"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "g1"}, {ConditionType: "g2"}, {ConditionType: "g3"}}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded, PodIP: "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.9"}, {IP: "fd00::9"}}, NominatedNodeName: "n2",
			Conditions: []corev1.PodCondition{{Type: "g1", Status: corev1.ConditionTrue}, {Type: "g2", Status: corev1.ConditionFalse}}},
	}
	c = cells(t, gr("", "pods"), pod)
	if got := c[5:]; !reflect.DeepEqual(got, []interface{}{"10.0.0.9", "n1", "n2", "1/3"}) {
		t.Errorf("wide cells %#v", got)
	}
	pod.Status.PodIPs = nil
	if got := cell(t, gr("", "pods"), pod, "IP"); got != "10.0.0.1" {
		t.Errorf("IP fallback %v", got)
	}

	h := mustHandler(t, gr("", "pods"))
	if conds := h.Conditions(pod); len(conds) != 1 || conds[0].Type != metav1.RowCompleted || conds[0].Reason != "Succeeded" {
		t.Errorf("succeeded conditions %+v", conds)
	}
	pod.Status.Phase = corev1.PodRunning
	if conds := h.Conditions(pod); conds != nil {
		t.Errorf("running conditions %+v", conds)
	}
	if mustHandler(t, gr("apps", "deployments")).Conditions != nil {
		t.Errorf("deployments have a Conditions func")
	}
}

func TestNodeCells(t *testing.T) {
	base := func() *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n1", CreationTimestamp: ago(3 * 24 * time.Hour)},
			Status: corev1.NodeStatus{
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OSImage: "Debian", KernelVersion: "6.1.0", ContainerRuntimeVersion: "containerd://2.0"},
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "n1"}, {Type: corev1.NodeInternalIP, Address: "192.168.1.5"}, {Type: corev1.NodeInternalIP, Address: "192.168.1.6"}},
			},
		}
	}
	n := base()
	c := cells(t, gr("", "nodes"), n)
	want := []interface{}{"n1", "Ready", "<none>", "3d", "v1.37.2", "192.168.1.5", "<none>", "Debian", "6.1.0", "containerd://2.0"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("cells %#v\nwant %#v", c, want)
	}

	tests := []struct {
		name   string
		mutate func(*corev1.Node)
		status string
		roles  string
	}{
		{"not ready", func(n *corev1.Node) { n.Status.Conditions[1].Status = corev1.ConditionFalse }, "NotReady", "<none>"},
		{"ready unknown", func(n *corev1.Node) { n.Status.Conditions[1].Status = corev1.ConditionUnknown }, "NotReady", "<none>"},
		{"no ready condition", func(n *corev1.Node) { n.Status.Conditions = nil }, "Unknown", "<none>"},
		{"cordoned", func(n *corev1.Node) { n.Spec.Unschedulable = true }, "Ready,SchedulingDisabled", "<none>"},
		{"cordoned unknown", func(n *corev1.Node) { n.Spec.Unschedulable = true; n.Status.Conditions = nil }, "Unknown,SchedulingDisabled", "<none>"},
		{"roles", func(n *corev1.Node) {
			n.Labels = map[string]string{
				"node-role.kubernetes.io/worker":        "",
				"node-role.kubernetes.io/control-plane": "true",
				"node-role.kubernetes.io/":              "ignored",
				"kubernetes.io/role":                    "master",
				"kubernetes.io/hostname":                "n1",
			}
		}, "Ready", "control-plane,master,worker"},
		{"duplicate role", func(n *corev1.Node) {
			n.Labels = map[string]string{"node-role.kubernetes.io/master": "", "kubernetes.io/role": "master"}
		}, "Ready", "master"},
		{"empty kubernetes.io/role", func(n *corev1.Node) { n.Labels = map[string]string{"kubernetes.io/role": ""} }, "Ready", "<none>"},
	}
	for _, tt := range tests {
		n := base()
		tt.mutate(n)
		c := cells(t, gr("", "nodes"), n)
		if c[1] != tt.status || c[2] != tt.roles {
			t.Errorf("%s: status %q roles %q, want %q %q", tt.name, c[1], c[2], tt.status, tt.roles)
		}
	}

	n = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bare"}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "1.2.3.4"}}}}
	c = cells(t, gr("", "nodes"), n)
	want = []interface{}{"bare", "Unknown", "<none>", "<unknown>", "", "<none>", "1.2.3.4", "<unknown>", "<unknown>", "<unknown>"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("bare node cells %#v\nwant %#v", c, want)
	}
}

func TestServiceCells(t *testing.T) {
	tests := []struct {
		name string
		svc  corev1.Service
		want []interface{}
	}{
		{
			name: "cluster ip",
			svc: corev1.Service{ObjectMeta: om("kube-dns", time.Hour), Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
				Ports:    []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP}, {Port: 53, Protocol: corev1.ProtocolTCP}, {Port: 9153, Protocol: corev1.ProtocolTCP}},
				Selector: map[string]string{"k8s-app": "kube-dns"},
			}},
			want: []interface{}{"kube-dns", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP,9153/TCP", "60m", "k8s-app=kube-dns"},
		},
		{
			name: "headless without ports or selector",
			svc: corev1.Service{ObjectMeta: om("h", time.Minute), Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", ClusterIPs: []string{"None"},
			}},
			want: []interface{}{"h", "ClusterIP", "None", "<none>", "<none>", "60s", "<none>"},
		},
		{
			name: "node port with external ips, dual stack",
			svc: corev1.Service{ObjectMeta: om("np", time.Minute), Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.0.0.5", "fd00::5"}, ExternalIPs: []string{"1.1.1.1", "2.2.2.2"},
				Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}},
			}},
			want: []interface{}{"np", "NodePort", "10.0.0.5", "1.1.1.1,2.2.2.2", "80:30080/TCP", "60s", "<none>"},
		},
		{
			name: "load balancer pending",
			svc: corev1.Service{ObjectMeta: om("lb", time.Minute), Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.0.0.6"},
				Ports: []corev1.ServicePort{{Port: 443, NodePort: 31443, Protocol: corev1.ProtocolTCP}},
			}},
			want: []interface{}{"lb", "LoadBalancer", "10.0.0.6", "<pending>", "443:31443/TCP", "60s", "<none>"},
		},
		{
			name: "load balancer with ingress (sorted, deduplicated, untruncated) and external ips",
			svc: corev1.Service{ObjectMeta: om("lb", time.Minute), Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.0.0.6"}, ExternalIPs: []string{"9.9.9.9"},
			}, Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
				{IP: "5.5.5.5"}, {Hostname: "a-very-long-hostname.example.com"}, {IP: "5.5.5.5"}, {IP: "4.4.4.4", Hostname: "ignored"},
			}}}},
			want: []interface{}{"lb", "LoadBalancer", "10.0.0.6", "4.4.4.4,5.5.5.5,a-very-long-hostname.example.com,9.9.9.9", "<none>", "60s", "<none>"},
		},
		{
			name: "external name",
			svc: corev1.Service{ObjectMeta: om("ext", time.Minute), Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeExternalName, ExternalName: "example.com",
			}},
			want: []interface{}{"ext", "ExternalName", "<none>", "example.com", "<none>", "60s", "<none>"},
		},
		{
			name: "no type, clusterIP only",
			svc:  corev1.Service{ObjectMeta: om("odd", time.Minute), Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.7"}},
			want: []interface{}{"odd", "", "10.0.0.7", "<unknown>", "<none>", "60s", "<none>"},
		},
	}
	for _, tt := range tests {
		if got := cells(t, gr("", "services"), &tt.svc); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got  %#v\n want %#v", tt.name, got, tt.want)
		}
	}
}

func TestEndpointsCells(t *testing.T) {
	addrs := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	tests := []struct {
		name string
		subs []corev1.EndpointSubset
		want string
	}{
		{"none", nil, "<none>"},
		{"empty subset", []corev1.EndpointSubset{{}}, ""},
		{"two", []corev1.EndpointSubset{{Addresses: addrs("10.1.0.20", "10.1.0.21"), Ports: []corev1.EndpointPort{{Port: 53}}}}, "10.1.0.20:53,10.1.0.21:53"},
		{"ipv6", []corev1.EndpointSubset{{Addresses: addrs("fd00::1"), Ports: []corev1.EndpointPort{{Port: 80}}}}, "[fd00::1]:80"},
		{"more", []corev1.EndpointSubset{{Addresses: addrs("10.1.0.20", "10.1.0.21"), Ports: []corev1.EndpointPort{{Port: 53}, {Port: 53}, {Port: 9153}}}},
			"10.1.0.20:53,10.1.0.21:53,10.1.0.20:53 + 3 more..."},
		{"headless no ports", []corev1.EndpointSubset{{Addresses: addrs("1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4")}}, "1.1.1.1,2.2.2.2,3.3.3.3 + 1 more..."},
		{"exactly three", []corev1.EndpointSubset{{Addresses: addrs("1.1.1.1", "2.2.2.2", "3.3.3.3")}}, "1.1.1.1,2.2.2.2,3.3.3.3"},
	}
	for _, tt := range tests {
		ep := &corev1.Endpoints{ObjectMeta: om("e", time.Minute), Subsets: tt.subs}
		if got := cell(t, gr("", "endpoints"), ep, "Endpoints"); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEndpointSliceCells(t *testing.T) {
	es := &discoveryv1.EndpointSlice{ObjectMeta: om("s", time.Minute), AddressType: discoveryv1.AddressTypeIPv4}
	c := cells(t, gr("discovery.k8s.io", "endpointslices"), es)
	if want := []interface{}{"s", "IPv4", "<unset>", "<unset>", "60s"}; !reflect.DeepEqual(c, want) {
		t.Errorf("empty: %#v", c)
	}
	es.Ports = []discoveryv1.EndpointPort{{Port: ptr(int32(80))}, {Name: ptr("http")}, {}, {Port: ptr(int32(443))}}
	es.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1", "10.0.0.2"}}, {Addresses: []string{"10.0.0.3"}}}
	c = cells(t, gr("discovery.k8s.io", "endpointslices"), es)
	if want := []interface{}{"s", "IPv4", "80,http,* + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3", "60s"}; !reflect.DeepEqual(c, want) {
		t.Errorf("full: %#v", c)
	}
}

func TestEventCells(t *testing.T) {
	e := &corev1.Event{
		ObjectMeta:     om("web.17a", time.Hour),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", FieldPath: "spec.containers{app}"},
		Reason:         "Pulled", Message: "  Successfully pulled image \n", Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "kubelet", Host: "n1"},
		FirstTimestamp: ago(10 * time.Minute), LastTimestamp: ago(2 * time.Minute), Count: 4,
	}
	c := cells(t, gr("", "events"), e)
	want := []interface{}{"2m", "Normal", "Pulled", "pod/web", "spec.containers{app}", "kubelet, n1", "Successfully pulled image", "10m", int64(4), "web.17a"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("core event:\n got  %#v\n want %#v", c, want)
	}

	// new-style core event: eventTime only, reporting controller, no count
	e = &corev1.Event{
		ObjectMeta:          om("x", time.Hour),
		InvolvedObject:      corev1.ObjectReference{Kind: "Node"},
		EventTime:           metav1.NewMicroTime(now.Add(-30 * time.Second)),
		ReportingController: "scheduler", Type: corev1.EventTypeWarning, Reason: "FailedScheduling",
	}
	c = cells(t, gr("", "events"), e)
	want = []interface{}{"30s", "Warning", "FailedScheduling", "node", "", "scheduler", "", "30s", int64(1), "x"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("new-style core event:\n got  %#v\n want %#v", c, want)
	}

	// events.k8s.io/v1 with a series
	ev := &eventsv1.Event{
		ObjectMeta: om("y", time.Hour),
		EventTime:  metav1.NewMicroTime(now.Add(-20 * time.Minute)),
		Series:     &eventsv1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(now.Add(-5 * time.Second))},
		Regarding:  corev1.ObjectReference{Kind: "Deployment", Name: "web"},
		Note:       "Scaled up", Reason: "ScalingReplicaSet", Type: "Normal",
		ReportingController: "deployment-controller", ReportingInstance: "cm-1",
	}
	c = cells(t, gr("events.k8s.io", "events"), ev)
	want = []interface{}{"5s", "Normal", "ScalingReplicaSet", "deployment/web", "", "deployment-controller, cm-1", "Scaled up", "20m", int64(7), "y"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("events.k8s.io event:\n got  %#v\n want %#v", c, want)
	}
	// and the core group handler accepts it too
	if _, err := mustHandler(t, gr("", "events")).Cells(ev, now); err != nil {
		t.Errorf("core handler on events/v1: %v", err)
	}
}

func TestWorkloadCells(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1"}, {Name: "log", Image: "busybox"}}},
	}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

	d := &appsv1.Deployment{ObjectMeta: om("web", 5*time.Minute),
		Spec:   appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Selector: sel, Template: tmpl},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2}}
	want := []interface{}{"web", "2/3", int64(3), int64(2), "5m", "app,log", "nginx:1,busybox", "app=web"}
	if c := cells(t, gr("apps", "deployments"), d); !reflect.DeepEqual(c, want) {
		t.Errorf("deployment %#v", c)
	}
	d.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}
	if got := cell(t, gr("apps", "deployments"), d, "Selector"); got != "<invalid>" {
		t.Errorf("invalid deployment selector %q", got)
	}
	d.Spec.Selector = nil
	if got := cell(t, gr("apps", "deployments"), d, "Selector"); got != "" {
		t.Errorf("nil deployment selector %q", got)
	}

	rs := &appsv1.ReplicaSet{ObjectMeta: om("web-1", 5*time.Minute),
		Spec:   appsv1.ReplicaSetSpec{Replicas: ptr(int32(3)), Selector: sel, Template: tmpl},
		Status: appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 1}}
	want = []interface{}{"web-1", int64(3), int64(3), int64(1), "5m", "app,log", "nginx:1,busybox", "app=web"}
	if c := cells(t, gr("apps", "replicasets"), rs); !reflect.DeepEqual(c, want) {
		t.Errorf("replicaset %#v", c)
	}
	rs.Spec.Selector = nil
	if got := cell(t, gr("apps", "replicasets"), rs, "Selector"); got != "<none>" {
		t.Errorf("nil replicaset selector %q", got)
	}

	ss := &appsv1.StatefulSet{ObjectMeta: om("db", time.Minute),
		Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(2)), Template: tmpl}, Status: appsv1.StatefulSetStatus{ReadyReplicas: 2}}
	want = []interface{}{"db", "2/2", "60s", "app,log", "nginx:1,busybox"}
	if c := cells(t, gr("apps", "statefulsets"), ss); !reflect.DeepEqual(c, want) {
		t.Errorf("statefulset %#v", c)
	}

	ds := &appsv1.DaemonSet{ObjectMeta: om("agent", time.Minute),
		Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2,
			UpdatedNumberScheduled: 1, NumberAvailable: 2}}
	want = []interface{}{"agent", int64(3), int64(3), int64(2), int64(1), int64(2), "<none>", "60s", "app,log", "nginx:1,busybox", "app=web"}
	if c := cells(t, gr("apps", "daemonsets"), ds); !reflect.DeepEqual(c, want) {
		t.Errorf("daemonset %#v", c)
	}
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	if got := cell(t, gr("apps", "daemonsets"), ds, "Node Selector"); got != "kubernetes.io/os=linux" {
		t.Errorf("node selector %q", got)
	}

	cr := &appsv1.ControllerRevision{ObjectMeta: om("db-abc", time.Minute), Revision: 4}
	want = []interface{}{"db-abc", "<none>", int64(4), "60s"}
	if c := cells(t, gr("apps", "controllerrevisions"), cr); !reflect.DeepEqual(c, want) {
		t.Errorf("controllerrevision %#v", c)
	}
	cr.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", Controller: ptr(true)}}
	if got := cell(t, gr("apps", "controllerrevisions"), cr, "Controller"); got != "statefulset.apps/db" {
		t.Errorf("controller %q", got)
	}
	cr.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", Controller: ptr(true)}}
	if got := cell(t, gr("apps", "controllerrevisions"), cr, "Controller"); got != "pod/p" {
		t.Errorf("core controller %q", got)
	}
	cr.OwnerReferences = []metav1.OwnerReference{{APIVersion: "a/b/c", Kind: "X", Name: "p", Controller: ptr(true)}}
	if _, err := mustHandler(t, gr("apps", "controllerrevisions")).Cells(cr, now); err == nil {
		t.Errorf("bad owner apiVersion did not fail")
	}

	rc := &corev1.ReplicationController{ObjectMeta: om("old", time.Minute),
		Spec:   corev1.ReplicationControllerSpec{Replicas: ptr(int32(2)), Selector: map[string]string{"app": "old"}, Template: &tmpl},
		Status: corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 2}}
	want = []interface{}{"old", int64(2), int64(2), int64(2), "60s", "app,log", "nginx:1,busybox", "app=old"}
	if c := cells(t, gr("", "replicationcontrollers"), rc); !reflect.DeepEqual(c, want) {
		t.Errorf("rc %#v", c)
	}

	pt := &corev1.PodTemplate{ObjectMeta: om("t", time.Minute), Template: tmpl}
	want = []interface{}{"t", "app,log", "nginx:1,busybox", "app=web"}
	if c := cells(t, gr("", "podtemplates"), pt); !reflect.DeepEqual(c, want) {
		t.Errorf("podtemplate %#v", c)
	}
}

func TestJobCells(t *testing.T) {
	tests := []struct {
		name string
		job  batchv1.Job
		want []interface{} // status, completions, duration
	}{
		{"running, completions", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(3))},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: ptr(ago(90 * time.Second))}},
			[]interface{}{"Running", "1/3", "90s"}},
		{"complete", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(1))},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: ptr(ago(time.Hour)), CompletionTime: ptr(ago(50 * time.Minute)),
				Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}},
			[]interface{}{"Complete", "1/1", "10m"}},
		{"failed", batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}}},
			[]interface{}{"Failed", "0/1", ""}},
		{"work queue", batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr(int32(4))}},
			[]interface{}{"Running", "0/1 of 4", ""}},
		{"suspended", batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}}},
			[]interface{}{"Suspended", "0/1", ""}},
		{"failure target", batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}}}},
			[]interface{}{"FailureTarget", "0/1", ""}},
		{"success criteria met", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(1))}, Status: batchv1.JobStatus{Succeeded: 1,
			Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}}}},
			[]interface{}{"SuccessCriteriaMet", "1/1", ""}},
		{"terminating beats suspended", batchv1.Job{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: ptr(ago(0))},
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}}},
			[]interface{}{"Terminating", "0/1", ""}},
		{"false condition ignored", batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionFalse}}}},
			[]interface{}{"Running", "0/1", ""}},
	}
	for _, tt := range tests {
		job := tt.job
		job.Name = "j"
		c := cells(t, gr("batch", "jobs"), &job)
		if got := c[1:4]; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %#v, want %#v", tt.name, got, tt.want)
		}
		if c[7] != "<none>" {
			t.Errorf("%s: selector %v", tt.name, c[7])
		}
	}
}

func TestCronJobCells(t *testing.T) {
	cj := &batchv1.CronJob{ObjectMeta: om("nightly", 48*time.Hour),
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", Suspend: ptr(false),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}},
		Status: batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "a"}}, LastScheduleTime: ptr(ago(9 * time.Hour))}}
	want := []interface{}{"nightly", "0 3 * * *", "<none>", "False", int64(1), "9h", "2d", "c", "i", "<none>"}
	if c := cells(t, gr("batch", "cronjobs"), cj); !reflect.DeepEqual(c, want) {
		t.Errorf("cronjob %#v", c)
	}
	cj.Spec.Suspend, cj.Spec.TimeZone, cj.Status.LastScheduleTime = nil, ptr("Etc/UTC"), nil
	c := cells(t, gr("batch", "cronjobs"), cj)
	if c[2] != "Etc/UTC" || c[3] != "<unset>" || c[5] != "<none>" {
		t.Errorf("cronjob tz/suspend/last %#v", c[2:6])
	}
	cj.Spec.Suspend = ptr(true)
	if got := cell(t, gr("batch", "cronjobs"), cj, "Suspend"); got != "True" {
		t.Errorf("suspend %v", got)
	}
}

func TestConfigAndStorageCells(t *testing.T) {
	check := func(name string, g schema.GroupResource, obj runtime.Object, want []interface{}) {
		t.Helper()
		if got := cells(t, g, obj); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %#v\n want %#v", name, got, want)
		}
	}
	check("namespace", gr("", "namespaces"), &corev1.Namespace{ObjectMeta: om("kube-system", time.Hour), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
		[]interface{}{"kube-system", "Active", "60m"})
	check("secret", gr("", "secrets"), &corev1.Secret{ObjectMeta: om("s", time.Hour), Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"a": nil, "b": nil}, StringData: map[string]string{"b": "", "c": ""}},
		[]interface{}{"s", "Opaque", int64(3), "60m"})
	check("configmap", gr("", "configmaps"), &corev1.ConfigMap{ObjectMeta: om("cm", time.Hour), Data: map[string]string{"a": ""}, BinaryData: map[string][]byte{"b": nil}},
		[]interface{}{"cm", int64(2), "60m"})
	check("serviceaccount", gr("", "serviceaccounts"), &corev1.ServiceAccount{ObjectMeta: om("default", time.Hour)},
		[]interface{}{"default", int64(0), "60m"})

	block := corev1.PersistentVolumeBlock
	check("pv", gr("", "persistentvolumes"), &corev1.PersistentVolume{ObjectMeta: om("pv1", time.Hour),
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteOnce, corev1.ReadWriteOnce, corev1.ReadOnlyMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: "default", Name: "data"},
			StorageClassName:              "standard",
			VolumeMode:                    &block,
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}},
		[]interface{}{"pv1", "10Gi", "RWO,ROX,RWOP", "Retain", "Bound", "default/data", "standard", "<unset>", "", "60m", "Block"})
	check("pv terminating, beta class", gr("", "persistentvolumes"), &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv2", DeletionTimestamp: ptr(ago(0)), Annotations: map[string]string{"volume.beta.kubernetes.io/storage-class": "beta"}},
		Spec:       corev1.PersistentVolumeSpec{StorageClassName: "standard", VolumeAttributesClassName: ptr("gold")},
		Status:     corev1.PersistentVolumeStatus{Phase: corev1.VolumeFailed, Reason: "Oops"}},
		[]interface{}{"pv2", "0", "", "", "Terminating", "", "beta", "gold", "Oops", "<unknown>", "<unset>"})

	check("pvc pending", gr("", "persistentvolumeclaims"), &corev1.PersistentVolumeClaim{ObjectMeta: om("data", time.Hour),
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr("standard"),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}},
		[]interface{}{"data", "Pending", "", "", "", "standard", "<unset>", "60m", "<unset>"})
	fs := corev1.PersistentVolumeFilesystem
	check("pvc bound", gr("", "persistentvolumeclaims"), &corev1.PersistentVolumeClaim{ObjectMeta: om("data", time.Hour),
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv1", VolumeMode: &fs},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}}},
		[]interface{}{"data", "Bound", "pv1", "2Gi", "RWX", "", "<unset>", "60m", "Filesystem"})

	check("resourcequota", gr("", "resourcequotas"), &corev1.ResourceQuota{ObjectMeta: om("q", time.Hour),
		Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{"pods": resource.MustParse("10"), "requests.cpu": resource.MustParse("4"), "limits.memory": resource.MustParse("8Gi"), "limits.cpu": resource.MustParse("8")},
			Used: corev1.ResourceList{"pods": resource.MustParse("3"), "requests.cpu": resource.MustParse("500m"), "limits.cpu": resource.MustParse("1")},
		}},
		[]interface{}{"q", "pods: 3/10, requests.cpu: 500m/4", "limits.cpu: 1/8, limits.memory: 0/8Gi", "60m"})

	check("storageclass default", gr("storage.k8s.io", "storageclasses"), &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "standard", CreationTimestamp: ago(time.Hour), Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "rancher.io/local-path"},
		[]interface{}{"standard (default)", "rancher.io/local-path", "Delete", "Immediate", false, "60m"})
	retain, wait := corev1.PersistentVolumeReclaimRetain, storagev1.VolumeBindingWaitForFirstConsumer
	check("storageclass explicit", gr("storage.k8s.io", "storageclasses"), &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{"storageclass.beta.kubernetes.io/is-default-class": "false"}},
		Provisioner: "csi", ReclaimPolicy: &retain, VolumeBindingMode: &wait, AllowVolumeExpansion: ptr(true)},
		[]interface{}{"fast", "csi", "Retain", "WaitForFirstConsumer", true, "<unknown>"})

	check("csidriver", gr("storage.k8s.io", "csidrivers"), &storagev1.CSIDriver{ObjectMeta: om("d", time.Hour)},
		[]interface{}{"d", true, false, false, "<unset>", false, "<none>", "60m"})
	check("csidriver full", gr("storage.k8s.io", "csidrivers"), &storagev1.CSIDriver{ObjectMeta: om("d", time.Hour),
		Spec: storagev1.CSIDriverSpec{AttachRequired: ptr(false), PodInfoOnMount: ptr(true), StorageCapacity: ptr(true), RequiresRepublish: ptr(true),
			TokenRequests:        []storagev1.TokenRequest{{Audience: "a"}, {Audience: "b"}},
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}}},
		[]interface{}{"d", false, true, true, "a,b", true, "Persistent,Ephemeral", "60m"})
	check("csinode", gr("storage.k8s.io", "csinodes"), &storagev1.CSINode{ObjectMeta: om("n", time.Hour),
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "x"}}}},
		[]interface{}{"n", int64(1), "60m"})
	check("volumeattachment", gr("storage.k8s.io", "volumeattachments"), &storagev1.VolumeAttachment{ObjectMeta: om("va", time.Hour),
		Spec:   storagev1.VolumeAttachmentSpec{Attacher: "csi", NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr("pv1")}},
		Status: storagev1.VolumeAttachmentStatus{Attached: true}},
		[]interface{}{"va", "csi", "pv1", "n1", true, "60m"})
	check("volumeattributesclass", gr("storage.k8s.io", "volumeattributesclasses"), &storagev1.VolumeAttributesClass{ObjectMeta: om("gold", time.Hour),
		DriverName: "csi.example.com"},
		[]interface{}{"gold", "csi.example.com", "60m"})
}

func TestClusterCells(t *testing.T) {
	check := func(name string, g schema.GroupResource, obj runtime.Object, want []interface{}) {
		t.Helper()
		if got := cells(t, g, obj); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %#v\n want %#v", name, got, want)
		}
	}
	check("lease", gr("coordination.k8s.io", "leases"), &coordinationv1.Lease{ObjectMeta: om("kube-scheduler", time.Hour),
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("node1_abc")}},
		[]interface{}{"kube-scheduler", "node1_abc", "60m"})
	check("lease no holder", gr("coordination.k8s.io", "leases"), &coordinationv1.Lease{ObjectMeta: om("l", time.Hour)},
		[]interface{}{"l", "", "60m"})

	minAvail := intstr.FromInt32(2)
	maxUnavail := intstr.FromString("25%")
	check("pdb min", gr("policy", "poddisruptionbudgets"), &policyv1.PodDisruptionBudget{ObjectMeta: om("p", time.Hour),
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvail}, Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}},
		[]interface{}{"p", "2", "N/A", int64(1), "60m"})
	check("pdb max", gr("policy", "poddisruptionbudgets"), &policyv1.PodDisruptionBudget{ObjectMeta: om("p", time.Hour),
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &maxUnavail}},
		[]interface{}{"p", "N/A", "25%", int64(0), "60m"})

	subjects := []rbacv1.Subject{
		{Kind: "User", Name: "alice"}, {Kind: "User", Name: "bob"}, {Kind: "Group", Name: "devs"},
		{Kind: "ServiceAccount", Namespace: "kube-system", Name: "sa"}, {Kind: "Other", Name: "x"},
	}
	check("rolebinding", gr("rbac.authorization.k8s.io", "rolebindings"), &rbacv1.RoleBinding{ObjectMeta: om("rb", time.Hour),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: subjects},
		[]interface{}{"rb", "ClusterRole/view", "60m", "alice, bob", "devs", "kube-system/sa"})
	check("clusterrolebinding", gr("rbac.authorization.k8s.io", "clusterrolebindings"), &rbacv1.ClusterRoleBinding{ObjectMeta: om("crb", time.Hour),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}},
		[]interface{}{"crb", "ClusterRole/cluster-admin", "60m", "", "", ""})

	never := corev1.PreemptNever
	check("priorityclass", gr("scheduling.k8s.io", "priorityclasses"), &schedulingv1.PriorityClass{ObjectMeta: om("system-node-critical", time.Hour),
		Value: 2000001000, GlobalDefault: false},
		[]interface{}{"system-node-critical", int64(2000001000), false, "60m", ""})
	check("priorityclass policy", gr("scheduling.k8s.io", "priorityclasses"), &schedulingv1.PriorityClass{ObjectMeta: om("low", time.Hour),
		Value: -5, GlobalDefault: true, PreemptionPolicy: &never},
		[]interface{}{"low", int64(-5), true, "60m", "Never"})

	check("ingress", gr("networking.k8s.io", "ingresses"), &networkingv1.Ingress{ObjectMeta: om("ing", time.Hour),
		Spec: networkingv1.IngressSpec{IngressClassName: ptr("nginx"), TLS: []networkingv1.IngressTLS{{}},
			Rules: []networkingv1.IngressRule{{Host: "a.com"}, {}, {Host: "b.com"}, {Host: "c.com"}, {Host: "d.com"}}},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "2.2.2.2"}, {Hostname: "lb.example.com"}}}}},
		[]interface{}{"ing", "nginx", "a.com,b.com,c.com + 2 more...", "2.2.2.2,lb.example.com", "80, 443", "60m"})
	check("ingress minimal", gr("networking.k8s.io", "ingresses"), &networkingv1.Ingress{ObjectMeta: om("ing", time.Hour),
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{}, {}, {}, {Host: "x.com"}}}},
		[]interface{}{"ing", "<none>", "x.com", "", "80", "60m"})
	check("ingressclass", gr("networking.k8s.io", "ingressclasses"), &networkingv1.IngressClass{ObjectMeta: om("nginx", time.Hour),
		Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx", Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr("k8s.example.com"), Kind: "IngressParameters", Name: "p"}}},
		[]interface{}{"nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/p", "60m"})
	check("componentstatus healthy", gr("", "componentstatuses"), &corev1.ComponentStatus{ObjectMeta: om("etcd-0", time.Hour),
		Conditions: []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}}},
		[]interface{}{"etcd-0", "Healthy", "ok", ""})
	check("componentstatus unhealthy", gr("", "componentstatuses"), &corev1.ComponentStatus{ObjectMeta: om("scheduler", time.Hour),
		Conditions: []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Error: "refused"}}},
		[]interface{}{"scheduler", "Unhealthy", "", "refused"})
	check("ipaddress", gr("networking.k8s.io", "ipaddresses"), &networkingv1.IPAddress{ObjectMeta: om("10.96.0.1", time.Hour),
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "kubernetes"}}},
		[]interface{}{"10.96.0.1", "services/default/kubernetes"})
	check("ipaddress with group", gr("networking.k8s.io", "ipaddresses"), &networkingv1.IPAddress{ObjectMeta: om("10.0.0.2", time.Hour),
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "gateway.networking.k8s.io", Resource: "Gateways", Name: "gw"}}},
		[]interface{}{"10.0.0.2", "gateways.gateway.networking.k8s.io/gw"})
	check("servicecidr", gr("networking.k8s.io", "servicecidrs"), &networkingv1.ServiceCIDR{ObjectMeta: om("kubernetes", time.Hour),
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12", "fd00::/108"}}},
		[]interface{}{"kubernetes", "10.96.0.0/12,fd00::/108", "60m"})
	check("networkpolicy", gr("networking.k8s.io", "networkpolicies"), &networkingv1.NetworkPolicy{ObjectMeta: om("deny", time.Hour)},
		[]interface{}{"deny", "<none>", "60m"})
	check("runtimeclass", gr("node.k8s.io", "runtimeclasses"), &nodev1.RuntimeClass{ObjectMeta: om("gvisor", time.Hour), Handler: "runsc"},
		[]interface{}{"gvisor", "runsc", "60m"})
	check("mutatingwebhook", gr("admissionregistration.k8s.io", "mutatingwebhookconfigurations"), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: om("m", time.Hour),
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "a"}, {Name: "b"}}},
		[]interface{}{"m", int64(2), "60m"})
	check("validatingwebhook", gr("admissionregistration.k8s.io", "validatingwebhookconfigurations"), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("v", time.Hour)},
		[]interface{}{"v", int64(0), "60m"})
	check("csr", gr("certificates.k8s.io", "certificatesigningrequests"), &certificatesv1.CertificateSigningRequest{ObjectMeta: om("csr-1", time.Hour),
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client", Username: "alice", ExpirationSeconds: ptr(int32(86400))},
		Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("x"),
			Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved}, {Type: certificatesv1.CertificateFailed}}}},
		[]interface{}{"csr-1", "60m", "kubernetes.io/kube-apiserver-client", "alice", "24h", "Approved,Failed,Issued"})
	check("deviceclass", gr("resource.k8s.io", "deviceclasses"), &resourcev1.DeviceClass{ObjectMeta: om("gpu", time.Hour)},
		[]interface{}{"gpu", "60m"})
	check("resourceclaim pending", gr("resource.k8s.io", "resourceclaims"), &resourcev1.ResourceClaim{ObjectMeta: om("c", time.Hour)},
		[]interface{}{"c", "pending", "60m"})
	reserved := &resourcev1.ResourceClaim{ObjectMeta: om("c", time.Hour), Status: resourcev1.ResourceClaimStatus{
		Allocation: &resourcev1.AllocationResult{}, ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}}}
	check("resourceclaim reserved", gr("resource.k8s.io", "resourceclaims"), reserved, []interface{}{"c", "allocated,reserved", "60m"})
	deleted := &resourcev1.ResourceClaim{ObjectMeta: om("c", time.Hour)}
	deleted.DeletionTimestamp = &deleted.CreationTimestamp
	check("resourceclaim deleted", gr("resource.k8s.io", "resourceclaims"), deleted, []interface{}{"c", "deleted", "60m"})
	check("resourceclaimtemplate", gr("resource.k8s.io", "resourceclaimtemplates"), &resourcev1.ResourceClaimTemplate{ObjectMeta: om("t", time.Hour)},
		[]interface{}{"t", "60m"})
	check("resourceslice", gr("resource.k8s.io", "resourceslices"), &resourcev1.ResourceSlice{ObjectMeta: om("s", time.Hour),
		Spec: resourcev1.ResourceSliceSpec{NodeName: ptr("node1"), Driver: "gpu.example.com", Pool: resourcev1.ResourcePool{Name: "node1"}}},
		[]interface{}{"s", "node1", "gpu.example.com", "node1", "60m"})
	check("resourceslice all nodes", gr("resource.k8s.io", "resourceslices"), &resourcev1.ResourceSlice{ObjectMeta: om("s", time.Hour),
		Spec: resourcev1.ResourceSliceSpec{AllNodes: ptr(true), Driver: "d.example.com", Pool: resourcev1.ResourcePool{Name: "p"}}},
		[]interface{}{"s", "", "d.example.com", "p", "60m"})
	added := metav1.NewTime(now.Add(-2 * time.Minute))
	check("devicetaintrule", gr("resource.k8s.io", "devicetaintrules"), &resourcev1.DeviceTaintRule{ObjectMeta: om("r", time.Hour),
		Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "example.com/broken", Value: "yes", Effect: resourcev1.DeviceTaintEffectNoExecute, TimeAdded: &added}}},
		[]interface{}{"r", "example.com/broken", "yes", "NoExecute", "2m", "60m"})
	check("storageversionmigration", gr("storagemigration.k8s.io", "storageversionmigrations"), &storagemigrationv1.StorageVersionMigration{ObjectMeta: om("m", time.Hour),
		Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "apps", Resource: "deployments"}}},
		[]interface{}{"m", "deployments.apps"})
	check("storageversionmigration core", gr("storagemigration.k8s.io", "storageversionmigrations"), &storagemigrationv1.StorageVersionMigration{ObjectMeta: om("m", time.Hour),
		Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "secrets"}}},
		[]interface{}{"m", "secrets"})
	check("clustertrustbundle", gr("certificates.k8s.io", "clustertrustbundles"), &certificatesv1.ClusterTrustBundle{ObjectMeta: om("example.com:signer:ca", time.Hour),
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer"}}, []interface{}{"example.com:signer:ca", "example.com/signer"})
	check("clustertrustbundle without signer", gr("certificates.k8s.io", "clustertrustbundles"), &certificatesv1.ClusterTrustBundle{ObjectMeta: om("ca", time.Hour)},
		[]interface{}{"ca", "<none>"})
	check("podcertificaterequest", gr("certificates.k8s.io", "podcertificaterequests"), &certificatesv1.PodCertificateRequest{ObjectMeta: om("pcr", time.Hour),
		Spec:   certificatesv1.PodCertificateRequestSpec{PodName: "web", ServiceAccountName: "default", NodeName: "node1", SignerName: "example.com/signer"},
		Status: certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: "Issued", Status: metav1.ConditionTrue}}}},
		[]interface{}{"pcr", "web", "default", "node1", "example.com/signer", "Issued"})
	check("podcertificaterequest pending", gr("certificates.k8s.io", "podcertificaterequests"), &certificatesv1.PodCertificateRequest{ObjectMeta: om("pcr", time.Hour)},
		[]interface{}{"pcr", "", "", "", "", "Pending"})
	check("csr pending", gr("certificates.k8s.io", "certificatesigningrequests"), &certificatesv1.CertificateSigningRequest{ObjectMeta: om("csr-2", time.Hour)},
		[]interface{}{"csr-2", "60m", "<none>", "", "<none>", "Pending"})
	check("vap", gr("admissionregistration.k8s.io", "validatingadmissionpolicies"), &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: om("replicas", time.Hour),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "rules.example.com/v1", Kind: "ReplicaLimit"},
			Validations: []admissionregistrationv1.Validation{{Expression: "true"}, {Expression: "false"}}}},
		[]interface{}{"replicas", int64(2), "rules.example.com/v1/ReplicaLimit", "60m"})
	check("vap unset", gr("admissionregistration.k8s.io", "validatingadmissionpolicies"), &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: om("p", time.Hour)},
		[]interface{}{"p", int64(0), "<unset>", "60m"})
	check("vapb", gr("admissionregistration.k8s.io", "validatingadmissionpolicybindings"), &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b", time.Hour),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "replicas", ParamRef: &admissionregistrationv1.ParamRef{Name: "limit"}}},
		[]interface{}{"b", "replicas", "*/limit", "60m"})
	check("mapb selector", gr("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"), &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: om("b", time.Hour),
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}}},
		[]interface{}{"b", "p", "a=b", "60m"})
	check("map", gr("admissionregistration.k8s.io", "mutatingadmissionpolicies"), &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: om("m", time.Hour),
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{Mutations: []admissionregistrationv1.Mutation{{}}}},
		[]interface{}{"m", int64(1), "<unset>", "60m"})
	check("apiservice local", gr("apiregistration.k8s.io", "apiservices"), &apiregistrationv1.APIService{ObjectMeta: om("v1.apps", time.Hour),
		Status: apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{{Type: "Available", Status: "True", Reason: "Local"}}}},
		[]interface{}{"v1.apps", "Local", "True", "60m"})
	check("apiservice down", gr("apiregistration.k8s.io", "apiservices"), &apiregistrationv1.APIService{ObjectMeta: om("v1beta1.metrics.k8s.io", time.Hour),
		Spec:   apiregistrationv1.APIServiceSpec{Service: &apiregistrationv1.ServiceReference{Namespace: "kube-system", Name: "metrics-server"}},
		Status: apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{{Type: "Available", Status: "False", Reason: "MissingEndpoints"}}}},
		[]interface{}{"v1beta1.metrics.k8s.io", "kube-system/metrics-server", "False (MissingEndpoints)", "60m"})
	check("apiservice unknown", gr("apiregistration.k8s.io", "apiservices"), &apiregistrationv1.APIService{ObjectMeta: om("v1.x", time.Hour)},
		[]interface{}{"v1.x", "Local", "Unknown", "60m"})
	check("flowschema", gr("flowcontrol.apiserver.k8s.io", "flowschemas"), &flowcontrolv1.FlowSchema{ObjectMeta: om("global-default", time.Hour),
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"},
			MatchingPrecedence: 9900, DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}},
		Status: flowcontrolv1.FlowSchemaStatus{Conditions: []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling", Status: "False"}}}},
		[]interface{}{"global-default", "global-default", int64(9900), "ByUser", "60m", "False"})
	check("flowschema exempt", gr("flowcontrol.apiserver.k8s.io", "flowschemas"), &flowcontrolv1.FlowSchema{ObjectMeta: om("exempt", time.Hour),
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "exempt"}, MatchingPrecedence: 1}},
		[]interface{}{"exempt", "exempt", int64(1), "<none>", "60m", "?"})
	check("prioritylevel limited", gr("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"), &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om("system", time.Hour),
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr(int32(30)),
			LimitResponse: flowcontrolv1.LimitResponse{Type: "Queue", Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 6, QueueLengthLimit: 50}}}}},
		[]interface{}{"system", "Limited", int64(30), int64(64), int64(6), int64(50), "60m"})
	check("prioritylevel exempt", gr("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"), &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om("exempt", time.Hour),
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Exempt"}},
		[]interface{}{"exempt", "Exempt", "<none>", "<none>", "<none>", "<none>", "60m"})
}

func TestHPACells(t *testing.T) {
	g := gr("autoscaling", "horizontalpodautoscalers")
	ref := autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"}

	h2 := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om("web", time.Hour),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MinReplicas: ptr(int32(2)), MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(50))}}},
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(resource.MustParse("100"))}}},
			}},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, CurrentMetrics: []autoscalingv2.MetricStatus{
			{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr(int32(37)), AverageValue: ptr(resource.MustParse("120m"))}}},
		}}}
	want := []interface{}{"web", "Deployment/web", "cpu: 37%/50%, <unknown>/100", "2", int64(10), int64(3), "60m"}
	if c := cells(t, g, h2); !reflect.DeepEqual(c, want) {
		t.Errorf("v2:\n got  %#v\n want %#v", c, want)
	}

	tests := []struct {
		name    string
		metrics []autoscalingv2.MetricSpec
		status  []autoscalingv2.MetricStatus
		want    string
	}{
		{"none", nil, nil, "<none>"},
		{"memory average value", []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
			Target: autoscalingv2.MetricTarget{AverageValue: ptr(resource.MustParse("1Gi"))}}}},
			[]autoscalingv2.MetricStatus{{Resource: &autoscalingv2.ResourceMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageValue: ptr(resource.MustParse("512Mi"))}}}},
			"memory: 512Mi/1Gi"},
		{"utilization without target", []autoscalingv2.MetricSpec{{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: corev1.ResourceCPU, Container: "app"}}},
			nil, "cpu: <unknown>/<auto>"},
		{"external value and avg", []autoscalingv2.MetricSpec{
			{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{Value: ptr(resource.MustParse("5"))}}},
			{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: ptr(resource.MustParse("3"))}}},
		}, []autoscalingv2.MetricStatus{{External: &autoscalingv2.ExternalMetricStatus{Current: autoscalingv2.MetricValueStatus{Value: ptr(resource.MustParse("4"))}}}},
			"4/5, <unknown>/3 (avg)"},
		{"object, unknown type, more", []autoscalingv2.MetricSpec{
			{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{Target: autoscalingv2.MetricTarget{Value: ptr(resource.MustParse("10"))}}},
			{Type: "Bogus"},
			{Type: "Bogus"},
			{Type: "Bogus"},
		}, nil, "<unknown>/10, <unknown type> + 2 more..."},
	}
	for _, tt := range tests {
		h := h2.DeepCopy()
		h.Spec.Metrics, h.Status.CurrentMetrics = tt.metrics, tt.status
		if got := cell(t, g, h, "Targets"); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}

	v1ref := autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"}
	h1 := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: om("web", time.Hour),
		Spec:   autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: v1ref, MaxReplicas: 5, TargetCPUUtilizationPercentage: ptr(int32(60))},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{CurrentReplicas: 1, CurrentCPUUtilizationPercentage: ptr(int32(12))}}
	want = []interface{}{"web", "Deployment/web", "cpu: 12%/60%", "<unset>", int64(5), int64(1), "60m"}
	if c := cells(t, g, h1); !reflect.DeepEqual(c, want) {
		t.Errorf("v1:\n got  %#v\n want %#v", c, want)
	}
	h1.Spec.TargetCPUUtilizationPercentage, h1.Status.CurrentCPUUtilizationPercentage = nil, nil
	if got := cell(t, g, h1, "Targets"); got != "cpu: <unknown>/80%" {
		t.Errorf("v1 implicit target: %q", got)
	}
	h1.Spec.TargetCPUUtilizationPercentage = ptr(int32(70))
	h1.Annotations = map[string]string{
		"autoscaling.alpha.kubernetes.io/metrics":         `[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"1Gi"}}]`,
		"autoscaling.alpha.kubernetes.io/current-metrics": `[{"type":"Resource","resource":{"name":"memory","currentAverageValue":"300Mi"}},{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":41,"currentAverageValue":"0"}}]`,
	}
	if got := cell(t, g, h1, "Targets"); got != "memory: 300Mi/1Gi, cpu: 41%/70%" {
		t.Errorf("v1 annotated metrics: %q", got)
	}
	h1.Annotations["autoscaling.alpha.kubernetes.io/metrics"] = "not json"
	if _, err := mustHandler(t, g).Cells(h1, now); err == nil {
		t.Errorf("bad annotation did not fail")
	}
}

func TestCRDCells(t *testing.T) {
	g := gr("apiextensions.k8s.io", "customresourcedefinitions")
	crd := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]interface{}{"name": "widgets.example.com", "creationTimestamp": "2024-05-01T10:00:00Z"},
		"spec": map[string]interface{}{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]interface{}{"kind": "Widget", "plural": "widgets", "shortNames": []interface{}{"wd", "wdg"}},
			"versions": []interface{}{
				map[string]interface{}{"name": "v1beta1", "served": true, "storage": false},
				map[string]interface{}{"name": "v1", "served": true, "storage": true},
				map[string]interface{}{"name": "v1alpha1", "served": false, "storage": false},
			},
		},
		"status": map[string]interface{}{"conditions": []interface{}{
			map[string]interface{}{"type": "NamesAccepted", "status": "True"},
			map[string]interface{}{"type": "Established", "status": "True"},
		}},
	}}
	want := []interface{}{"widgets.example.com", "Namespaced", "v1(storage),v1beta1", "2024-05-01T10:00:00Z", "example.com", "Widget", "wd,wdg", true}
	if c := cells(t, g, crd); !reflect.DeepEqual(c, want) {
		t.Errorf("crd:\n got  %#v\n want %#v", c, want)
	}
	unstructured.RemoveNestedField(crd.Object, "status")
	if got := cell(t, g, crd, "Established"); got != false {
		t.Errorf("not established: %v", got)
	}
}

// TestCellTypes checks every handler emits only the Go types upstream does
// and that rows encode to the same JSON as upstream's (integers as integers).
func TestCellTypes(t *testing.T) {
	samples := map[schema.GroupResource]runtime.Object{
		gr("", "pods"):                                                          &corev1.Pod{ObjectMeta: om("p", time.Minute)},
		gr("", "podtemplates"):                                                  &corev1.PodTemplate{ObjectMeta: om("p", time.Minute)},
		gr("", "replicationcontrollers"):                                        &corev1.ReplicationController{ObjectMeta: om("p", time.Minute)},
		gr("", "services"):                                                      &corev1.Service{ObjectMeta: om("p", time.Minute)},
		gr("", "endpoints"):                                                     &corev1.Endpoints{ObjectMeta: om("p", time.Minute)},
		gr("", "nodes"):                                                         &corev1.Node{ObjectMeta: om("p", time.Minute)},
		gr("", "events"):                                                        &corev1.Event{ObjectMeta: om("p", time.Minute)},
		gr("events.k8s.io", "events"):                                           &eventsv1.Event{ObjectMeta: om("p", time.Minute)},
		gr("", "namespaces"):                                                    &corev1.Namespace{ObjectMeta: om("p", time.Minute)},
		gr("", "secrets"):                                                       &corev1.Secret{ObjectMeta: om("p", time.Minute)},
		gr("", "serviceaccounts"):                                               &corev1.ServiceAccount{ObjectMeta: om("p", time.Minute)},
		gr("", "configmaps"):                                                    &corev1.ConfigMap{ObjectMeta: om("p", time.Minute)},
		gr("", "persistentvolumes"):                                             &corev1.PersistentVolume{ObjectMeta: om("p", time.Minute)},
		gr("", "persistentvolumeclaims"):                                        &corev1.PersistentVolumeClaim{ObjectMeta: om("p", time.Minute)},
		gr("", "resourcequotas"):                                                &corev1.ResourceQuota{ObjectMeta: om("p", time.Minute)},
		gr("", "limitranges"):                                                   &corev1.LimitRange{ObjectMeta: om("p", time.Minute)},
		gr("apps", "deployments"):                                               &appsv1.Deployment{ObjectMeta: om("p", time.Minute)},
		gr("apps", "replicasets"):                                               &appsv1.ReplicaSet{ObjectMeta: om("p", time.Minute)},
		gr("apps", "statefulsets"):                                              &appsv1.StatefulSet{ObjectMeta: om("p", time.Minute)},
		gr("apps", "daemonsets"):                                                &appsv1.DaemonSet{ObjectMeta: om("p", time.Minute)},
		gr("apps", "controllerrevisions"):                                       &appsv1.ControllerRevision{ObjectMeta: om("p", time.Minute)},
		gr("batch", "jobs"):                                                     &batchv1.Job{ObjectMeta: om("p", time.Minute)},
		gr("batch", "cronjobs"):                                                 &batchv1.CronJob{ObjectMeta: om("p", time.Minute)},
		gr("coordination.k8s.io", "leases"):                                     &coordinationv1.Lease{ObjectMeta: om("p", time.Minute)},
		gr("discovery.k8s.io", "endpointslices"):                                &discoveryv1.EndpointSlice{ObjectMeta: om("p", time.Minute)},
		gr("autoscaling", "horizontalpodautoscalers"):                           &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om("p", time.Minute)},
		gr("policy", "poddisruptionbudgets"):                                    &policyv1.PodDisruptionBudget{ObjectMeta: om("p", time.Minute)},
		gr("rbac.authorization.k8s.io", "roles"):                                &rbacv1.Role{ObjectMeta: om("p", time.Minute)},
		gr("rbac.authorization.k8s.io", "clusterroles"):                         &rbacv1.ClusterRole{ObjectMeta: om("p", time.Minute)},
		gr("rbac.authorization.k8s.io", "rolebindings"):                         &rbacv1.RoleBinding{ObjectMeta: om("p", time.Minute)},
		gr("rbac.authorization.k8s.io", "clusterrolebindings"):                  &rbacv1.ClusterRoleBinding{ObjectMeta: om("p", time.Minute)},
		gr("scheduling.k8s.io", "priorityclasses"):                              &schedulingv1.PriorityClass{ObjectMeta: om("p", time.Minute)},
		gr("storage.k8s.io", "storageclasses"):                                  &storagev1.StorageClass{ObjectMeta: om("p", time.Minute)},
		gr("storage.k8s.io", "csidrivers"):                                      &storagev1.CSIDriver{ObjectMeta: om("p", time.Minute)},
		gr("storage.k8s.io", "csinodes"):                                        &storagev1.CSINode{ObjectMeta: om("p", time.Minute)},
		gr("storage.k8s.io", "volumeattachments"):                               &storagev1.VolumeAttachment{ObjectMeta: om("p", time.Minute)},
		gr("storage.k8s.io", "csistoragecapacities"):                            &storagev1.CSIStorageCapacity{ObjectMeta: om("p", time.Minute)},
		gr("storage.k8s.io", "volumeattributesclasses"):                         &storagev1.VolumeAttributesClass{ObjectMeta: om("p", time.Minute)},
		gr("networking.k8s.io", "ingresses"):                                    &networkingv1.Ingress{ObjectMeta: om("p", time.Minute)},
		gr("networking.k8s.io", "ingressclasses"):                               &networkingv1.IngressClass{ObjectMeta: om("p", time.Minute)},
		gr("networking.k8s.io", "networkpolicies"):                              &networkingv1.NetworkPolicy{ObjectMeta: om("p", time.Minute)},
		gr("networking.k8s.io", "ipaddresses"):                                  &networkingv1.IPAddress{ObjectMeta: om("p", time.Minute)},
		gr("networking.k8s.io", "servicecidrs"):                                 &networkingv1.ServiceCIDR{ObjectMeta: om("p", time.Minute)},
		gr("", "componentstatuses"):                                             &corev1.ComponentStatus{ObjectMeta: om("p", time.Minute)},
		gr("node.k8s.io", "runtimeclasses"):                                     &nodev1.RuntimeClass{ObjectMeta: om("p", time.Minute)},
		gr("admissionregistration.k8s.io", "mutatingwebhookconfigurations"):     &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: om("p", time.Minute)},
		gr("admissionregistration.k8s.io", "validatingwebhookconfigurations"):   &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("p", time.Minute)},
		gr("admissionregistration.k8s.io", "validatingadmissionpolicies"):       &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: om("p", time.Minute)},
		gr("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("p", time.Minute)},
		gr("admissionregistration.k8s.io", "mutatingadmissionpolicies"):         &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: om("p", time.Minute)},
		gr("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"):   &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: om("p", time.Minute)},
		gr("certificates.k8s.io", "certificatesigningrequests"):                 &certificatesv1.CertificateSigningRequest{ObjectMeta: om("p", time.Minute)},
		gr("certificates.k8s.io", "clustertrustbundles"):                        &certificatesv1.ClusterTrustBundle{ObjectMeta: om("p", time.Minute)},
		gr("certificates.k8s.io", "podcertificaterequests"):                     &certificatesv1.PodCertificateRequest{ObjectMeta: om("p", time.Minute)},
		gr("flowcontrol.apiserver.k8s.io", "flowschemas"):                       &flowcontrolv1.FlowSchema{ObjectMeta: om("p", time.Minute)},
		gr("apiregistration.k8s.io", "apiservices"):                             &apiregistrationv1.APIService{ObjectMeta: om("p", time.Minute)},
		gr("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"):       &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om("p", time.Minute)},
		gr("resource.k8s.io", "deviceclasses"):                                  &resourcev1.DeviceClass{ObjectMeta: om("p", time.Minute)},
		gr("resource.k8s.io", "resourceclaims"):                                 &resourcev1.ResourceClaim{ObjectMeta: om("p", time.Minute)},
		gr("resource.k8s.io", "resourceclaimtemplates"):                         &resourcev1.ResourceClaimTemplate{ObjectMeta: om("p", time.Minute)},
		gr("resource.k8s.io", "resourceslices"):                                 &resourcev1.ResourceSlice{ObjectMeta: om("p", time.Minute)},
		gr("resource.k8s.io", "devicetaintrules"):                               &resourcev1.DeviceTaintRule{ObjectMeta: om("p", time.Minute)},
		gr("storagemigration.k8s.io", "storageversionmigrations"):               &storagemigrationv1.StorageVersionMigration{ObjectMeta: om("p", time.Minute)},
		gr("apiextensions.k8s.io", "customresourcedefinitions"): &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]interface{}{"name": "p"}}},
	}
	for _, g := range Resources() {
		obj, ok := samples[g]
		if !ok {
			t.Errorf("%v: no sample object", g)
			continue
		}
		c := cells(t, g, obj)
		for i, v := range c {
			switch v.(type) {
			case string, int64, bool:
			default:
				t.Errorf("%v cell %d (%v) has type %T", g, i, mustHandler(t, g).Columns[i].Name, v)
			}
		}
		row := metav1.TableRow{Cells: c}
		raw, err := json.Marshal(row)
		if err != nil {
			t.Errorf("%v: marshal: %v", g, err)
		}
		if strings.Contains(string(raw), ".0") {
			t.Errorf("%v: float in %s", g, raw)
		}
	}

	raw, _ := json.Marshal(metav1.TableRow{Cells: cells(t, gr("apps", "deployments"), &appsv1.Deployment{ObjectMeta: om("d", time.Minute),
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(3))}, Status: appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2}})})
	if want := `{"cells":["d","2/3",3,2,"60s","","",""],"object":null}`; string(raw) != want {
		t.Errorf("deployment row JSON %s, want %s", raw, want)
	}
}

// CustomResourceDefinition stands in for a typed apiextensions CRD (this
// package must not depend on apiextensions): same Go type name, same JSON.
type CustomResourceDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Scope    string `json:"scope"`
		Versions []struct {
			Name    string `json:"name"`
			Served  bool   `json:"served"`
			Storage bool   `json:"storage"`
		} `json:"versions"`
	} `json:"spec"`
}

func (c *CustomResourceDefinition) DeepCopyObject() runtime.Object {
	out := *c
	return &out
}

func TestCRDTyped(t *testing.T) {
	crd := &CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com", CreationTimestamp: metav1.NewTime(now)}}
	crd.Spec.Group, crd.Spec.Scope, crd.Spec.Names.Kind = "example.com", "Cluster", "Gadget"
	crd.Spec.Versions = append(crd.Spec.Versions, struct {
		Name    string `json:"name"`
		Served  bool   `json:"served"`
		Storage bool   `json:"storage"`
	}{"v1", true, true})
	want := []interface{}{"gadgets.example.com", "Cluster", "v1(storage)", "2024-06-01T12:00:00Z", "example.com", "Gadget", "", false}
	if c := cells(t, gr("apiextensions.k8s.io", "customresourcedefinitions"), crd); !reflect.DeepEqual(c, want) {
		t.Errorf("typed crd:\n got  %#v\n want %#v", c, want)
	}
}
