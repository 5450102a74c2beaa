package queue

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

// Defaults, as upstream's (KubeSchedulerConfiguration podInitialBackoffSeconds,
// podMaxBackoffSeconds; --pod-max-in-unschedulable-pods-duration).
const (
	DefaultPodInitialBackoffDuration         = 1 * time.Second
	DefaultPodMaxBackoffDuration             = 10 * time.Second
	DefaultPodMaxInUnschedulablePodsDuration = 5 * time.Minute

	// unschedulableFlushPeriod is how often pods parked too long in the
	// unschedulable pool are moved out.
	unschedulableFlushPeriod = 30 * time.Second
)

// Names of the sub-queues, as upstream's (logs and the queue label of
// scheduler_queue_incoming_pods_total in lower case).
const (
	activeQName        = "active"
	backoffQName       = "backoff"
	unschedulableQName = "unschedulable"
)

// PreEnqueueCheck filters the unschedulable pods an event may move
// (nil: all of them).
type PreEnqueueCheck func(pod *corev1.Pod) bool

// QueueingHintFunction is a plugin's hint function for one event.
type QueueingHintFunction struct {
	PluginName     string
	QueueingHintFn framework.QueueingHintFn // nil: always Queue
}

// QueueingHintMap is, for one profile, the hint functions registered for
// each event (the EventsToRegister of its plugins).
type QueueingHintMap map[framework.ClusterEvent][]QueueingHintFunction

// Add registers a plugin's events (EventsToRegister; a plugin without
// EnqueueExtensions registers WildCard/All, which every event matches).
func (m QueueingHintMap) Add(plugin string, events []framework.ClusterEventWithHint) {
	for _, e := range events {
		m[e.Event] = append(m[e.Event], QueueingHintFunction{PluginName: plugin, QueueingHintFn: e.QueueingHintFn})
	}
}

// Config configures a PriorityQueue. Zero durations take the defaults.
type Config struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// LessFunc orders activeQ: the QueueSort plugin's Less.
	LessFunc framework.LessFunc

	PodInitialBackoff, PodMaxBackoff  time.Duration
	PodMaxInUnschedulablePodsDuration time.Duration

	// PreEnqueuePlugins by profile (schedulerName), run in order.
	PreEnqueuePlugins map[string][]framework.PreEnqueuePlugin
	// QueueingHints by profile (schedulerName).
	QueueingHints map[string]QueueingHintMap

	// Metrics receives scheduler_pending_pods and
	// scheduler_queue_incoming_pods_total (nil: no metrics).
	Metrics prometheus.Registerer

	// DisablePopFromBackoffQ turns off upstream's SchedulerPopFromBackoffQ
	// (on by default in 1.34): with it, Pop takes a pod from backoffQ when
	// activeQ is empty, and back-off expiries are aligned to 1s windows.
	DisablePopFromBackoffQ bool

	// PodLister, optional, returns the current version of a pod; the
	// nominator does not nominate pods gone or already bound.
	PodLister func(namespace, name string) (*corev1.Pod, error)
	// NamespaceLabels, optional, returns a namespace's labels (for the
	// namespace selectors of pending pods' affinity terms when a bound pod
	// is added or changes).
	NamespaceLabels func(namespace string) labels.Set
}

// PriorityQueue is the scheduling queue: activeQ (a heap ordered by the
// QueueSort plugin), backoffQ (heaps ordered by back-off expiry), the
// unschedulable pool (pods waiting for an event one of their rejecting
// plugins registered) and the in-flight pods (popped, being scheduled),
// plus the nominator. See doc.go for the invariants.
type PriorityQueue struct {
	clock          clock.Clock
	logger         *slog.Logger
	maxInUnsched   time.Duration
	preEnqueue     map[string][]framework.PreEnqueuePlugin
	hints          map[string]QueueingHintMap
	pluginToEvents map[string][]framework.ClusterEvent
	popEarly       bool
	nsLabels       func(namespace string) labels.Set
	metrics        *metrics

	// lock guards everything below; cond (on lock) wakes Pop.
	lock sync.RWMutex
	cond *sync.Cond

	activeQ  *keyedHeap[*framework.QueuedPodInfo]
	backoffQ *backoffQueue
	// unschedulable is the pool, by pod key; gated counts its gated pods.
	unschedulable map[string]*unschedEntry
	gated         int

	// inFlightPods maps a popped pod to its element of inFlightEvents, a
	// list of in-flight pods (*inFlightPod) and the events received
	// (*clusterEvent) in arrival order: the events a pod must consider
	// when it comes back are those after its element.
	inFlightPods   map[types.UID]*list.Element
	inFlightEvents *list.List

	schedCycle int64
	popWaiting int // Pop calls blocked on cond (tests wait for it)
	closed     bool
	stop       chan struct{}

	nominator *nominator
}

type unschedEntry struct {
	pInfo *framework.QueuedPodInfo
	gated bool // as counted in gated
}

// inFlightPod is a popped pod: the PodInfo as popped (the scheduler may
// replace pInfo.PodInfo during the attempt; the queue never reads the
// QueuedPodInfo it handed out).
type inFlightPod struct{ podInfo *framework.PodInfo }

// clusterEvent is an event received while pods were in flight.
type clusterEvent struct {
	event          framework.ClusterEvent
	oldObj, newObj any
}

// queueingStrategy is where an event (or a failed attempt) sends a pod.
type queueingStrategy int

const (
	queueSkip queueingStrategy = iota
	queueAfterBackoff
	queueImmediately
)

func (s queueingStrategy) String() string {
	return [...]string{"QueueSkip", "QueueAfterBackoff", "QueueImmediately"}[s]
}

// New returns an empty queue.
func New(cfg Config) *PriorityQueue {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.LessFunc == nil {
		cfg.LessFunc = func(a, b *framework.QueuedPodInfo) bool { return a.Timestamp.Before(b.Timestamp) }
	}
	if cfg.PodInitialBackoff == 0 {
		cfg.PodInitialBackoff = DefaultPodInitialBackoffDuration
	}
	if cfg.PodMaxBackoff == 0 {
		cfg.PodMaxBackoff = DefaultPodMaxBackoffDuration
	}
	if cfg.PodMaxInUnschedulablePodsDuration == 0 {
		cfg.PodMaxInUnschedulablePodsDuration = DefaultPodMaxInUnschedulablePodsDuration
	}
	p := &PriorityQueue{
		clock:          cfg.Clock,
		logger:         cfg.Logger,
		maxInUnsched:   cfg.PodMaxInUnschedulablePodsDuration,
		preEnqueue:     cfg.PreEnqueuePlugins,
		hints:          cfg.QueueingHints,
		pluginToEvents: map[string][]framework.ClusterEvent{},
		popEarly:       !cfg.DisablePopFromBackoffQ,
		nsLabels:       cfg.NamespaceLabels,
		metrics:        newMetrics(cfg.Metrics),
		activeQ:        newKeyedHeap(podKey, cfg.LessFunc),
		unschedulable:  map[string]*unschedEntry{},
		inFlightPods:   map[types.UID]*list.Element{},
		inFlightEvents: list.New(),
		stop:           make(chan struct{}),
		nominator:      newNominator(cfg.PodLister),
	}
	p.cond = sync.NewCond(&p.lock)
	p.backoffQ = newBackoffQueue(p.clock.Now, cfg.PodInitialBackoff, cfg.PodMaxBackoff, cfg.LessFunc, p.popEarly)
	for _, m := range cfg.QueueingHints {
		for ev, fns := range m {
			for _, fn := range fns {
				p.pluginToEvents[fn.PluginName] = append(p.pluginToEvents[fn.PluginName], ev)
			}
		}
	}
	p.updateGauges()
	return p
}

// log is logger, or the queue's logger when nil.
func (p *PriorityQueue) log(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return p.logger
	}
	return logger
}

func podKey(p *framework.QueuedPodInfo) string { return p.Pod.Namespace + "/" + p.Pod.Name }

func objKey(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

func podRefString(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

// Run moves pods whose back-off ended to activeQ every second (on the
// ordering windows' boundaries) and pods parked longer than
// PodMaxInUnschedulablePodsDuration out of the unschedulable pool every
// 30 seconds, until ctx ends or the queue is closed; then it closes the
// queue.
func (p *PriorityQueue) Run(ctx context.Context) {
	defer p.Close()
	now := p.clock.Now()
	first := backoffOrderingWindow
	if p.popEarly {
		first = now.Add(backoffOrderingWindow).Truncate(backoffOrderingWindow).Sub(now)
	}
	align := p.clock.NewTimer(first)
	defer align.Stop()
	unsched := p.clock.NewTicker(unschedulableFlushPeriod)
	defer unsched.Stop()
	p.flushUnschedulablePodsLeftover()
	var backoffC <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.stop:
			return
		case <-align.C():
			t := p.clock.NewTicker(backoffOrderingWindow)
			defer t.Stop()
			backoffC = t.C()
			p.flushBackoffQCompleted()
		case <-backoffC:
			p.flushBackoffQCompleted()
		case <-unsched.C():
			p.flushUnschedulablePodsLeftover()
		}
	}
}

// Close wakes Pop (which returns nil) and stops Run. In-flight pods are
// forgotten.
func (p *PriorityQueue) Close() {
	p.lock.Lock()
	defer p.lock.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	close(p.stop)
	for uid := range p.inFlightPods {
		p.done(uid)
	}
	p.cond.Broadcast()
}

func (p *PriorityQueue) newQueuedPodInfo(pod *corev1.Pod) *framework.QueuedPodInfo {
	return &framework.QueuedPodInfo{
		PodInfo:              framework.NewPodInfo(pod),
		Timestamp:            p.clock.Now(),
		UnschedulablePlugins: sets.New[string](),
		PendingPlugins:       sets.New[string](),
	}
}

// ensureSets makes the plugin sets of a QueuedPodInfo built elsewhere
// writable.
func ensureSets(pInfo *framework.QueuedPodInfo) {
	if pInfo.UnschedulablePlugins == nil {
		pInfo.UnschedulablePlugins = sets.New[string]()
	}
	if pInfo.PendingPlugins == nil {
		pInfo.PendingPlugins = sets.New[string]()
	}
}

// Add queues a new pending pod: to activeQ, or to the unschedulable pool
// (gated) when a PreEnqueue plugin rejects it.
func (p *PriorityQueue) Add(logger *slog.Logger, pod *corev1.Pod) {
	logger = p.log(logger)
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateGauges()
	if p.moveToActiveQ(logger, p.newQueuedPodInfo(pod), EventUnscheduledPodAdd.Label(), false) {
		p.cond.Broadcast()
	}
}

// runPreEnqueuePlugins runs the profile's PreEnqueue plugins (the one
// gating the pod first) and records the first that rejects it in
// GatingPlugin and UnschedulablePlugins; GatingPlugin is cleared when all
// pass.
func (p *PriorityQueue) runPreEnqueuePlugins(pInfo *framework.QueuedPodInfo) {
	plugins := p.preEnqueue[pInfo.Pod.Spec.SchedulerName]
	gating := pInfo.GatingPlugin
	if gating != "" {
		for _, pl := range plugins {
			if pl.Name() == gating && !p.runPreEnqueuePlugin(pl, pInfo) {
				return
			}
		}
	}
	for _, pl := range plugins {
		if pl.Name() == gating {
			continue
		}
		if !p.runPreEnqueuePlugin(pl, pInfo) {
			return
		}
	}
	pInfo.GatingPlugin = ""
}

func (p *PriorityQueue) runPreEnqueuePlugin(pl framework.PreEnqueuePlugin, pInfo *framework.QueuedPodInfo) bool {
	s := pl.PreEnqueue(context.Background(), pInfo.Pod)
	if s.IsSuccess() {
		return true
	}
	ensureSets(pInfo)
	if !pInfo.UnschedulablePlugins.Has(pl.Name()) {
		pInfo.UnschedulablePlugins.Insert(pl.Name())
		p.metrics.reasons(pInfo.Pod.Spec.SchedulerName, 1, sets.New(pl.Name()))
	}
	pInfo.GatingPlugin = pl.Name()
	if s.Code() == framework.Error {
		p.logger.Error("Unexpected error running PreEnqueue plugin", "pod", podRefString(pInfo.Pod), "plugin", pl.Name(), "err", s.AsError())
	} else {
		p.logger.Debug("Status after running PreEnqueue plugin", "pod", podRefString(pInfo.Pod), "plugin", pl.Name(), "status", s.Message())
	}
	return false
}

// addUnschedulable puts the pod in the pool (or replaces its entry).
func (p *PriorityQueue) addUnschedulable(pInfo *framework.QueuedPodInfo, event string) {
	k := podKey(pInfo)
	if e, ok := p.unschedulable[k]; ok {
		if e.gated {
			p.gated--
		}
		e.pInfo, e.gated = pInfo, pInfo.Gated()
		if e.gated {
			p.gated++
		}
		return
	}
	e := &unschedEntry{pInfo: pInfo, gated: pInfo.Gated()}
	if e.gated {
		p.gated++
	}
	p.unschedulable[k] = e
	p.metrics.incoming1(unschedulableQName, event)
}

func (p *PriorityQueue) deleteUnschedulable(k string) {
	if e, ok := p.unschedulable[k]; ok {
		if e.gated {
			p.gated--
		}
		delete(p.unschedulable, k)
	}
}

func (p *PriorityQueue) getUnschedulable(k string) *framework.QueuedPodInfo {
	if e, ok := p.unschedulable[k]; ok {
		return e.pInfo
	}
	return nil
}

// moveToActiveQ runs the PreEnqueue plugins (unless the pod comes straight
// from backoffQ, where they ran on the way in) and puts the pod in activeQ,
// or, gated, in the unschedulable pool. It reports whether the pod went to
// activeQ.
func (p *PriorityQueue) moveToActiveQ(logger *slog.Logger, pInfo *framework.QueuedPodInfo, event string, fromBackoffQ bool) bool {
	if !(p.popEarly && fromBackoffQ) {
		p.runPreEnqueuePlugins(pInfo)
	}
	k := podKey(pInfo)
	if pInfo.Gated() {
		if p.activeQ.Has(k) || p.backoffQ.has(k) {
			return false
		}
		if cur := p.getUnschedulable(k); cur != nil && cur != pInfo {
			return false
		}
		p.addUnschedulable(pInfo, event)
		logger.Debug("Pod moved to an internal scheduling queue, because the pod is gated", "pod", podRefString(pInfo.Pod), "event", event, "queue", unschedulableQName)
		return false
	}
	if pInfo.InitialAttemptTimestamp == nil {
		now := p.clock.Now()
		pInfo.InitialAttemptTimestamp = &now
	}
	p.deleteUnschedulable(k)
	p.backoffQ.delete(k)
	p.activeQ.AddOrUpdate(pInfo)
	p.metrics.incoming1(activeQName, event)
	if event == EventUnscheduledPodAdd.Label() || event == framework.EventUnscheduledPodUpdate.Label() {
		p.nominator.add(logger, pInfo.PodInfo, nil)
	}
	return true
}

// moveToBackoffQ puts the pod in backoffQ (with PopFromBackoffQ, after
// its PreEnqueue plugins passed; gated, it stays in the pool). It reports
// whether the pod went to backoffQ.
func (p *PriorityQueue) moveToBackoffQ(logger *slog.Logger, pInfo *framework.QueuedPodInfo, event string) bool {
	k := podKey(pInfo)
	if p.popEarly {
		p.runPreEnqueuePlugins(pInfo)
		if pInfo.Gated() {
			p.addUnschedulable(pInfo, event)
			logger.Debug("Pod moved to an internal scheduling queue", "pod", podRefString(pInfo.Pod), "event", event, "queue", unschedulableQName)
			return false
		}
	}
	p.deleteUnschedulable(k)
	p.backoffQ.add(pInfo)
	p.metrics.incoming1(backoffQName, event)
	return true
}

// Activate moves the given pods from the unschedulable pool or backoffQ to
// activeQ (framework.PodActivator). A pod in flight gets a ForceActivate
// event, so that it is requeued when its attempt fails; unknown pods are
// ignored.
func (p *PriorityQueue) Activate(logger *slog.Logger, pods map[string]*corev1.Pod) {
	logger = p.log(logger)
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateGauges()
	activated := false
	for _, pod := range pods {
		if p.activate(logger, pod) {
			activated = true
			continue
		}
		p.addEventsIfPodInFlight(nil, pod, []framework.ClusterEvent{framework.EventForceActivate})
	}
	if activated {
		p.cond.Broadcast()
	}
}

func (p *PriorityQueue) activate(logger *slog.Logger, pod *corev1.Pod) bool {
	k := objKey(pod)
	pInfo := p.getUnschedulable(k)
	fromBackoffQ := false
	if pInfo == nil {
		var ok bool
		if pInfo, ok = p.backoffQ.get(k); !ok {
			return false
		}
		p.backoffQ.delete(k)
		fromBackoffQ = true
	}
	return p.moveToActiveQ(logger, pInfo, ForceActivate, fromBackoffQ)
}

// SchedulingCycle is the number of pods popped so far.
func (p *PriorityQueue) SchedulingCycle() int64 {
	p.lock.RLock()
	defer p.lock.RUnlock()
	return p.schedCycle
}

// Pop removes and returns the head of activeQ (or, with PopFromBackoffQ
// and activeQ empty, of backoffQ), blocking while both are empty. It
// counts the attempt, clears the plugins that rejected the pod last time
// and marks it in flight until Done. After Close it returns nil, nil.
func (p *PriorityQueue) Pop(logger *slog.Logger) (*framework.QueuedPodInfo, error) {
	logger = p.log(logger)
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateGauges()
	for {
		for p.activeQ.Len() == 0 && !(p.popEarly && p.backoffQ.rejected.Len() > 0) {
			if p.closed {
				logger.Debug("Scheduling queue is closed")
				return nil, nil
			}
			p.popWaiting++
			p.cond.Wait()
			p.popWaiting--
		}
		if p.closed {
			return nil, nil
		}
		pInfo, ok := p.activeQ.Pop()
		if !ok {
			pInfo, _ = p.backoffQ.rejected.Pop()
			p.metrics.incoming1(activeQName, PopFromBackoffQ)
		}
		pInfo.Attempts++
		if _, dup := p.inFlightPods[pInfo.Pod.UID]; dup {
			logger.Error("The same pod is tracked in multiple places in the scheduler, and just discard it", "pod", podRefString(pInfo.Pod))
			continue
		}
		if pInfo.InitialAttemptTimestamp == nil {
			now := p.clock.Now()
			pInfo.InitialAttemptTimestamp = &now
		}
		p.inFlightPods[pInfo.Pod.UID] = p.inFlightEvents.PushBack(&inFlightPod{podInfo: pInfo.PodInfo})
		p.schedCycle++
		ensureSets(pInfo)
		p.metrics.reasons(pInfo.Pod.Spec.SchedulerName, -1, pInfo.UnschedulablePlugins, pInfo.PendingPlugins)
		pInfo.UnschedulablePlugins.Clear()
		pInfo.PendingPlugins.Clear()
		pInfo.GatingPlugin = ""
		return pInfo, nil
	}
}

// Done ends the in-flight bookkeeping of a popped pod (its attempt ended:
// bound, or handed back through AddUnschedulableIfNotPresent, which calls
// it itself).
func (p *PriorityQueue) Done(uid types.UID) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.done(uid)
}

func (p *PriorityQueue) done(uid types.UID) {
	el, ok := p.inFlightPods[uid]
	if !ok {
		return
	}
	delete(p.inFlightPods, uid)
	p.inFlightEvents.Remove(el)
	// Events before the oldest in-flight pod concern no one any more.
	for {
		front := p.inFlightEvents.Front()
		if front == nil {
			break
		}
		if _, isEvent := front.Value.(*clusterEvent); !isEvent {
			break
		}
		p.inFlightEvents.Remove(front)
	}
}

// addEventsIfPodInFlight records events about newPod if it is in flight.
func (p *PriorityQueue) addEventsIfPodInFlight(oldPod, newPod *corev1.Pod, events []framework.ClusterEvent) bool {
	if _, ok := p.inFlightPods[newPod.UID]; !ok {
		return false
	}
	for _, e := range events {
		p.inFlightEvents.PushBack(&clusterEvent{event: e, oldObj: oldPod, newObj: newPod})
	}
	return true
}

// addEventIfAnyInFlight records an event for the pods in flight.
func (p *PriorityQueue) addEventIfAnyInFlight(oldObj, newObj any, event framework.ClusterEvent) bool {
	if len(p.inFlightPods) == 0 {
		return false
	}
	p.inFlightEvents.PushBack(&clusterEvent{event: event, oldObj: oldObj, newObj: newObj})
	return true
}

// InFlightPods lists the pods popped and not Done yet.
func (p *PriorityQueue) InFlightPods() []*corev1.Pod {
	p.lock.RLock()
	defer p.lock.RUnlock()
	out := make([]*corev1.Pod, 0, len(p.inFlightPods))
	for _, el := range p.inFlightPods {
		out = append(out, el.Value.(*inFlightPod).podInfo.Pod)
	}
	return out
}

// AddUnschedulableIfNotPresent hands back a pod whose attempt failed
// (podSchedulingCycle is SchedulingCycle() when it was popped; kept for
// upstream's signature). A pod rejected by no plugin failed with an error
// and goes to backoffQ; otherwise the events received while it was in
// flight are offered to the hints of its rejecting plugins
// (UnschedulablePlugins, PendingPlugins): Queue from a Pending plugin sends
// it to activeQ, from an Unschedulable one to backoffQ (activeQ when its
// back-off already ended), and none to the unschedulable pool. It ends
// the pod's in-flight bookkeeping.
func (p *PriorityQueue) AddUnschedulableIfNotPresent(logger *slog.Logger, pInfo *framework.QueuedPodInfo, podSchedulingCycle int64) error {
	logger = p.log(logger)
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateGauges()
	defer p.done(pInfo.Pod.UID)

	k := podKey(pInfo)
	if p.getUnschedulable(k) != nil {
		return fmt.Errorf("Pod %v is already present in unschedulable queue", k)
	}
	if p.activeQ.Has(k) {
		return fmt.Errorf("Pod %v is already present in the active queue", k)
	}
	if p.backoffQ.has(k) {
		return fmt.Errorf("Pod %v is already present in the backoff queue", k)
	}
	ensureSets(pInfo)
	if pInfo.UnschedulablePlugins.Len() == 0 && pInfo.PendingPlugins.Len() == 0 {
		pInfo.ConsecutiveErrorsCount++
	} else {
		pInfo.UnschedulableCount++
		pInfo.ConsecutiveErrorsCount = 0
	}
	pInfo.Timestamp = p.clock.Now()
	pInfo.BackoffExpiration = time.Time{}
	p.metrics.reasons(pInfo.Pod.Spec.SchedulerName, 1, pInfo.UnschedulablePlugins, pInfo.PendingPlugins)

	hint := p.determineSchedulingHintForInFlightPod(logger, pInfo)
	queue := p.requeuePodWithQueueingStrategy(logger, pInfo, hint, ScheduleAttemptFailure)
	logger.Debug("Pod moved to an internal scheduling queue", "pod", k, "event", ScheduleAttemptFailure, "queue", queue,
		"schedulingCycle", podSchedulingCycle, "hint", hint.String(), "unschedulablePlugins", sets.List(pInfo.UnschedulablePlugins.Union(pInfo.PendingPlugins)))
	if queue == activeQName || (p.popEarly && queue == backoffQName) {
		p.cond.Broadcast()
	}
	return nil
}

// determineSchedulingHintForInFlightPod offers the events received while
// the pod was in flight to the hints of its rejecting plugins.
func (p *PriorityQueue) determineSchedulingHintForInFlightPod(logger *slog.Logger, pInfo *framework.QueuedPodInfo) queueingStrategy {
	if pInfo.UnschedulablePlugins.Len() == 0 && pInfo.PendingPlugins.Len() == 0 {
		// An error, not a rejection: retry after back-off.
		return queueAfterBackoff
	}
	el, ok := p.inFlightPods[pInfo.Pod.UID]
	if !ok {
		logger.Error("In flight Pod isn't found in the scheduling queue. If you see this error log, it's likely a bug in the scheduler", "pod", podKey(pInfo))
		return queueAfterBackoff
	}
	strategy := queueSkip
	for e := el.Next(); e != nil; e = e.Next() {
		ev, isEvent := e.Value.(*clusterEvent)
		if !isEvent {
			continue
		}
		switch p.isPodWorthRequeuing(logger, pInfo, ev.event, ev.oldObj, ev.newObj) {
		case queueImmediately:
			return queueImmediately
		case queueAfterBackoff:
			strategy = queueAfterBackoff
			if pInfo.PendingPlugins.Len() == 0 {
				return queueAfterBackoff
			}
		}
	}
	return strategy
}

// isEventOfInterest: some profile's plugin registered an event matching
// it (wildcard events interest everybody).
func (p *PriorityQueue) isEventOfInterest(event framework.ClusterEvent) bool {
	if isWildCard(event) {
		return true
	}
	for _, m := range p.hints {
		for registered := range m {
			if matchEvent(registered, event) {
				return true
			}
		}
	}
	return false
}

// isPodWorthRequeuing asks the hints its rejecting plugins registered for
// event: Queue from a Pending plugin → queueImmediately; from an
// Unschedulable plugin → queueAfterBackoff; none → queueSkip. A pod with
// no rejecting plugin and wildcard events (for a ForceActivate naming a
// pod: only that pod) → queueAfterBackoff. A nil hint function or one
// returning an error counts as Queue.
func (p *PriorityQueue) isPodWorthRequeuing(logger *slog.Logger, pInfo *framework.QueuedPodInfo, event framework.ClusterEvent, oldObj, newObj any) queueingStrategy {
	if pInfo.UnschedulablePlugins.Len() == 0 && pInfo.PendingPlugins.Len() == 0 {
		return queueAfterBackoff
	}
	if isWildCard(event) {
		if newObj != nil {
			if pod, ok := newObj.(*corev1.Pod); !ok || pod.UID != pInfo.Pod.UID {
				return queueSkip
			}
		}
		return queueAfterBackoff
	}
	hintMap, ok := p.hints[pInfo.Pod.Spec.SchedulerName]
	if !ok {
		logger.Error("No QueueingHintMap is registered for this profile", "profile", pInfo.Pod.Spec.SchedulerName, "pod", podKey(pInfo))
		return queueAfterBackoff
	}
	strategy := queueSkip
	for registered, fns := range hintMap {
		if !matchEvent(registered, event) {
			continue
		}
		for _, fn := range fns {
			if !pInfo.UnschedulablePlugins.Has(fn.PluginName) && !pInfo.PendingPlugins.Has(fn.PluginName) {
				continue
			}
			hint := framework.Queue
			if fn.QueueingHintFn != nil {
				h, err := fn.QueueingHintFn(logger, pInfo.Pod, oldObj, newObj)
				if err != nil {
					logger.Error("QueueingHintFn returns error", "event", event.Label(), "plugin", fn.PluginName, "pod", podKey(pInfo), "err", err)
					h = framework.Queue
				}
				hint = h
			}
			if hint == framework.QueueSkip {
				continue
			}
			if pInfo.PendingPlugins.Has(fn.PluginName) {
				return queueImmediately
			}
			if pInfo.PendingPlugins.Len() == 0 {
				return queueAfterBackoff
			}
			strategy = queueAfterBackoff
		}
	}
	return strategy
}

// requeuePodWithQueueingStrategy moves the pod where strategy says and
// returns the queue it went to.
func (p *PriorityQueue) requeuePodWithQueueingStrategy(logger *slog.Logger, pInfo *framework.QueuedPodInfo, strategy queueingStrategy, event string) string {
	if strategy == queueSkip {
		p.addUnschedulable(pInfo, event)
		return unschedulableQName
	}
	if strategy == queueAfterBackoff && p.backoffQ.isBackingOff(pInfo) {
		if p.moveToBackoffQ(logger, pInfo, event) {
			return backoffQName
		}
		return unschedulableQName
	}
	if p.moveToActiveQ(logger, pInfo, event, false) {
		return activeQName
	}
	return unschedulableQName
}

// flushBackoffQCompleted moves the pods whose back-off ended to activeQ.
func (p *PriorityQueue) flushBackoffQCompleted() {
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateGauges()
	activated := false
	for _, pInfo := range p.backoffQ.popAllCompleted() {
		if p.moveToActiveQ(p.logger, pInfo, BackoffComplete, true) {
			activated = true
		}
	}
	if activated {
		p.cond.Broadcast()
	}
}

// flushUnschedulablePodsLeftover moves the pods parked longer than
// PodMaxInUnschedulablePodsDuration out of the pool
// (EventUnschedulableTimeout).
func (p *PriorityQueue) flushUnschedulablePodsLeftover() {
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateGauges()
	now := p.clock.Now()
	var move []*framework.QueuedPodInfo
	for _, e := range p.unschedulable {
		if now.Sub(e.pInfo.Timestamp) > p.maxInUnsched {
			move = append(move, e.pInfo)
		}
	}
	if len(move) > 0 {
		p.movePodsToActiveOrBackoffQueue(p.logger, move, framework.EventUnschedulableTimeout, nil, nil)
	}
}

// Update handles a change of a pending pod. A pod in flight records the
// change as events for when it comes back; in activeQ or backoffQ it is
// updated in place; in the unschedulable pool the change is offered, as
// the specific pod-update events, to its rejecting plugins' hints (so a
// pod whose scheduling gates are all removed reaches activeQ when the
// SchedulingGates plugin registered UpdatePodSchedulingGatesEliminated);
// a pod in no queue is added to activeQ.
func (p *PriorityQueue) Update(logger *slog.Logger, oldPod, newPod *corev1.Pod) {
	logger = p.log(logger)
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateGauges()

	events := podUpdateEvents(newPod, oldPod)
	if p.addEventsIfPodInFlight(oldPod, newPod, events) {
		logger.Debug("The pod doesn't be queued for now because it's being scheduled and will be queued back if necessary", "pod", podRefString(newPod))
		return
	}
	if oldPod != nil {
		k := objKey(oldPod)
		if pInfo, ok := p.activeQ.Get(k); ok {
			pInfo.Update(newPod)
			p.activeQ.AddOrUpdate(pInfo)
			p.nominator.update(logger, oldPod, pInfo.PodInfo)
			return
		}
		if pInfo, ok := p.backoffQ.get(k); ok {
			pInfo.Update(newPod)
			p.backoffQ.fix(k)
			p.nominator.update(logger, oldPod, pInfo.PodInfo)
			return
		}
	}
	if pInfo := p.getUnschedulable(objKey(newPod)); pInfo != nil {
		pInfo.Update(newPod)
		if oldPod != nil {
			p.nominator.update(logger, oldPod, pInfo.PodInfo)
		} else {
			p.nominator.add(logger, pInfo.PodInfo, nil)
		}
		for _, ev := range events {
			hint := p.isPodWorthRequeuing(logger, pInfo, ev, oldPod, newPod)
			queue := p.requeuePodWithQueueingStrategy(logger, pInfo, hint, ev.Label())
			if queue != unschedulableQName {
				logger.Debug("Pod moved to an internal scheduling queue because the Pod is updated", "pod", podRefString(newPod), "event", ev.Label(), "queue", queue)
			}
			if queue == activeQName || (p.popEarly && queue == backoffQName) {
				p.cond.Broadcast()
				break
			}
			if queue == backoffQName {
				break
			}
		}
		return
	}
	if p.moveToActiveQ(logger, p.newQueuedPodInfo(newPod), framework.EventUnscheduledPodUpdate.Label(), false) {
		p.cond.Broadcast()
	}
}

// Delete removes a pod from whichever queue holds it, and from the
// nominator. (A pod in flight stays tracked until its Done.)
func (p *PriorityQueue) Delete(pod *corev1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateGauges()
	p.nominator.delete(pod)
	k := objKey(pod)
	var pInfo *framework.QueuedPodInfo
	if pi, ok := p.activeQ.Get(k); ok {
		pInfo = pi
		p.activeQ.Delete(k)
	} else if pi, ok := p.backoffQ.get(k); ok {
		pInfo = pi
		p.backoffQ.delete(k)
	} else if pi := p.getUnschedulable(k); pi != nil {
		pInfo = pi
		p.deleteUnschedulable(k)
	}
	if pInfo != nil {
		p.metrics.reasons(pInfo.Pod.Spec.SchedulerName, -1, pInfo.UnschedulablePlugins, pInfo.PendingPlugins)
	}
}

// AssignedPodAdded handles a pod bound (or assumed) on a node: it may make
// pending pods with affinity to it, or rejected by PodTopologySpread in
// its namespace, schedulable.
func (p *PriorityQueue) AssignedPodAdded(logger *slog.Logger, pod *corev1.Pod) {
	logger = p.log(logger)
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateGauges()
	p.movePodsToActiveOrBackoffQueue(logger, p.unschedulablePodsWithCrossTopologyTerm(pod), EventAssignedPodAdd, nil, pod)
}

// AssignedPodUpdated handles a change of a bound pod (event says what
// changed). A scale-down may help any pod (NodeResourcesFit); other
// changes only the pods AssignedPodAdded would consider.
func (p *PriorityQueue) AssignedPodUpdated(logger *slog.Logger, oldPod, newPod *corev1.Pod, event framework.ClusterEvent) {
	logger = p.log(logger)
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateGauges()
	if matchEvent(framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodScaleDown}, event) {
		p.moveAllToActiveOrBackoffQueue(logger, event, oldPod, newPod, nil)
		return
	}
	p.movePodsToActiveOrBackoffQueue(logger, p.unschedulablePodsWithCrossTopologyTerm(newPod), event, oldPod, newPod)
}

// MoveAllToActiveOrBackoffQueue offers a cluster event to every pod of
// the unschedulable pool (that preCheck accepts): those whose rejecting
// plugins' hints say Queue move to backoffQ (still backing off) or activeQ.
// The event is also recorded for the pods in flight.
func (p *PriorityQueue) MoveAllToActiveOrBackoffQueue(logger *slog.Logger, event framework.ClusterEvent, oldObj, newObj any, preCheck PreEnqueueCheck) {
	logger = p.log(logger)
	p.lock.Lock()
	defer p.lock.Unlock()
	defer p.updateGauges()
	p.moveAllToActiveOrBackoffQueue(logger, event, oldObj, newObj, preCheck)
}

func (p *PriorityQueue) moveAllToActiveOrBackoffQueue(logger *slog.Logger, event framework.ClusterEvent, oldObj, newObj any, preCheck PreEnqueueCheck) {
	if !p.isEventOfInterest(event) {
		return
	}
	pods := make([]*framework.QueuedPodInfo, 0, len(p.unschedulable))
	for _, e := range p.unschedulable {
		if preCheck == nil || preCheck(e.pInfo.Pod) {
			pods = append(pods, e.pInfo)
		}
	}
	p.movePodsToActiveOrBackoffQueue(logger, pods, event, oldObj, newObj)
}

func (p *PriorityQueue) movePodsToActiveOrBackoffQueue(logger *slog.Logger, pods []*framework.QueuedPodInfo, event framework.ClusterEvent, oldObj, newObj any) {
	if !p.isEventOfInterest(event) {
		return
	}
	activated := false
	for _, pInfo := range pods {
		if pInfo.Gated() && !matchAnyEvent(event, p.pluginToEvents[pInfo.GatingPlugin]) {
			// The gating plugin does not care: the event cannot ungate it.
			continue
		}
		hint := p.isPodWorthRequeuing(logger, pInfo, event, oldObj, newObj)
		if hint == queueSkip {
			logger.Debug("Event is not making pod schedulable", "pod", podKey(pInfo), "event", event.Label())
			continue
		}
		p.deleteUnschedulable(podKey(pInfo))
		queue := p.requeuePodWithQueueingStrategy(logger, pInfo, hint, event.Label())
		if queue == activeQName || (p.popEarly && queue == backoffQName) {
			activated = true
		}
	}
	if p.addEventIfAnyInFlight(oldObj, newObj, event) {
		logger.Debug("Event received while pods are in flight", "event", event.Label())
	}
	if activated {
		p.cond.Broadcast()
	}
}

// unschedulablePodsWithCrossTopologyTerm: the pooled pods that pod may
// help: rejected by PodTopologySpread in pod's namespace, or with a
// required affinity term matching pod.
func (p *PriorityQueue) unschedulablePodsWithCrossTopologyTerm(pod *corev1.Pod) []*framework.QueuedPodInfo {
	var nsLabels labels.Set
	if p.nsLabels != nil {
		nsLabels = p.nsLabels(pod.Namespace)
	}
	var out []*framework.QueuedPodInfo
	for _, e := range p.unschedulable {
		pInfo := e.pInfo
		if pInfo.UnschedulablePlugins.Has(names.PodTopologySpread) && pod.Namespace == pInfo.Pod.Namespace {
			out = append(out, pInfo)
			continue
		}
		for i := range pInfo.RequiredAffinityTerms {
			if pInfo.RequiredAffinityTerms[i].Matches(pod, nsLabels) {
				out = append(out, pInfo)
				break
			}
		}
	}
	return out
}

// PendingPods lists the pods in activeQ, backoffQ and the unschedulable
// pool (gated ones included), with upstream's summary line plus the gated
// count: "activeQ:1; backoffQ:0; unschedulablePods:2; gatedPods:1"
// (unschedulablePods includes the gated ones, as upstream's).
func (p *PriorityQueue) PendingPods() ([]*corev1.Pod, string) {
	p.lock.RLock()
	defer p.lock.RUnlock()
	var out []*corev1.Pod
	for _, pi := range p.activeQ.List() {
		out = append(out, pi.Pod)
	}
	for _, pi := range p.backoffQ.list() {
		out = append(out, pi.Pod)
	}
	for _, e := range p.unschedulable {
		out = append(out, e.pInfo.Pod)
	}
	return out, fmt.Sprintf("activeQ:%v; backoffQ:%v; unschedulablePods:%v; gatedPods:%v",
		p.activeQ.Len(), p.backoffQ.len(), len(p.unschedulable), p.gated)
}

// PodsInActiveQ, PodsInBackoffQ and UnschedulablePods list one sub-queue
// (tests and debugging).
func (p *PriorityQueue) PodsInActiveQ() []*corev1.Pod {
	p.lock.RLock()
	defer p.lock.RUnlock()
	return podsOf(p.activeQ.List())
}

func (p *PriorityQueue) PodsInBackoffQ() []*corev1.Pod {
	p.lock.RLock()
	defer p.lock.RUnlock()
	return podsOf(p.backoffQ.list())
}

func (p *PriorityQueue) UnschedulablePods() []*corev1.Pod {
	p.lock.RLock()
	defer p.lock.RUnlock()
	out := make([]*corev1.Pod, 0, len(p.unschedulable))
	for _, e := range p.unschedulable {
		out = append(out, e.pInfo.Pod)
	}
	return out
}

// GetPod returns the queued pod namespace/name from activeQ, backoffQ or
// the unschedulable pool.
func (p *PriorityQueue) GetPod(name, namespace string) (*framework.QueuedPodInfo, bool) {
	p.lock.RLock()
	defer p.lock.RUnlock()
	k := namespace + "/" + name
	if pi, ok := p.activeQ.Get(k); ok {
		return pi, true
	}
	if pi, ok := p.backoffQ.get(k); ok {
		return pi, true
	}
	if pi := p.getUnschedulable(k); pi != nil {
		return pi, true
	}
	return nil, false
}

func podsOf(in []*framework.QueuedPodInfo) []*corev1.Pod {
	out := make([]*corev1.Pod, len(in))
	for i, pi := range in {
		out[i] = pi.Pod
	}
	return out
}

func (p *PriorityQueue) updateGauges() {
	if p.metrics == nil {
		return
	}
	p.metrics.setPending(p.activeQ.Len(), p.backoffQ.len(), len(p.unschedulable)-p.gated, p.gated)
}

// AddNominatedPod nominates a pod to a node (preemption, before its
// status.nominatedNodeName is written; or with a nil/Noop info, to that
// field's node).
func (p *PriorityQueue) AddNominatedPod(logger *slog.Logger, pi *framework.PodInfo, info *framework.NominatingInfo) {
	logger = p.log(logger)
	p.lock.Lock()
	defer p.lock.Unlock()
	p.nominator.add(logger, pi, info)
}

// DeleteNominatedPodIfExists forgets the pod's nomination.
func (p *PriorityQueue) DeleteNominatedPodIfExists(pod *corev1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.nominator.delete(pod)
}

// UpdateNominatedPod re-nominates a changed pod.
func (p *PriorityQueue) UpdateNominatedPod(logger *slog.Logger, oldPod *corev1.Pod, newPI *framework.PodInfo) {
	logger = p.log(logger)
	p.lock.Lock()
	defer p.lock.Unlock()
	p.nominator.update(logger, oldPod, newPI)
}

// NominatedPodsForNode returns copies of the PodInfos of the pods
// nominated to node (the queue's version of each pod; a bare pod with its
// name and UID when the queue does not hold it).
func (p *PriorityQueue) NominatedPodsForNode(nodeName string) []*framework.PodInfo {
	if p.nominator.count.Load() == 0 {
		return nil
	}
	p.lock.RLock()
	defer p.lock.RUnlock()
	refs := p.nominator.forNode(nodeName)
	out := make([]*framework.PodInfo, len(refs))
	for i, r := range refs {
		pi := p.podInfoOf(r)
		cp := *pi
		out[i] = &cp
	}
	return out
}

func (p *PriorityQueue) podInfoOf(r podRef) *framework.PodInfo {
	k := r.key()
	if q, ok := p.activeQ.Get(k); ok {
		return q.PodInfo
	}
	if q := p.getUnschedulable(k); q != nil {
		return q.PodInfo
	}
	if q, ok := p.backoffQ.get(k); ok {
		return q.PodInfo
	}
	if el, ok := p.inFlightPods[r.uid]; ok {
		return el.Value.(*inFlightPod).podInfo
	}
	return &framework.PodInfo{Pod: r.toPod()}
}

var (
	_ framework.PodNominator = (*PriorityQueue)(nil)
	_ framework.PodActivator = (*PriorityQueue)(nil)
)
