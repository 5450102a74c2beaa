package leaderelection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/client"
)

// LeaderElectionRecord is the election state stored in the lock.
type LeaderElectionRecord struct {
	// HolderIdentity is the current holder; empty means nobody holds the
	// lock and any candidate may take it (set when a leader steps down).
	HolderIdentity       string      `json:"holderIdentity"`
	LeaseDurationSeconds int         `json:"leaseDurationSeconds"`
	AcquireTime          metav1.Time `json:"acquireTime"`
	RenewTime            metav1.Time `json:"renewTime"`
	LeaderTransitions    int         `json:"leaderTransitions"`
}

// Lock is the resource the election runs on (client-go's
// resourcelock.Interface).
type Lock interface {
	// Get returns the current record and its serialized form (compared
	// byte-wise to notice changes).
	Get(ctx context.Context) (*LeaderElectionRecord, []byte, error)
	// Create creates the lock holding ler.
	Create(ctx context.Context, ler LeaderElectionRecord) error
	// Update replaces the record; it fails when the lock changed since the
	// last Get, Create or Update.
	Update(ctx context.Context, ler LeaderElectionRecord) error
	// RecordEvent records an event about the lock ("became leader").
	RecordEvent(msg string)
	// Identity is this candidate's identity.
	Identity() string
	// Describe names the lock for logs ("namespace/name").
	Describe() string
}

// EventRecorder is what a lock needs to record events (record.EventRecorder
// satisfies it).
type EventRecorder interface {
	Eventf(obj runtime.Object, eventType, reason, messageFmt string, args ...any)
}

// ResourceLockConfig is the candidate's side of a lock.
type ResourceLockConfig struct {
	// Identity uniquely names this candidate among all candidates.
	Identity string
	// EventRecorder is optional.
	EventRecorder EventRecorder
}

// LeaseLock is a Lock on a coordination.k8s.io/v1 Lease.
type LeaseLock struct {
	Namespace, Name string
	Client          *client.Typed[*coordinationv1.Lease, *coordinationv1.LeaseList]
	LockConfig      ResourceLockConfig
	// Labels are set on the Lease when it is created or updated.
	Labels map[string]string

	mu    sync.Mutex
	lease *coordinationv1.Lease // the last Lease read or written
}

// NewLeaseLock returns a LeaseLock on namespace/name for identity.
func NewLeaseLock(c *client.Client, namespace, name, identity string) *LeaseLock {
	return &LeaseLock{
		Namespace:  namespace,
		Name:       name,
		Client:     client.For[*coordinationv1.Lease, *coordinationv1.LeaseList](c),
		LockConfig: ResourceLockConfig{Identity: identity},
	}
}

func (l *LeaseLock) leases() *client.Typed[*coordinationv1.Lease, *coordinationv1.LeaseList] {
	return l.Client.Namespace(l.Namespace)
}

// Get reads the Lease.
func (l *LeaseLock) Get(ctx context.Context) (*LeaderElectionRecord, []byte, error) {
	lease, err := l.leases().Get(ctx, l.Name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	l.mu.Lock()
	l.lease = lease
	l.mu.Unlock()
	rec := LeaseSpecToLeaderElectionRecord(&lease.Spec)
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, nil, err
	}
	return rec, raw, nil
}

// Create creates the Lease holding ler.
func (l *LeaseLock) Create(ctx context.Context, ler LeaderElectionRecord) error {
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: l.Name, Labels: l.Labels},
		Spec:       LeaderElectionRecordToLeaseSpec(&ler),
	}
	created, err := l.leases().Create(ctx, lease, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.lease = created
	l.mu.Unlock()
	return nil
}

// Update writes ler over the Lease last read or written (optimistically:
// a Lease changed since then is a conflict).
func (l *LeaseLock) Update(ctx context.Context, ler LeaderElectionRecord) error {
	l.mu.Lock()
	if l.lease == nil {
		l.mu.Unlock()
		return errors.New("leaderelection: lease not initialized, call Get or Create first")
	}
	lease := l.lease.DeepCopy()
	l.mu.Unlock()
	lease.Spec = LeaderElectionRecordToLeaseSpec(&ler)
	if len(l.Labels) > 0 {
		if lease.Labels == nil {
			lease.Labels = map[string]string{}
		}
		for k, v := range l.Labels {
			lease.Labels[k] = v
		}
	}
	updated, err := l.leases().Update(ctx, lease, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.lease = updated
	l.mu.Unlock()
	return nil
}

// RecordEvent records a LeaderElection event on the Lease ("<identity>
// <msg>"), if an EventRecorder is configured.
func (l *LeaseLock) RecordEvent(msg string) {
	if l.LockConfig.EventRecorder == nil {
		return
	}
	subject := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: l.Name}}
	l.mu.Lock()
	if l.lease != nil {
		subject.ObjectMeta = *l.lease.ObjectMeta.DeepCopy()
	}
	l.mu.Unlock()
	subject.Kind, subject.APIVersion = "Lease", coordinationv1.SchemeGroupVersion.String()
	l.LockConfig.EventRecorder.Eventf(subject, corev1.EventTypeNormal, "LeaderElection", "%s %s", l.LockConfig.Identity, msg)
}

// Describe is "namespace/name".
func (l *LeaseLock) Describe() string { return fmt.Sprintf("%s/%s", l.Namespace, l.Name) }

// Identity is the candidate's identity.
func (l *LeaseLock) Identity() string { return l.LockConfig.Identity }

// LeaseSpecToLeaderElectionRecord reads the record from a Lease spec.
func LeaseSpecToLeaderElectionRecord(spec *coordinationv1.LeaseSpec) *LeaderElectionRecord {
	var r LeaderElectionRecord
	if spec.HolderIdentity != nil {
		r.HolderIdentity = *spec.HolderIdentity
	}
	if spec.LeaseDurationSeconds != nil {
		r.LeaseDurationSeconds = int(*spec.LeaseDurationSeconds)
	}
	if spec.LeaseTransitions != nil {
		r.LeaderTransitions = int(*spec.LeaseTransitions)
	}
	if spec.AcquireTime != nil {
		r.AcquireTime = metav1.Time{Time: spec.AcquireTime.Time}
	}
	if spec.RenewTime != nil {
		r.RenewTime = metav1.Time{Time: spec.RenewTime.Time}
	}
	return &r
}

// LeaderElectionRecordToLeaseSpec writes the record as a Lease spec.
func LeaderElectionRecordToLeaseSpec(ler *LeaderElectionRecord) coordinationv1.LeaseSpec {
	holder := ler.HolderIdentity
	duration := int32(ler.LeaseDurationSeconds)
	transitions := int32(ler.LeaderTransitions)
	return coordinationv1.LeaseSpec{
		HolderIdentity:       &holder,
		LeaseDurationSeconds: &duration,
		AcquireTime:          &metav1.MicroTime{Time: ler.AcquireTime.Time},
		RenewTime:            &metav1.MicroTime{Time: ler.RenewTime.Time},
		LeaseTransitions:     &transitions,
	}
}
