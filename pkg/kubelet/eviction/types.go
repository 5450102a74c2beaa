package eviction

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Signal is an eviction signal (upstream's names).
type Signal string

// The signals skiff observes (allocatableMemory.available is accepted in
// thresholds but has no observation; containerfs.* are not supported).
const (
	SignalMemoryAvailable            Signal = "memory.available"
	SignalNodeFsAvailable            Signal = "nodefs.available"
	SignalNodeFsInodesFree           Signal = "nodefs.inodesFree"
	SignalImageFsAvailable           Signal = "imagefs.available"
	SignalImageFsInodesFree          Signal = "imagefs.inodesFree"
	SignalAllocatableMemoryAvailable Signal = "allocatableMemory.available"
	SignalPIDAvailable               Signal = "pid.available"
)

// OpLessThan is the only threshold operator.
const OpLessThan = "LessThan"

const (
	resourceInodes corev1.ResourceName = "inodes"
	resourcePids   corev1.ResourceName = "pids"
)

var signalToCondition = map[Signal]corev1.NodeConditionType{
	SignalMemoryAvailable:            corev1.NodeMemoryPressure,
	SignalAllocatableMemoryAvailable: corev1.NodeMemoryPressure,
	SignalNodeFsAvailable:            corev1.NodeDiskPressure,
	SignalNodeFsInodesFree:           corev1.NodeDiskPressure,
	SignalImageFsAvailable:           corev1.NodeDiskPressure,
	SignalImageFsInodesFree:          corev1.NodeDiskPressure,
	SignalPIDAvailable:               corev1.NodePIDPressure,
}

var signalToResource = map[Signal]corev1.ResourceName{
	SignalMemoryAvailable:            corev1.ResourceMemory,
	SignalAllocatableMemoryAvailable: corev1.ResourceMemory,
	SignalNodeFsAvailable:            corev1.ResourceEphemeralStorage,
	SignalNodeFsInodesFree:           resourceInodes,
	SignalImageFsAvailable:           corev1.ResourceEphemeralStorage,
	SignalImageFsInodesFree:          resourceInodes,
	SignalPIDAvailable:               resourcePids,
}

// ThresholdValue is a quantity or a fraction (0..1) of the capacity.
type ThresholdValue struct {
	Quantity   *resource.Quantity
	Percentage float32
}

// Of is the threshold's quantity against capacity (a percentage of it,
// or its own quantity).
func (v ThresholdValue) Of(capacity *resource.Quantity) *resource.Quantity {
	if v.Quantity != nil {
		q := v.Quantity.DeepCopy()
		return &q
	}
	var c int64
	if capacity != nil {
		c = capacity.Value()
	}
	return resource.NewQuantity(int64(float64(c)*float64(v.Percentage)), resource.BinarySI)
}

func (v ThresholdValue) String() string {
	if v.Quantity != nil {
		return v.Quantity.String()
	}
	return strconv.FormatFloat(math.Round(float64(v.Percentage)*1e6)/1e4, 'f', -1, 64) + "%"
}

// Threshold is met when the signal's available amount is less than Value;
// GracePeriod 0 is a hard threshold.
type Threshold struct {
	Signal      Signal
	Operator    string
	Value       ThresholdValue
	GracePeriod time.Duration
	MinReclaim  *ThresholdValue
}

// IsHard reports whether t has no grace period.
func (t Threshold) IsHard() bool { return t.GracePeriod == 0 }

// key identifies a threshold (upstream keys maps by the struct).
func (t Threshold) key() string {
	return fmt.Sprintf("%s<%s/%s", t.Signal, t.Value, t.GracePeriod)
}

// Observation is a signal's available amount and capacity.
type Observation struct {
	Available, Capacity *resource.Quantity
}

// Observations by signal.
type Observations map[Signal]Observation

// ContainerStats is a container's usage.
type ContainerStats struct {
	Name string
	// Memory is the working set.
	Memory *resource.Quantity
	// Rootfs is the writable layer, Logs the container's logs (bytes and
	// inodes).
	Rootfs, Logs             *resource.Quantity
	RootfsInodes, LogsInodes *resource.Quantity
}

// PodStats is a pod's usage.
type PodStats struct {
	// Memory is the pod's working set.
	Memory     *resource.Quantity
	Containers []ContainerStats
	// Volumes is what the pod's local ephemeral volumes (emptyDir,
	// hostPath...) use, bytes and inodes.
	Volumes, VolumeInodes *resource.Quantity
	// VolumeUsage is each local ephemeral volume's usage by name
	// (emptyDir sizeLimit evictions).
	VolumeUsage map[string]*resource.Quantity
	// Processes running in the pod.
	Processes uint64
}

// StatsFunc gives a pod's usage; false when unknown.
type StatsFunc func(*corev1.Pod) (PodStats, bool)

// DefaultEvictionHard is upstream's --eviction-hard default on Linux.
var DefaultEvictionHard = map[string]string{
	"memory.available":   "100Mi",
	"nodefs.available":   "10%",
	"nodefs.inodesFree":  "5%",
	"imagefs.available":  "15%",
	"imagefs.inodesFree": "5%",
}

// DefaultThresholds are the thresholds of DefaultEvictionHard.
func DefaultThresholds() []Threshold {
	t, err := ParseThresholds(DefaultEvictionHard, nil, nil, nil)
	if err != nil {
		panic(err)
	}
	return t
}

// ParseThresholds is upstream's ParseThresholdConfig (without the
// allocatable thresholds of --enforce-node-allocatable): hard and soft
// thresholds ("memory.available": "100Mi" or "10%"), a grace period
// required for each soft one, minimum reclaims.
func ParseThresholds(hard, soft, softGrace, minReclaim map[string]string) ([]Threshold, error) {
	var out []Threshold
	h, err := parseStatements(hard)
	if err != nil {
		return nil, err
	}
	out = append(out, h...)
	s, err := parseStatements(soft)
	if err != nil {
		return nil, err
	}
	graces := map[Signal]time.Duration{}
	for sig, v := range softGrace {
		if !validSignal(Signal(sig)) {
			return nil, fmt.Errorf("unsupported eviction signal %v", sig)
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, err
		}
		if d < 0 {
			return nil, fmt.Errorf("invalid eviction grace period specified: %v, must be a positive value", v)
		}
		graces[Signal(sig)] = d
	}
	for i := range s {
		d, ok := graces[s[i].Signal]
		if !ok {
			return nil, fmt.Errorf("grace period must be specified for the soft eviction threshold %v", s[i].Signal)
		}
		s[i].GracePeriod = d
	}
	out = append(out, s...)
	reclaims := map[Signal]ThresholdValue{}
	for sig, v := range minReclaim {
		if !validSignal(Signal(sig)) {
			return nil, fmt.Errorf("unsupported eviction signal %v", sig)
		}
		if strings.HasSuffix(v, "%") {
			p, err := parsePercentage(v)
			if err != nil {
				return nil, err
			}
			if p <= 0 {
				return nil, fmt.Errorf("eviction percentage minimum reclaim %v must be positive: %s", sig, v)
			}
			reclaims[Signal(sig)] = ThresholdValue{Percentage: p}
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, err
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("negative eviction minimum reclaim specified for %v", sig)
		}
		reclaims[Signal(sig)] = ThresholdValue{Quantity: &q}
	}
	for i := range out {
		if r, ok := reclaims[out[i].Signal]; ok {
			out[i].MinReclaim = &r
		}
	}
	return out, nil
}

func validSignal(s Signal) bool { _, ok := signalToResource[s]; return ok }

func parsePercentage(v string) (float32, error) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 32)
	if err != nil {
		return 0, err
	}
	return float32(f) / 100, nil
}

func parseStatements(m map[string]string) ([]Threshold, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Threshold
	for _, k := range keys {
		sig, v := Signal(k), m[k]
		if !validSignal(sig) {
			return nil, fmt.Errorf("unsupported eviction signal %v", sig)
		}
		if strings.HasSuffix(v, "%") {
			if v == "0%" || v == "100%" {
				continue // upstream: a disabled threshold
			}
			p, err := parsePercentage(v)
			if err != nil {
				return nil, err
			}
			if p < 0 {
				return nil, fmt.Errorf("eviction percentage threshold %v must be >= 0%%: %s", sig, v)
			}
			if p > 1 {
				return nil, fmt.Errorf("eviction percentage threshold %v must be <= 100%%: %s", sig, v)
			}
			out = append(out, Threshold{Signal: sig, Operator: OpLessThan, Value: ThresholdValue{Percentage: p}})
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, err
		}
		if q.Sign() <= 0 {
			return nil, fmt.Errorf("eviction threshold %v must be positive: %s", sig, &q)
		}
		out = append(out, Threshold{Signal: sig, Operator: OpLessThan, Value: ThresholdValue{Quantity: &q}})
	}
	return out, nil
}

// ParseLangleMap parses upstream's --eviction-hard/--eviction-soft flag
// syntax: "memory.available<100Mi,nodefs.available<10%".
func ParseLangleMap(s string) (map[string]string, error) {
	return parseMap(s, "<")
}

// ParseEqualsMap parses --eviction-soft-grace-period and
// --eviction-minimum-reclaim: "memory.available=1m30s,...".
func ParseEqualsMap(s string) (map[string]string, error) {
	return parseMap(s, "=")
}

func parseMap(s, sep string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, sep)
		if !ok {
			return nil, fmt.Errorf("malformed pair, expect string%sstring", sep)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}
