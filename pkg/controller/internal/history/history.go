package history

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/dump" //nolint:staticcheck // the allowed home of upstream's hash dump
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/controllerref"
)

// ControllerRevisionHashLabel labels StatefulSet revisions with their hash
// (upstream's history.ControllerRevisionHashLabel).
const ControllerRevisionHashLabel = "controller.kubernetes.io/hash"

// ControllerRevisionName is "<prefix>-<hash>", the prefix cut to 223
// characters.
func ControllerRevisionName(prefix, hash string) string {
	if len(prefix) > 223 {
		prefix = prefix[:223]
	}
	return prefix + "-" + hash
}

// HashControllerRevision hashes a revision's data and the collision
// count probe as upstream's StatefulSet controller does.
func HashControllerRevision(cr *appsv1.ControllerRevision, probe *int32) string {
	h := fnv.New32()
	if len(cr.Data.Raw) > 0 {
		h.Write(cr.Data.Raw)
	}
	if cr.Data.Object != nil {
		fmt.Fprintf(h, "%v", dump.ForHash(cr.Data.Object)) //nolint:staticcheck
	}
	if probe != nil {
		h.Write([]byte(strconv.FormatInt(int64(*probe), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// ComputeHash is upstream's pod-template-hash of a template and collision
// count (controller.ComputeHash).
func ComputeHash(t *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(*t)) //nolint:staticcheck
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// TemplatePatch is upstream's revision data for a workload object (a
// DaemonSet or StatefulSet): the strategic merge patch replacing its
// spec.template, keys sorted.
func TemplatePatch(obj any) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	spec, _ := raw["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	if template == nil {
		return nil, errors.New("object has no spec.template")
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// TemplateOf decodes the pod template a revision's patch carries.
func TemplateOf(cr *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	var p struct {
		Spec struct {
			Template *corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(cr.Data.Raw, &p); err != nil {
		return nil, err
	}
	if p.Spec.Template == nil {
		return nil, fmt.Errorf("revision %s carries no template", cr.Name)
	}
	return p.Spec.Template, nil
}

// NewControllerRevision is the revision of parent (of kind gvk) holding
// data, labelled with templateLabels and its hash, named
// "<parent>-<hash>".
func NewControllerRevision(parent metav1.Object, gvk schema.GroupVersionKind, templateLabels map[string]string, data []byte, revision int64, collisionCount *int32) *appsv1.ControllerRevision {
	l := make(map[string]string, len(templateLabels)+1)
	for k, v := range templateLabels {
		l[k] = v
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       parent.GetNamespace(),
			Labels:          l,
			OwnerReferences: []metav1.OwnerReference{*controllerref.NewControllerRef(parent, gvk)},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: revision,
	}
	hash := HashControllerRevision(cr, collisionCount)
	cr.Name = ControllerRevisionName(parent.GetName(), hash)
	cr.Labels[ControllerRevisionHashLabel] = hash
	return cr
}

// Sort orders revisions by revision number, then creation time, then name.
func Sort(revs []*appsv1.ControllerRevision) {
	sort.SliceStable(revs, func(i, j int) bool {
		a, b := revs[i], revs[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
}

// EqualRevision reports whether two revisions hold the same data.
func EqualRevision(a, b *appsv1.ControllerRevision) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.Data.Raw, b.Data.Raw)
}

// FindEqualRevisions are the revisions holding needle's data, in order.
func FindEqualRevisions(revs []*appsv1.ControllerRevision, needle *appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	var out []*appsv1.ControllerRevision
	for _, r := range revs {
		if EqualRevision(r, needle) {
			out = append(out, r)
		}
	}
	return out
}

// NextRevision is one more than the last of sorted revisions (1 if none).
func NextRevision(sorted []*appsv1.ControllerRevision) int64 {
	if len(sorted) == 0 {
		return 1
	}
	return sorted[len(sorted)-1].Revision + 1
}

// MaxRevision is the highest revision number among revs (0 if none).
func MaxRevision(revs []*appsv1.ControllerRevision) int64 {
	var m int64
	for _, r := range revs {
		m = max(m, r.Revision)
	}
	return m
}

// History reads revisions from an informer and writes them through the
// API.
type History struct {
	Client *client.Typed[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList]
	Lister cache.Lister[*appsv1.ControllerRevision]
}

// New is the History over c and an informer's lister.
func New(c *client.Client, lister cache.Lister[*appsv1.ControllerRevision]) *History {
	return &History{Client: client.For[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList](c), Lister: lister}
}

// List returns the revisions in parent's namespace that selector matches
// and that parent controls or nobody controls.
func (h *History) List(parent metav1.Object, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	all, err := h.Lister.Namespace(parent.GetNamespace()).List(selector)
	if err != nil {
		return nil, err
	}
	var out []*appsv1.ControllerRevision
	for _, r := range all {
		if ref := metav1.GetControllerOfNoCopy(r); ref == nil || ref.UID == parent.GetUID() {
			out = append(out, r)
		}
	}
	return out, nil
}

// Create creates rev under the name its hash and *collisionCount give; a
// name taken by a revision with equal data returns that revision, one
// with other data bumps *collisionCount and tries again.
func (h *History) Create(ctx context.Context, parent metav1.Object, rev *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if collisionCount == nil {
		return nil, errors.New("collisionCount should not be nil")
	}
	clone := rev.DeepCopy()
	ns := parent.GetNamespace()
	for {
		hash := HashControllerRevision(rev, collisionCount)
		clone.Name = ControllerRevisionName(parent.GetName(), hash)
		clone.Namespace = ns
		if clone.Labels != nil {
			if _, ok := clone.Labels[ControllerRevisionHashLabel]; ok {
				clone.Labels[ControllerRevisionHashLabel] = hash
			}
		}
		created, err := h.Client.Namespace(ns).Create(ctx, clone, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			exists, gerr := h.Client.Namespace(ns).Get(ctx, clone.Name, metav1.GetOptions{})
			if gerr != nil {
				return nil, gerr
			}
			if bytes.Equal(exists.Data.Raw, clone.Data.Raw) {
				return exists, nil
			}
			*collisionCount++
			continue
		}
		return created, err
	}
}

// UpdateRevision sets rev's revision number (retrying on conflicts with a
// fresh copy).
func (h *History) UpdateRevision(ctx context.Context, rev *appsv1.ControllerRevision, n int64) (*appsv1.ControllerRevision, error) {
	clone := rev.DeepCopy()
	var err error
	for range 5 {
		if clone.Revision == n {
			return clone, nil
		}
		clone.Revision = n
		var out *appsv1.ControllerRevision
		if out, err = h.Client.Namespace(clone.Namespace).Update(ctx, clone, metav1.UpdateOptions{}); err == nil {
			return out, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, err
		}
		if clone, err = h.Client.Namespace(clone.Namespace).Get(ctx, clone.Name, metav1.GetOptions{}); err != nil {
			return nil, err
		}
	}
	return nil, err
}

// Delete deletes rev (gone already is fine).
func (h *History) Delete(ctx context.Context, rev *appsv1.ControllerRevision) error {
	err := h.Client.Namespace(rev.Namespace).Delete(ctx, rev.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Claim adopts the orphan revisions selector matches and releases owned
// ones it no longer matches (upstream's ControllerRevisionControllerRefManager),
// returning those parent owns afterwards. canAdopt re-checks the parent.
func (h *History) Claim(ctx context.Context, parent metav1.Object, gvk schema.GroupVersionKind, selector labels.Selector, canAdopt func(context.Context) error) ([]*appsv1.ControllerRevision, error) {
	all, err := h.Lister.Namespace(parent.GetNamespace()).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	m := &controllerref.Manager{Controller: parent, Kind: gvk, Selector: selector, CanAdopt: canAdopt,
		Patch: controllerref.PatcherFor(h.Client)}
	return controllerref.Claim(ctx, m, all)
}

// Adopt makes parent the controller of the orphan revisions among revs,
// after canAdopt (checked once).
func (h *History) Adopt(ctx context.Context, parent metav1.Object, gvk schema.GroupVersionKind, revs []*appsv1.ControllerRevision, canAdopt func(context.Context) error) error {
	m := &controllerref.Manager{Controller: parent, Kind: gvk, CanAdopt: canAdopt, Patch: controllerref.PatcherFor(h.Client)}
	for _, r := range revs {
		if metav1.GetControllerOfNoCopy(r) != nil {
			continue
		}
		if err := m.Adopt(ctx, r); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
