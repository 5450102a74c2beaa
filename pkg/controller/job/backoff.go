package job

import (
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// Pod failure back-off, as upstream's job controller: a replacement for
// failed pods is created after 10s, 20s, 40s, ... (capped at
// MaxPodFailureBackOff) counted from the last failure, the count reset by
// a success.
var (
	DefaultPodFailureBackOff = 10 * time.Second
	MaxPodFailureBackOff     = 10 * time.Minute
)

// backoffRecord is the failures since the last success and when the last
// one happened.
type backoffRecord struct {
	key                      string
	failuresAfterLastSuccess int32
	lastFailureTime          *time.Time
}

// backoffStore keeps one record per Job key.
type backoffStore struct {
	mu sync.Mutex
	m  map[string]backoffRecord
}

func newBackoffStore() *backoffStore { return &backoffStore{m: map[string]backoffRecord{}} }

func (s *backoffStore) update(r backoffRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[r.key] = r
}

func (s *backoffStore) remove(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

// newRecord is key's record after the newly finished pods.
func (s *backoffStore) newRecord(key string, succeeded, failed []*corev1.Pod) backoffRecord {
	s.mu.Lock()
	r, ok := s.m[key]
	s.mu.Unlock()
	if !ok {
		r = backoffRecord{key: key}
	}
	sortByFinishTime(succeeded)
	sortByFinishTime(failed)
	if len(succeeded) == 0 {
		if len(failed) == 0 {
			return r
		}
		r.failuresAfterLastSuccess += int32(len(failed))
		t := finishTime(failed[len(failed)-1])
		r.lastFailureTime = &t
		return r
	}
	r.failuresAfterLastSuccess, r.lastFailureTime = 0, nil
	lastSuccess := finishTime(succeeded[len(succeeded)-1])
	for i := len(failed) - 1; i >= 0; i-- {
		t := finishTime(failed[i])
		if !t.After(lastSuccess) {
			break
		}
		if r.lastFailureTime == nil {
			r.lastFailureTime = &t
		}
		r.failuresAfterLastSuccess++
	}
	return r
}

// remaining is how long pod creation must still wait at now.
func (r backoffRecord) remaining(c clock.Clock) time.Duration {
	return remainingBackoff(c, r.failuresAfterLastSuccess, r.lastFailureTime)
}

func remainingBackoff(c clock.Clock, failures int32, last *time.Time) time.Duration {
	if failures == 0 || last == nil {
		return 0
	}
	d := DefaultPodFailureBackOff
	for i := 1; i < int(failures); i++ {
		d *= 2
		if d >= MaxPodFailureBackOff {
			d = MaxPodFailureBackOff
			break
		}
	}
	elapsed := c.Since(*last)
	if d < elapsed {
		return 0
	}
	return d - elapsed
}

func sortByFinishTime(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool { return finishTime(pods[i]).Before(finishTime(pods[j])) })
}

// finishTime is when the pod finished: its containers' last finish, else
// the Ready=False transition, else its deletion time, else its creation.
func finishTime(p *corev1.Pod) time.Time {
	var latest *time.Time
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range list {
			if t := cs.State.Terminated; t != nil && !t.FinishedAt.IsZero() {
				if latest == nil || t.FinishedAt.After(*latest) {
					ft := t.FinishedAt.Time
					latest = &ft
				}
			}
		}
	}
	if latest != nil {
		return *latest
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	if p.DeletionTimestamp != nil {
		return p.DeletionTimestamp.Time
	}
	return p.CreationTimestamp.Time
}
