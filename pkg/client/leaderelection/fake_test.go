package leaderelection

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var leaseGR = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// fakeStore is an in-memory lock object with a version for optimistic
// concurrency, shared by the fakeLocks of several candidates.
type fakeStore struct {
	mu      sync.Mutex
	rec     *LeaderElectionRecord
	version int
}

func (s *fakeStore) get() (LeaderElectionRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return LeaderElectionRecord{}, false
	}
	return *s.rec, true
}

// set writes rec as another party would (bumping the version).
func (s *fakeStore) set(rec LeaderElectionRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec = &rec
	s.version++
}

// fakeLock is one candidate's Lock on a fakeStore, with injectable
// failures and a log of calls.
type fakeLock struct {
	store *fakeStore
	id    string

	mu      sync.Mutex
	seen    int // store version of the last Get/Create/Update
	failGet error
	failUpd error
	block   chan struct{} // when set, Update waits for it to close
	calls   []string
	events  []string
}

func (l *fakeLock) setFailures(get, update error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failGet, l.failUpd = get, update
}

func (l *fakeLock) record(call string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call)
}

func (l *fakeLock) callLog() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

func (l *fakeLock) resetCalls() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = nil
}

func (l *fakeLock) Get(ctx context.Context) (*LeaderElectionRecord, []byte, error) {
	l.record("get")
	l.mu.Lock()
	err := l.failGet
	l.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	l.store.mu.Lock()
	defer l.store.mu.Unlock()
	if l.store.rec == nil {
		return nil, nil, apierrors.NewNotFound(leaseGR, "lock")
	}
	rec := *l.store.rec
	raw, _ := json.Marshal(rec)
	l.mu.Lock()
	l.seen = l.store.version
	l.mu.Unlock()
	return &rec, raw, nil
}

func (l *fakeLock) Create(ctx context.Context, ler LeaderElectionRecord) error {
	l.record("create")
	l.store.mu.Lock()
	defer l.store.mu.Unlock()
	if l.store.rec != nil {
		return apierrors.NewAlreadyExists(leaseGR, "lock")
	}
	l.store.rec = &ler
	l.store.version++
	l.mu.Lock()
	l.seen = l.store.version
	l.mu.Unlock()
	return nil
}

func (l *fakeLock) Update(ctx context.Context, ler LeaderElectionRecord) error {
	l.record("update")
	l.mu.Lock()
	err, block := l.failUpd, l.block
	l.mu.Unlock()
	if block != nil {
		<-block
	}
	if err != nil {
		return err
	}
	l.store.mu.Lock()
	defer l.store.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.store.rec == nil {
		return errors.New("lease not initialized")
	}
	if l.seen != l.store.version {
		return apierrors.NewConflict(leaseGR, "lock", errors.New("the object has been modified"))
	}
	l.store.rec = &ler
	l.store.version++
	l.seen = l.store.version
	return nil
}

func (l *fakeLock) RecordEvent(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, msg)
}

func (l *fakeLock) Identity() string { return l.id }
func (l *fakeLock) Describe() string { return "fake/lock" }
