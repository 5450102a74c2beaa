package imagelocality

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

// Name is the plugin's name in configurations.
const Name = names.ImageLocality

// The thresholds of the score: below minThreshold of (spread-scaled)
// image bytes a node scores 0, at maxContainerThreshold per container
// 100. minThreshold is about the size of a small image, so that nodes
// with only tiny images do not gain much.
const (
	mb                    int64 = 1024 * 1024
	minThreshold          int64 = 23 * mb
	maxContainerThreshold int64 = 1000 * mb
)

// ImageLocality scores nodes by the pod's images they hold.
type ImageLocality struct {
	handle framework.Handle
}

var _ framework.ScorePlugin = &ImageLocality{}

// New returns the plugin (it has no args).
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &ImageLocality{handle: h}, nil
}

// Name returns the plugin's name.
func (*ImageLocality) Name() string { return Name }

// Score sums size × spread of the pod's images present on the node and
// maps it onto [0, 100].
func (pl *ImageLocality) Score(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	nodeInfos, err := pl.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	sum := sumImageScores(nodeInfo, pod, len(nodeInfos))
	return calculatePriority(sum, len(pod.Spec.InitContainers)+len(pod.Spec.Containers)), nil
}

// ScoreExtensions: none, scores are already in range.
func (*ImageLocality) ScoreExtensions() framework.ScoreExtensions { return nil }

// calculatePriority clamps sumScores to [minThreshold, maxThreshold] and
// scales it linearly onto [0, MaxNodeScore].
func calculatePriority(sumScores int64, numContainers int) int64 {
	maxThreshold := maxContainerThreshold * int64(numContainers)
	if sumScores < minThreshold {
		sumScores = minThreshold
	} else if sumScores > maxThreshold {
		sumScores = maxThreshold
	}
	return framework.MaxNodeScore * (sumScores - minThreshold) / (maxThreshold - minThreshold)
}

// sumImageScores sums the scaled sizes of the pod's images the node has.
func sumImageScores(nodeInfo *framework.NodeInfo, pod *corev1.Pod, totalNumNodes int) int64 {
	states := nodeInfo.ImageStates
	if len(states) == 0 {
		return 0
	}
	var sum int64
	var buf [128]byte
	for _, cs := range [2][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if state := lookupImage(states, cs[i].Image, buf[:0]); state != nil {
				sum += scaledImageScore(state, totalNumNodes)
			}
		}
	}
	return sum
}

// lookupImage finds the state of the image under its normalized name
// without allocating: the ":latest" name is built in buf and looked up
// as m[string(bytes)], which Go does without a copy.
func lookupImage(states map[string]*framework.ImageStateSummary, name string, buf []byte) *framework.ImageStateSummary {
	if strings.LastIndex(name, ":") > strings.LastIndex(name, "/") {
		return states[name]
	}
	buf = append(append(buf, name...), ":latest"...)
	return states[string(buf)]
}

// scaledImageScore is the image's size times the fraction of nodes that
// hold it.
func scaledImageScore(s *framework.ImageStateSummary, totalNumNodes int) int64 {
	spread := float64(s.NumNodes) / float64(totalNumNodes)
	return int64(float64(s.Size) * spread)
}

// normalizedImageName appends ":latest" to a name without a tag or
// digest (the last ':' is not after the last '/'), as the node reports
// untagged images under that name.
func normalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		return name + ":latest"
	}
	return name
}
