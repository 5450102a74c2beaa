package admission

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// quotaStore holds quotas with resourceVersions; UpdateStatus checks
// them as storage does. beforeWrite runs before each write (another
// writer racing the plugin).
type quotaStore struct {
	mu          sync.Mutex
	quotas      map[string]*corev1.ResourceQuota
	rv          int
	writes      int
	beforeWrite func(s *quotaStore)
	// cacheLags: the watch cache has none of the quotas yet.
	cacheLags bool
}

func (s *quotaStore) bump(q *corev1.ResourceQuota) {
	s.rv++
	q.ResourceVersion = strconv.Itoa(s.rv)
}

func (s *quotaStore) list() []runtime.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []runtime.Object
	for _, q := range s.quotas {
		out = append(out, q.DeepCopy())
	}
	return out
}

func (s *quotaStore) Get(ctx context.Context, gr schema.GroupResource, ns, name string) (runtime.Object, error) {
	return s.GetConsistent(ctx, gr, ns, name)
}

func (s *quotaStore) GetConsistent(_ context.Context, gr schema.GroupResource, _, name string) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.quotas[name]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	return q.DeepCopy(), nil
}

func (s *quotaStore) List(_ context.Context, gr schema.GroupResource, _ string) ([]runtime.Object, error) {
	if gr != grResourceQuotas {
		return nil, errors.New("unexpected list of " + gr.String())
	}
	if s.cacheLags {
		return nil, nil
	}
	return s.list(), nil
}

func (s *quotaStore) ListConsistent(_ context.Context, gr schema.GroupResource, _ string) ([]runtime.Object, error) {
	if gr != grResourceQuotas {
		return nil, errors.New("unexpected list of " + gr.String())
	}
	return s.list(), nil
}

func (s *quotaStore) UpdateStatus(_ context.Context, gr schema.GroupResource, obj runtime.Object) (runtime.Object, error) {
	if s.beforeWrite != nil {
		s.beforeWrite(s)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := obj.(*corev1.ResourceQuota)
	cur, ok := s.quotas[in.Name]
	if !ok {
		return nil, apierrors.NewNotFound(gr, in.Name)
	}
	if cur.ResourceVersion != in.ResourceVersion {
		return nil, apierrors.NewConflict(gr, in.Name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	cur.Status = *in.Status.DeepCopy()
	s.bump(cur)
	s.writes++
	return cur.DeepCopy(), nil
}

func observedQuota(name string, hard, used corev1.ResourceList) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}, Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
}

func podCreate(name string) *Attributes {
	return &Attributes{Operation: Create, Resource: grPods, Kind: schema.GroupKind{Kind: "Pod"}, Namespace: "ns", Name: name, Object: podWith(name, ctr("c", nil, nil))}
}

// A charge that loses a race with another quota write is checked again
// against the quota as it now is: here the other writer took the last
// pod, so the request is refused with the usage it lost to.
func TestResourceQuotaRetriesConflicts(t *testing.T) {
	s := &quotaStore{rv: 1, quotas: map[string]*corev1.ResourceQuota{"q": observedQuota("q", rl("pods", "2"), rl("pods", "1"))}}
	raced := false
	s.beforeWrite = func(s *quotaStore) {
		if raced {
			return
		}
		raced = true
		s.mu.Lock()
		q := s.quotas["q"]
		q.Status.Used = rl("pods", "2")
		s.bump(q)
		s.mu.Unlock()
	}
	p := newResourceQuota(Deps{Getter: s, Status: s, Clock: clock.Real{}})
	err := p.Validate(context.Background(), podCreate("late"))
	want := `pods "late" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	if s.writes != 0 {
		t.Errorf("%d status writes, want 0", s.writes)
	}

	// Without room taken, the retry succeeds and charges once.
	s = &quotaStore{rv: 1, quotas: map[string]*corev1.ResourceQuota{"q": observedQuota("q", rl("pods", "5"), rl("pods", "1"))}}
	raced = false
	s.beforeWrite = func(s *quotaStore) {
		if raced {
			return
		}
		raced = true
		s.mu.Lock()
		q := s.quotas["q"]
		q.Status.Used = rl("pods", "3")
		s.bump(q)
		s.mu.Unlock()
	}
	p = newResourceQuota(Deps{Getter: s, Status: s, Clock: clock.Real{}})
	if err := p.Validate(context.Background(), podCreate("ok")); err != nil {
		t.Fatal(err)
	}
	used := s.quotas["q"].Status.Used[corev1.ResourcePods]
	if used.String() != "4" || s.writes != 1 {
		t.Errorf("used pods %s after %d writes, want 4 after 1", used.String(), s.writes)
	}
}

// Concurrent charges from one API server never overcommit, whatever the
// interleaving: 20 creates against room for 7.
func TestResourceQuotaConcurrentCharges(t *testing.T) {
	s := &quotaStore{rv: 1, quotas: map[string]*corev1.ResourceQuota{"q": observedQuota("q", rl("pods", "7"), rl("pods", "0"))}}
	p := newResourceQuota(Deps{Getter: s, Status: s, Clock: clock.Real{}})
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Validate(context.Background(), podCreate("p"+strconv.Itoa(i))); err == nil {
				mu.Lock()
				admitted++
				mu.Unlock()
			} else if !apierrors.IsForbidden(err) {
				t.Errorf("unexpected error %v", err)
			}
		}()
	}
	wg.Wait()
	used := s.quotas["q"].Status.Used[corev1.ResourcePods]
	if admitted != 7 || used.String() != "7" {
		t.Errorf("%d admitted, used %s; want 7 and 7", admitted, used.String())
	}
}

// A quota the watch cache does not have yet is found by a live lookup.
func TestResourceQuotaLiveLookup(t *testing.T) {
	s := &quotaStore{rv: 1, cacheLags: true, quotas: map[string]*corev1.ResourceQuota{"q": observedQuota("q", rl("pods", "0"), rl("pods", "0"))}}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := newResourceQuota(Deps{Getter: s, Status: s, Clock: clk})
	want := `pods "a" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0`
	if err := p.Validate(context.Background(), podCreate("a")); err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

// Requests that arrive while a namespace's batch is being written wait
// and are charged together: one status write for all of them.
func TestResourceQuotaBatches(t *testing.T) {
	s := &quotaStore{rv: 1, quotas: map[string]*corev1.ResourceQuota{"q": observedQuota("q", rl("pods", "10"), rl("pods", "0"))}}
	started, release := make(chan struct{}), make(chan struct{})
	first := true
	s.beforeWrite = func(*quotaStore) {
		if first {
			first = false
			close(started)
			<-release
		}
	}
	p := newResourceQuota(Deps{Getter: s, Status: s, Clock: clock.Real{}})
	errs := make(chan error, 6)
	go func() { errs <- p.Validate(context.Background(), podCreate("lead")) }()
	<-started
	for i := range 5 {
		go func() { errs <- p.Validate(context.Background(), podCreate("p"+strconv.Itoa(i))) }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		n := len(p.queues["ns"].pending)
		p.mu.Unlock()
		if n == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want 5", n)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	used := s.quotas["q"].Status.Used[corev1.ResourcePods]
	if s.writes != 2 || used.String() != "6" {
		t.Errorf("%d writes, used %s; want 2 writes, used 6", s.writes, used.String())
	}
}
