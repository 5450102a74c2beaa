package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// DefaultAssumedPodTTL is how long an assumed pod whose binding finished
// stays counted when the informer never reports it bound.
const DefaultAssumedPodTTL = 15 * time.Minute

// cleanupPeriod is how often Run expires assumed pods.
const cleanupPeriod = time.Second

// Config configures a Cache.
type Config struct {
	// Clock drives assumed-pod expiry (the real clock when nil).
	Clock clock.Clock
	// Logger (discarded when nil) is used when a method gets a nil logger.
	Logger *slog.Logger
	// AssumedPodTTL: an assumed pod is expired this long after
	// FinishBinding if its binding never shows up in the informer. 0 means
	// DefaultAssumedPodTTL, negative never expire.
	AssumedPodTTL time.Duration
	// Registerer, when set, gets scheduler_cache_size{type}.
	Registerer prometheus.Registerer
}

// Dump is a copy of the cache's state for debugging and tests.
type Dump struct {
	// AssumedPods holds the assumed pods' UIDs.
	AssumedPods sets.Set[string]
	// Nodes: node name → copy of its NodeInfo (node-less ones included).
	Nodes map[string]*framework.NodeInfo
}

// nodeItem is a NodeInfo in the cache's list ordered by most recent
// change (head first), so UpdateSnapshot visits only what changed.
type nodeItem struct {
	info       *framework.NodeInfo
	prev, next *nodeItem
}

type podState struct {
	pod *corev1.Pod
	// deadline is when an assumed pod whose binding finished expires (nil:
	// binding not finished yet, or never expires).
	deadline        *time.Time
	bindingFinished bool
}

// imageState is one image across the cluster: its size (as first seen)
// and the nodes that have it.
type imageState struct {
	size  int64
	nodes sets.Set[string]
}

// Cache is the scheduler's view of nodes and the pods bound or assumed to
// them. It is safe for concurrent use.
type Cache struct {
	clock  clock.Clock
	logger *slog.Logger
	ttl    time.Duration

	mu sync.RWMutex
	// generation is bumped on every change of a NodeInfo, which then
	// carries the new value.
	generation  int64
	assumedPods sets.Set[types.UID]
	podStates   map[types.UID]*podState
	nodes       map[string]*nodeItem
	head        *nodeItem
	tree        *nodeTree
	// treeVersion is bumped whenever the node tree changes (node added,
	// removed, moved to another zone): snapshots then rebuild their lists.
	treeVersion int64
	images      map[string]*imageState
	// dirtyImages: images whose node count changed since the last
	// UpdateSnapshot; the NodeInfos holding them get fresh summaries then.
	dirtyImages sets.Set[string]
}

// New returns an empty cache; call Run to expire assumed pods.
func New(cfg Config) *Cache {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.AssumedPodTTL == 0:
		cfg.AssumedPodTTL = DefaultAssumedPodTTL
	case cfg.AssumedPodTTL < 0:
		cfg.AssumedPodTTL = 0
	}
	c := &Cache{
		clock:       cfg.Clock,
		logger:      cfg.Logger,
		ttl:         cfg.AssumedPodTTL,
		assumedPods: sets.New[types.UID](),
		podStates:   map[types.UID]*podState{},
		nodes:       map[string]*nodeItem{},
		tree:        newNodeTree(nil),
		images:      map[string]*imageState{},
		dirtyImages: sets.New[string](),
	}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(newMetricsCollector(c)); err != nil {
			c.logger.Error("Registering scheduler cache metrics", "err", err)
		}
	}
	return c
}

// Run expires assumed pods every second until ctx ends.
func (c *Cache) Run(ctx context.Context) {
	t := c.clock.NewTicker(cleanupPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			c.cleanupAssumedPods(c.clock.Now())
		}
	}
}

func (c *Cache) log(l *slog.Logger) *slog.Logger {
	if l == nil {
		return c.logger
	}
	return l
}

func podKey(pod *corev1.Pod) (types.UID, error) {
	if pod.UID == "" {
		return "", errors.New("cannot get cache key for pod with empty UID")
	}
	return pod.UID, nil
}

func podRef(key types.UID, pod *corev1.Pod) string {
	return fmt.Sprintf("%s(%s/%s)", key, pod.Namespace, pod.Name)
}

// touch gives the NodeInfo a new generation and moves it to the head of
// the list. Lock held.
func (c *Cache) touch(it *nodeItem) {
	c.generation++
	it.info.Generation = c.generation
	if it == c.head {
		return
	}
	c.unlink(it)
	it.next = c.head
	if c.head != nil {
		c.head.prev = it
	}
	c.head = it
}

func (c *Cache) unlink(it *nodeItem) {
	if it.prev != nil {
		it.prev.next = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	}
	if c.head == it {
		c.head = it.next
	}
	it.prev, it.next = nil, nil
}

// item returns the node's item, creating a node-less one. Lock held.
func (c *Cache) item(name string) *nodeItem {
	it, ok := c.nodes[name]
	if !ok {
		it = &nodeItem{info: framework.NewNodeInfo()}
		c.nodes[name] = it
	}
	return it
}

// deleteItem drops a node-less NodeInfo without pods. Lock held.
func (c *Cache) deleteItem(name string) {
	if it, ok := c.nodes[name]; ok {
		c.unlink(it)
		delete(c.nodes, name)
	}
}

// --- pods ---

// AssumePod counts pod (spec.nodeName set) on its node before the binding
// is confirmed by the informer.
func (c *Cache) AssumePod(logger *slog.Logger, pod *corev1.Pod) error {
	key, err := podKey(pod)
	if err != nil {
		return err
	}
	if pod.Spec.NodeName == "" {
		return fmt.Errorf("pod %s has no node name, so can't be assumed", podRef(key, pod))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.podStates[key]; ok {
		return fmt.Errorf("pod %s is in the cache, so can't be assumed", podRef(key, pod))
	}
	c.addPod(pod)
	c.podStates[key] = &podState{pod: pod}
	c.assumedPods.Insert(key)
	return nil
}

// FinishBinding starts the expiry deadline of an assumed pod: the binding
// was sent. A pod that is not assumed (already confirmed) is left alone.
func (c *Cache) FinishBinding(logger *slog.Logger, pod *corev1.Pod) error {
	return c.finishBinding(logger, pod, c.clock.Now())
}

func (c *Cache) finishBinding(logger *slog.Logger, pod *corev1.Pod, now time.Time) error {
	key, err := podKey(pod)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log(logger).Debug("Finished binding for pod, can be expired", "pod", pod.Namespace+"/"+pod.Name)
	ps, ok := c.podStates[key]
	if ok && c.assumedPods.Has(key) {
		if c.ttl > 0 {
			dl := now.Add(c.ttl)
			ps.deadline = &dl
		} else {
			ps.deadline = nil
		}
		ps.bindingFinished = true
	}
	return nil
}

// ForgetPod removes an assumed pod (its binding failed).
func (c *Cache) ForgetPod(logger *slog.Logger, pod *corev1.Pod) error {
	key, err := podKey(pod)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.podStates[key]
	if ok && ps.pod.Spec.NodeName != pod.Spec.NodeName {
		return fmt.Errorf("pod %s was assumed on %s but assigned to %s", podRef(key, pod), pod.Spec.NodeName, ps.pod.Spec.NodeName)
	}
	if !ok || !c.assumedPods.Has(key) {
		return fmt.Errorf("pod %s wasn't assumed so cannot be forgotten", podRef(key, pod))
	}
	if err := c.removePod(c.log(logger), ps.pod); err != nil {
		return err
	}
	delete(c.podStates, key)
	c.assumedPods.Delete(key)
	return nil
}

// AddPod records a pod the informer reports bound. For an assumed pod it
// confirms the assumption (no expiry any more), moving it when the
// informer has it on another node than assumed.
func (c *Cache) AddPod(logger *slog.Logger, pod *corev1.Pod) error {
	key, err := podKey(pod)
	if err != nil {
		return err
	}
	logger = c.log(logger)
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.podStates[key]
	switch {
	case ok && c.assumedPods.Has(key):
		if ps.pod.Spec.NodeName != pod.Spec.NodeName {
			logger.Info("Pod was added to a different node than it was assumed", "pod", pod.Namespace+"/"+pod.Name,
				"assumedNode", ps.pod.Spec.NodeName, "currentNode", pod.Spec.NodeName)
		}
		if err := c.updatePod(logger, ps.pod, pod); err != nil {
			logger.Error("Updating an assumed pod in the cache", "pod", pod.Namespace+"/"+pod.Name, "err", err)
		}
		c.assumedPods.Delete(key)
		c.podStates[key] = &podState{pod: pod}
	case !ok:
		// New, or an assumed pod that expired: (re)count it.
		c.addPod(pod)
		c.podStates[key] = &podState{pod: pod}
	default:
		return fmt.Errorf("pod %s was already in added state", podRef(key, pod))
	}
	return nil
}

// UpdatePod replaces a confirmed pod's old version with newPod.
func (c *Cache) UpdatePod(logger *slog.Logger, oldPod, newPod *corev1.Pod) error {
	key, err := podKey(oldPod)
	if err != nil {
		return err
	}
	logger = c.log(logger)
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.podStates[key]
	if !ok {
		return fmt.Errorf("pod %s is not added to scheduler cache, so cannot be updated", podRef(key, oldPod))
	}
	// An assumed pod gets an Add (which confirms it) before any Update.
	if c.assumedPods.Has(key) {
		return fmt.Errorf("assumed pod %s should not be updated", podRef(key, oldPod))
	}
	if ps.pod.Spec.NodeName != newPod.Spec.NodeName {
		// Upstream exits here (the cache is corrupted); we follow the
		// informer and move the pod.
		logger.Error("Pod updated on a different node than previously added to", "pod", newPod.Namespace+"/"+newPod.Name,
			"cachedNode", ps.pod.Spec.NodeName, "newNode", newPod.Spec.NodeName)
	}
	if err := c.updatePod(logger, ps.pod, newPod); err != nil {
		return err
	}
	ps.pod = newPod
	return nil
}

// RemovePod forgets a pod the informer reports deleted (or unbound).
func (c *Cache) RemovePod(logger *slog.Logger, pod *corev1.Pod) error {
	key, err := podKey(pod)
	if err != nil {
		return err
	}
	logger = c.log(logger)
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.podStates[key]
	if !ok {
		return fmt.Errorf("pod %s is not found in scheduler cache, so cannot be removed from it", podRef(key, pod))
	}
	if ps.pod.Spec.NodeName != pod.Spec.NodeName && pod.Spec.NodeName != "" {
		logger.Error("Pod was added to a different node than it is removed from", "pod", pod.Namespace+"/"+pod.Name,
			"cachedNode", ps.pod.Spec.NodeName, "node", pod.Spec.NodeName)
	}
	if err := c.removePod(logger, ps.pod); err != nil {
		return err
	}
	delete(c.podStates, key)
	c.assumedPods.Delete(key)
	return nil
}

// IsAssumedPod reports whether the pod is assumed and not yet confirmed.
func (c *Cache) IsAssumedPod(pod *corev1.Pod) (bool, error) {
	key, err := podKey(pod)
	if err != nil {
		return false, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.assumedPods.Has(key), nil
}

// GetPod returns the cached version of the pod (also when its node has
// been removed).
func (c *Cache) GetPod(pod *corev1.Pod) (*corev1.Pod, error) {
	key, err := podKey(pod)
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	ps, ok := c.podStates[key]
	if !ok {
		return nil, fmt.Errorf("pod %s does not exist in scheduler cache", podRef(key, pod))
	}
	return ps.pod, nil
}

// addPod counts pod on its node. Lock held.
func (c *Cache) addPod(pod *corev1.Pod) {
	it := c.item(pod.Spec.NodeName)
	it.info.AddPod(pod)
	c.touch(it)
}

// removePod uncounts pod from its node, dropping a node-less NodeInfo
// left without pods. Lock held.
func (c *Cache) removePod(logger *slog.Logger, pod *corev1.Pod) error {
	it, ok := c.nodes[pod.Spec.NodeName]
	if !ok {
		logger.Error("Node not found when trying to remove pod", "node", pod.Spec.NodeName, "pod", pod.Namespace+"/"+pod.Name)
		return nil
	}
	if err := it.info.RemovePod(pod); err != nil {
		return err
	}
	if len(it.info.Pods) == 0 && it.info.Node() == nil {
		c.deleteItem(pod.Spec.NodeName)
	} else {
		c.touch(it)
	}
	return nil
}

func (c *Cache) updatePod(logger *slog.Logger, oldPod, newPod *corev1.Pod) error {
	if err := c.removePod(logger, oldPod); err != nil {
		return err
	}
	c.addPod(newPod)
	return nil
}

// cleanupAssumedPods expires assumed pods whose binding finished more
// than the TTL before now.
func (c *Cache) cleanupAssumedPods(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key := range c.assumedPods {
		ps := c.podStates[key]
		if ps == nil || !ps.bindingFinished || ps.deadline == nil || !now.After(*ps.deadline) {
			continue
		}
		c.logger.Warn("Pod expired", "pod", ps.pod.Namespace+"/"+ps.pod.Name, "node", ps.pod.Spec.NodeName)
		if err := c.removePod(c.logger, ps.pod); err != nil {
			c.logger.Error("Expiring assumed pod", "pod", ps.pod.Namespace+"/"+ps.pod.Name, "err", err)
		}
		delete(c.podStates, key)
		c.assumedPods.Delete(key)
	}
}

// --- nodes ---

// AddNode adds or replaces the node and returns a copy of its NodeInfo.
func (c *Cache) AddNode(logger *slog.Logger, node *corev1.Node) *framework.NodeInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.setNode(c.log(logger), node)
}

// UpdateNode replaces the node (oldNode is informational: the cache
// compares with the version it holds) and returns a copy of its NodeInfo.
func (c *Cache) UpdateNode(logger *slog.Logger, oldNode, newNode *corev1.Node) *framework.NodeInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.setNode(c.log(logger), newNode)
}

// setNode is AddNode/UpdateNode. Lock held.
func (c *Cache) setNode(logger *slog.Logger, node *corev1.Node) *framework.NodeInfo {
	it := c.item(node.Name)
	cur := it.info.Node()
	switch {
	case cur == nil:
		c.tree.addNode(logger, node)
		c.treeVersion++
	case zoneKey(cur) != zoneKey(node):
		c.tree.updateNode(logger, cur, node)
		c.treeVersion++
	}
	if cur == nil || !sameImages(cur.Status.Images, node.Status.Images) {
		c.removeNodeImages(cur)
		c.addNodeImages(node, it.info)
	}
	it.info.SetNode(node)
	c.touch(it)
	return it.info.Snapshot()
}

// RemoveNode removes the node. Its NodeInfo stays (node-less, hidden from
// snapshots) while pods of it remain, because pod deletions arrive on
// another watch and may come later.
func (c *Cache) RemoveNode(logger *slog.Logger, node *corev1.Node) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.nodes[node.Name]
	if !ok {
		return fmt.Errorf("node %v is not found", node.Name)
	}
	cur := it.info.Node()
	if cur == nil {
		return fmt.Errorf("node %v is not found", node.Name)
	}
	it.info.RemoveNode()
	if len(it.info.Pods) == 0 {
		c.deleteItem(node.Name)
	} else {
		c.touch(it)
	}
	c.treeVersion++
	c.removeNodeImages(cur)
	return c.tree.removeNode(cur)
}

func sameImages(a, b []corev1.ContainerImage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].SizeBytes != b[i].SizeBytes || len(a[i].Names) != len(b[i].Names) {
			return false
		}
		for j := range a[i].Names {
			if a[i].Names[j] != b[i].Names[j] {
				return false
			}
		}
	}
	return true
}

// addNodeImages records node's images and gives info a fresh ImageStates
// map (maps are never modified once set: snapshots share them). Lock held.
func (c *Cache) addNodeImages(node *corev1.Node, info *framework.NodeInfo) {
	sum := make(map[string]*framework.ImageStateSummary, len(node.Status.Images))
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			st, ok := c.images[name]
			if !ok {
				st = &imageState{size: img.SizeBytes, nodes: sets.New[string]()}
				c.images[name] = st
			}
			st.nodes.Insert(node.Name)
			c.dirtyImages.Insert(name)
			if _, ok := sum[name]; !ok {
				sum[name] = &framework.ImageStateSummary{Size: st.size, NumNodes: st.nodes.Len()}
			}
		}
	}
	info.ImageStates = sum
}

// removeNodeImages forgets node's images (an image on no node any more is
// dropped). Lock held.
func (c *Cache) removeNodeImages(node *corev1.Node) {
	if node == nil {
		return
	}
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			st, ok := c.images[name]
			if !ok {
				continue
			}
			st.nodes.Delete(node.Name)
			c.dirtyImages.Insert(name)
			if st.nodes.Len() == 0 {
				delete(c.images, name)
			}
		}
	}
}

// refreshImageStates gives every NodeInfo holding an image whose node
// count changed a new ImageStates map with the current counts (and a new
// generation, so that every snapshot copies it). Lock held.
func (c *Cache) refreshImageStates() {
	if c.dirtyImages.Len() == 0 {
		return
	}
	perNode := map[string][]string{}
	summaries := map[string]*framework.ImageStateSummary{}
	for name := range c.dirtyImages {
		st, ok := c.images[name]
		if !ok {
			continue
		}
		summaries[name] = &framework.ImageStateSummary{Size: st.size, NumNodes: st.nodes.Len()}
		for n := range st.nodes {
			perNode[n] = append(perNode[n], name)
		}
	}
	for n, names := range perNode {
		it, ok := c.nodes[n]
		if !ok {
			continue
		}
		changed := false
		for _, name := range names {
			if old := it.info.ImageStates[name]; old == nil || *old != *summaries[name] {
				changed = true
				break
			}
		}
		if !changed {
			continue
		}
		m := maps.Clone(it.info.ImageStates)
		for _, name := range names {
			m[name] = summaries[name]
		}
		it.info.ImageStates = m
		c.touch(it)
	}
	c.dirtyImages = sets.New[string]()
}

// --- snapshot ---

// UpdateSnapshot brings s up to date: only NodeInfos changed since s was
// last updated (generation newer than s's) are copied, the node, affinity
// and used-PVC lists are rebuilt only when the node set, the tree order,
// a node's affinity membership or its claims changed. It must not run
// while a scheduling cycle reads s.
func (c *Cache) UpdateSnapshot(logger *slog.Logger, s *Snapshot) error {
	logger = c.log(logger)
	c.mu.Lock()
	defer c.mu.Unlock()

	if s.cache != c {
		// First update from this cache: start over.
		s.nodeInfoMap = map[string]*framework.NodeInfo{}
		s.generation = 0
	}
	c.refreshImageStates()
	updateAll := s.treeVersion != c.treeVersion || s.cache != c
	updateAffinity, updatePVC := false, false
	for it := c.head; it != nil && it.info.Generation > s.generation; it = it.next {
		np := it.info.Node()
		if np == nil {
			continue
		}
		existing, ok := s.nodeInfoMap[np.Name]
		if !ok {
			updateAll = true
			existing = &framework.NodeInfo{}
			s.nodeInfoMap[np.Name] = existing
		}
		clone := it.info.Snapshot()
		if (len(existing.PodsWithAffinity) > 0) != (len(clone.PodsWithAffinity) > 0) ||
			(len(existing.PodsWithRequiredAntiAffinity) > 0) != (len(clone.PodsWithRequiredAntiAffinity) > 0) {
			updateAffinity = true
		}
		if !updatePVC && !sameKeys(existing.PVCRefCounts, clone.PVCRefCounts) {
			updatePVC = true
		}
		// Keep the pointer: the lists hold it.
		*existing = *clone
	}
	if c.head != nil {
		s.generation = c.head.info.Generation
	}

	if updateAll {
		for name := range s.nodeInfoMap {
			if it, ok := c.nodes[name]; !ok || it.info.Node() == nil {
				delete(s.nodeInfoMap, name)
			}
		}
		names, err := c.tree.list()
		if err != nil {
			logger.Error("Listing the node tree", "err", err)
		}
		s.rebuildLists(names)
		s.rebuildUsedPVCSet()
		s.treeVersion = c.treeVersion
		s.cache = c
	} else {
		if updateAffinity {
			s.rebuildAffinityLists()
		}
		if updatePVC {
			s.rebuildUsedPVCSet()
		}
	}

	if len(s.nodeInfoList) != c.tree.numNodes {
		msg := fmt.Sprintf("snapshot state is not consistent, length of NodeInfoList=%v not equal to length of nodes in tree=%v "+
			", length of NodeInfoMap=%v, length of nodes in cache=%v"+
			", trying to recover",
			len(s.nodeInfoList), c.tree.numNodes, len(s.nodeInfoMap), len(c.nodes))
		logger.Error(msg)
		s.treeVersion = -1 // rebuild everything next time
		s.generation = 0
		return errors.New(msg)
	}
	return nil
}

func sameKeys(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// NodeCount is the number of NodeInfos (node-less ones holding pods of a
// removed or not yet known node included).
func (c *Cache) NodeCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.nodes)
}

// PodCount is the number of pods counted on NodeInfos (assumed included).
func (c *Cache) PodCount() (int, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for _, it := range c.nodes {
		n += len(it.info.Pods)
	}
	return n, nil
}

// Dump copies the cache's state (expensive; debugging and tests).
func (c *Cache) Dump() *Dump {
	c.mu.RLock()
	defer c.mu.RUnlock()
	d := &Dump{AssumedPods: sets.New[string](), Nodes: make(map[string]*framework.NodeInfo, len(c.nodes))}
	for k := range c.assumedPods {
		d.AssumedPods.Insert(string(k))
	}
	for name, it := range c.nodes {
		d.Nodes[name] = it.info.Snapshot()
	}
	return d
}

// --- metrics ---

// metricsCollector exports scheduler_cache_size as upstream's gauge,
// read from the cache at scrape time.
type metricsCollector struct {
	c    *Cache
	desc *prometheus.Desc
}

func newMetricsCollector(c *Cache) *metricsCollector {
	return &metricsCollector{c: c, desc: prometheus.NewDesc("scheduler_cache_size",
		"Number of nodes, pods, and assumed (bound) pods in the scheduler cache.", []string{"type"}, nil)}
}

func (m *metricsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- m.desc }

func (m *metricsCollector) Collect(ch chan<- prometheus.Metric) {
	m.c.mu.RLock()
	assumed, pods, nodes := len(m.c.assumedPods), len(m.c.podStates), len(m.c.nodes)
	m.c.mu.RUnlock()
	ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, float64(assumed), "assumed_pods")
	ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, float64(pods), "pods")
	ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, float64(nodes), "nodes")
}
