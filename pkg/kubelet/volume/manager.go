package volume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// Upstream's plugin directory names (pods/<uid>/volumes/<plugin>/<name>).
const (
	PluginEmptyDir    = "kubernetes.io~empty-dir"
	PluginConfigMap   = "kubernetes.io~configmap"
	PluginSecret      = "kubernetes.io~secret"
	PluginProjected   = "kubernetes.io~projected"
	PluginDownwardAPI = "kubernetes.io~downward-api"
	PluginHostPath    = "kubernetes.io~host-path"
	PluginLocal       = "kubernetes.io~local-volume"
)

// Config configures a Manager.
type Config struct {
	// Client reads configMaps, secrets, PVCs and PVs (GET by name) and
	// requests service account tokens.
	Client *client.Client
	// RootDir is the kubelet's root directory (pods/<uid>/volumes/...).
	RootDir string
	Clock   clock.Clock
	Logger  *slog.Logger
	// NodeAllocatable is what a downwardAPI resourceFieldRef reports as
	// the limit of a container without one, and bounds the size of a
	// Memory emptyDir (tmpfs).
	NodeAllocatable corev1.ResourceList
	// ResyncPeriod is how often the contents of configMap, secret,
	// downwardAPI and projected volumes are refreshed (default 1 min, as
	// upstream's pod sync period).
	ResyncPeriod time.Duration
	// CacheTTL is how long a configMap or secret read for a SetUp is
	// reused by other SetUps (default 5 s); the refresh always reads anew.
	CacheTTL time.Duration
}

// Manager sets up, refreshes and tears down the volumes of the pods of
// one node.
type Manager struct {
	cfg    Config
	clock  clock.Clock
	log    *slog.Logger
	cache  *objectCache
	tokens *tokenManager

	mu   sync.Mutex
	pods map[types.UID]*podState
	// released: pods that finished and whose volumes were torn down;
	// SetUp does nothing for them (until TearDown forgets them).
	released map[types.UID]bool
}

// podState is what the manager holds for one pod; mu serialises SetUp,
// refresh and TearDown of the pod.
type podState struct {
	mu   sync.Mutex
	pod  *corev1.Pod
	vols map[string]*volState
	gone bool
}

// volState is a volume that is set up.
type volState struct {
	plugin string
	// path is what containers mount (the volume's directory, or the host
	// path of a hostPath or PV).
	path string
	// readOnly: containers mount it read-only whatever their mount says
	// (configMap, secret, downwardAPI, projected, a read-only PVC).
	readOnly bool
	// contents: written by the manager and refreshed (configMap, secret,
	// downwardAPI, projected); downward: they depend on the pod's labels
	// or annotations.
	contents, downward bool
}

// New returns a Manager.
func New(cfg Config) (*Manager, error) {
	if cfg.Client == nil || cfg.RootDir == "" {
		return nil, errors.New("volume: Client and RootDir are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ResyncPeriod <= 0 {
		cfg.ResyncPeriod = time.Minute
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = 5 * time.Second
	}
	m := &Manager{cfg: cfg, clock: cfg.Clock, log: cfg.Logger, pods: map[types.UID]*podState{}, released: map[types.UID]bool{}}
	m.cache = &objectCache{m: m, by: map[objectKey]cached{}}
	m.tokens = &tokenManager{m: m, tokens: map[tokenKey]*authenticationv1.TokenRequest{}}
	return m, nil
}

// PodDir is the directory of pod uid under the root dir.
func (m *Manager) PodDir(uid types.UID) string {
	return filepath.Join(m.cfg.RootDir, "pods", string(uid))
}

// VolumeDir is the directory of a volume the manager makes.
func (m *Manager) VolumeDir(uid types.UID, plugin, name string) string {
	return filepath.Join(m.PodDir(uid), "volumes", plugin, name)
}

// Error is what SetUp returns when volumes of the pod are not ready:
// one message per problem, each upstream's FailedMount event message.
type Error struct {
	Messages []string
}

func (e *Error) Error() string { return strings.Join(e.Messages, "; ") }

// Messages are the FailedMount event messages of an error SetUp returned.
func Messages(err error) []string {
	var ve *Error
	if errors.As(err, &ve) {
		return ve.Messages
	}
	return []string{err.Error()}
}

// processError is a volume that could not even be turned into a spec
// (an unbound PVC): upstream reports it as "failed to process".
type processError struct{ err error }

func (e processError) Error() string { return e.err.Error() }

func fmtErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

var errEmptyToken = errors.New("the token request returned no token")

func (m *Manager) state(uid types.UID) *podState {
	m.mu.Lock()
	defer m.mu.Unlock()
	ps := m.pods[uid]
	if ps == nil {
		ps = &podState{vols: map[string]*volState{}}
		m.pods[uid] = ps
	}
	return ps
}

// SetUp sets up the volumes of pod that are not set up yet (those some
// container mounts: upstream ignores the others); it is idempotent and cheap once they are (volumes of a pod never change), and
// rewrites the downwardAPI contents when the pod's labels or annotations
// changed. An error lists the volumes that are not ready (*Error).
func (m *Manager) SetUp(ctx context.Context, pod *corev1.Pod) error {
	m.mu.Lock()
	released := m.released[pod.UID]
	m.mu.Unlock()
	if released {
		return nil
	}
	ps := m.state(pod.UID)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.gone {
		return fmt.Errorf("pod %s/%s: volumes are being torn down", pod.Namespace, pod.Name)
	}
	metaChanged := ps.pod != nil && (!maps.Equal(ps.pod.Labels, pod.Labels) || !maps.Equal(ps.pod.Annotations, pod.Annotations))
	ps.pod = pod
	f := m.cache.fetcher(false)
	var msgs []string
	var unmounted, unprocessed []string
	var processErr error
	used := usedVolumes(pod)
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !used[v.Name] {
			continue // as upstream's: a volume no container mounts is ignored
		}
		if vs := ps.vols[v.Name]; vs != nil {
			if metaChanged && vs.downward {
				if err := m.writeContents(ctx, f, pod, v, ps.vols[v.Name]); err != nil {
					m.log.Warn("updating downward API volume", "pod", pod.Namespace+"/"+pod.Name, "volume", v.Name, "err", err)
				}
			}
			continue
		}
		vs, err := m.setUpVolume(ctx, f, pod, v)
		if err != nil {
			unmounted = append(unmounted, v.Name)
			var pe processError
			if errors.As(err, &pe) {
				unprocessed = append(unprocessed, v.Name)
				if processErr == nil {
					processErr = pe.err
				}
				continue
			}
			msgs = append(msgs, fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", v.Name, err))
			continue
		}
		ps.vols[v.Name] = vs
	}
	if processErr != nil {
		sort.Strings(unmounted)
		sort.Strings(unprocessed)
		msgs = append(msgs, fmt.Sprintf("Unable to attach or mount volumes: unmounted volumes=%v, unattached volumes=[], failed to process volumes=%v: %v",
			unmounted, unprocessed, processErr))
	}
	if len(msgs) > 0 {
		return &Error{Messages: msgs}
	}
	return nil
}

// usedVolumes are the volumes some container (init, regular or
// ephemeral) mounts or uses as a device.
func usedVolumes(pod *corev1.Pod) map[string]bool {
	used := map[string]bool{}
	add := func(mounts []corev1.VolumeMount, devices []corev1.VolumeDevice) {
		for _, m := range mounts {
			used[m.Name] = true
		}
		for _, d := range devices {
			used[d.Name] = true
		}
	}
	for _, c := range pod.Spec.InitContainers {
		add(c.VolumeMounts, c.VolumeDevices)
	}
	for _, c := range pod.Spec.Containers {
		add(c.VolumeMounts, c.VolumeDevices)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		add(c.VolumeMounts, c.VolumeDevices)
	}
	return used
}

// setUpVolume sets up one volume.
func (m *Manager) setUpVolume(ctx context.Context, f *fetcher, pod *corev1.Pod, v *corev1.Volume) (*volState, error) {
	src := &v.VolumeSource
	switch {
	case src.EmptyDir != nil:
		return m.setUpEmptyDir(pod, v)
	case src.HostPath != nil:
		if hasBackstep(src.HostPath.Path) {
			return nil, fmt.Errorf("invalid HostPath `%s`: must not contain '..'", src.HostPath.Path)
		}
		if err := checkHostPathType(src.HostPath.Path, src.HostPath.Type); err != nil {
			return nil, err
		}
		return &volState{plugin: PluginHostPath, path: src.HostPath.Path}, nil
	case src.ConfigMap != nil, src.Secret != nil, src.DownwardAPI != nil, src.Projected != nil:
		vs := &volState{plugin: contentPlugin(src), readOnly: true, contents: true, downward: usesDownward(src)}
		vs.path = m.VolumeDir(pod.UID, vs.plugin, v.Name)
		if err := m.writeContents(ctx, f, pod, v, vs); err != nil {
			return nil, err
		}
		return vs, nil
	case src.PersistentVolumeClaim != nil:
		return m.setUpClaim(ctx, pod, v)
	}
	return nil, fmt.Errorf("volume type not supported by skiff's kubelet (emptyDir, hostPath, configMap, secret, downwardAPI, projected and persistentVolumeClaim are)")
}

func hasBackstep(p string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
}

func contentPlugin(src *corev1.VolumeSource) string {
	switch {
	case src.ConfigMap != nil:
		return PluginConfigMap
	case src.Secret != nil:
		return PluginSecret
	case src.DownwardAPI != nil:
		return PluginDownwardAPI
	}
	return PluginProjected
}

func usesDownward(src *corev1.VolumeSource) bool {
	if src.DownwardAPI != nil {
		return true
	}
	if src.Projected != nil {
		for _, s := range src.Projected.Sources {
			if s.DownwardAPI != nil {
				return true
			}
		}
	}
	return false
}

// setUpEmptyDir makes the directory (mode 0777, as upstream's) and, for
// medium Memory, mounts a tmpfs on it.
func (m *Manager) setUpEmptyDir(pod *corev1.Pod, v *corev1.Volume) (*volState, error) {
	src := v.EmptyDir
	dir := m.VolumeDir(pod.UID, PluginEmptyDir, v.Name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	switch src.Medium {
	case corev1.StorageMediumDefault:
		if err := os.Chmod(dir, 0o777); err != nil {
			return nil, err
		}
	case corev1.StorageMediumMemory:
		mounted, err := isMountPoint(dir)
		if err != nil {
			return nil, err
		}
		if !mounted {
			if err := mountTmpfs(dir, m.tmpfsSize(pod, src)); err != nil {
				return nil, fmt.Errorf("mount of tmpfs on %s failed: %w", dir, err)
			}
		}
	default:
		return nil, fmt.Errorf("unknown storage medium %q", src.Medium)
	}
	// (upstream's emptyDir ignores fsGroupChangePolicy: always walked)
	if sc := pod.Spec.SecurityContext; sc != nil {
		if err := setVolumeOwnership(dir, sc.FSGroup, nil, false); err != nil {
			return nil, err
		}
	}
	return &volState{plugin: PluginEmptyDir, path: dir}, nil
}

// tmpfsSize is upstream's calculateEmptyDirMemorySize: the node's
// allocatable memory, or the pod's memory limit when lower, or the
// volume's sizeLimit when lower still (0: the kernel's default).
func (m *Manager) tmpfsSize(pod *corev1.Pod, src *corev1.EmptyDirVolumeSource) int64 {
	size := int64(0)
	if q, ok := m.cfg.NodeAllocatable[corev1.ResourceMemory]; ok {
		size = q.Value()
	}
	lower := func(v int64) {
		if v > 0 && (size == 0 || v <= size) {
			size = v
		}
	}
	lower(podMemoryLimit(pod))
	if src.SizeLimit != nil {
		lower(src.SizeLimit.Value())
	}
	return size
}

// podMemoryLimit is the pod's memory limit as its cgroup would get it: the
// sum of its containers' limits (the largest init container's when
// higher) plus overhead, 0 when a container has none.
func podMemoryLimit(pod *corev1.Pod) int64 {
	var sum, initMax int64
	for _, c := range pod.Spec.Containers {
		q, ok := c.Resources.Limits[corev1.ResourceMemory]
		if !ok || q.IsZero() {
			return 0
		}
		sum += q.Value()
	}
	for _, c := range pod.Spec.InitContainers {
		q, ok := c.Resources.Limits[corev1.ResourceMemory]
		if !ok || q.IsZero() {
			return 0
		}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum += q.Value()
		} else if q.Value() > initMax {
			initMax = q.Value()
		}
	}
	sum = max(sum, initMax)
	if q, ok := pod.Spec.Overhead[corev1.ResourceMemory]; ok {
		sum += q.Value()
	}
	return sum
}

// TearDown unmounts what the manager mounted for pod uid (tmpfs) and
// removes the pod's directory; it forgets the pod's tokens. Called once
// the pod's containers and sandbox are gone.
func (m *Manager) TearDown(ctx context.Context, uid types.UID) error {
	if err := m.tearDown(ctx, uid, false); err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.released, uid)
	m.mu.Unlock()
	return nil
}

// Release tears down the volumes of a pod that finished (Succeeded or
// Failed, no container running), as upstream's kubelet unmounts the
// volumes of terminated pods: a tmpfs gives its memory back, emptyDir
// contents are gone. The pod directory's "containers" (the containers'
// termination message files, which the pod's status is read from as long
// as the pod exists) stays until TearDown, as upstream's kubelet keeps
// the pod directory until the pod is removed. Further SetUps of the pod
// do nothing.
func (m *Manager) Release(ctx context.Context, uid types.UID) error {
	m.mu.Lock()
	done := m.released[uid]
	m.released[uid] = true
	m.mu.Unlock()
	if done {
		return nil
	}
	if err := m.tearDown(ctx, uid, true); err != nil {
		m.mu.Lock()
		delete(m.released, uid)
		m.mu.Unlock()
		return err
	}
	return nil
}

// ContainersDir is the entry of a pod's directory that Release keeps.
const ContainersDir = "containers"

func (m *Manager) tearDown(ctx context.Context, uid types.UID, keepContainers bool) error {
	m.mu.Lock()
	ps := m.pods[uid]
	m.mu.Unlock()
	dir := m.PodDir(uid)
	if ps == nil {
		if _, err := os.Lstat(dir); os.IsNotExist(err) {
			return nil // nothing was set up (or it is gone already)
		}
	}
	if ps != nil {
		ps.mu.Lock()
		ps.gone = true
		ps.mu.Unlock()
	}
	mps, err := mountPointsUnder(dir)
	if err != nil {
		return err
	}
	for _, mp := range mps {
		if err := unmount(mp); err != nil {
			return fmt.Errorf("unmounting %s: %w", mp, err)
		}
	}
	if err := removePodDir(dir, keepContainers); err != nil {
		return err
	}
	m.tokens.forget(uid)
	m.mu.Lock()
	if m.pods[uid] == ps {
		delete(m.pods, uid)
	}
	m.mu.Unlock()
	return nil
}

// CleanupOrphans tears down the pod directories under the root dir of
// pods keep does not know (left behind by a kubelet that stopped before
// it could tear them down).
func (m *Manager) CleanupOrphans(ctx context.Context, keep func(types.UID) bool) error {
	entries, err := os.ReadDir(filepath.Join(m.cfg.RootDir, "pods"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		uid := types.UID(e.Name())
		if !e.IsDir() || keep(uid) {
			continue
		}
		if err := m.TearDown(ctx, uid); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Run refreshes the contents of the pods' configMap, secret, downwardAPI
// and projected volumes (and rotates their tokens) every ResyncPeriod
// until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	t := m.clock.NewTicker(m.cfg.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			m.Refresh(ctx)
		}
	}
}

// Refresh rewrites every content volume whose source changed, reading
// each configMap and secret once.
func (m *Manager) Refresh(ctx context.Context) {
	m.mu.Lock()
	pods := make([]*podState, 0, len(m.pods))
	for _, ps := range m.pods {
		pods = append(pods, ps)
	}
	m.mu.Unlock()
	f := m.cache.fetcher(true)
	for _, ps := range pods {
		if ctx.Err() != nil {
			return
		}
		ps.mu.Lock()
		if !ps.gone && ps.pod != nil {
			pod := ps.pod
			for i := range pod.Spec.Volumes {
				v := &pod.Spec.Volumes[i]
				vs := ps.vols[v.Name]
				if vs == nil || !vs.contents {
					continue
				}
				if err := m.writeContents(ctx, f, pod, v, vs); err != nil {
					m.log.Warn("refreshing volume", "pod", pod.Namespace+"/"+pod.Name, "volume", v.Name, "err", err)
				}
			}
		}
		ps.mu.Unlock()
	}
	m.cache.prune(m.clock.Now(), 10*m.cfg.ResyncPeriod)
}

// removePodDir removes a pod's directory, or with keepContainers all of it
// but its ContainersDir (the directory too when there is none).
func removePodDir(dir string, keepContainers bool) error {
	if keepContainers {
		entries, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		kept := false
		for _, e := range entries {
			if e.Name() == ContainersDir {
				kept = true
				continue
			}
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
		if kept {
			return nil
		}
	}
	return os.RemoveAll(dir)
}
