package fieldmanager

import (
	"encoding"
	"encoding/json"
	"hash/maphash"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Creates are the hot path: every pod of a ReplicaSet is created from an
// empty live object, and structured-merge-diff's compare of the whole
// object costs more than the rest of the create. The field set a create
// records depends only on the object's shape: which fields are set, the
// keys of its maps and the items of its lists (their values decide list
// keys and set members). TrackCreate memoizes the managedFields entry by a
// key describing that shape, computed by one reflection walk; a miss runs
// the real field manager and remembers its answer, so a hit returns
// exactly what the field manager would.

// maxCreateShapes bounds the memo of one generation.
const maxCreateShapes = 2048

type createMemo struct {
	mu sync.Mutex
	m  map[shape]createEntry
}

type createEntry struct {
	raw  []byte // FieldsV1 of the manager's entry; nil: no entry
	none bool
}

// TrackCreate records manager's ownership of the fields of obj, created
// from the empty object live, as k's field manager's UpdateNoErrors does.
func (m *Managers) TrackCreate(k Kind, live, obj runtime.Object, manager string) (runtime.Object, error) {
	g := m.current()
	key := k.key()
	fm, err := m.forKey(g, k, key)
	if err != nil {
		return obj, err
	}
	acc, ok := obj.(metav1.Object)
	if !ok || acc.GetManagedFields() != nil || k.CustomResource || k.Hub != k.GVK.GroupVersion() {
		return fm.UpdateNoErrors(live, obj, manager), nil
	}
	sk, ok := shapeKey(obj, key)
	if !ok {
		return fm.UpdateNoErrors(live, obj, manager), nil
	}
	g.creates.mu.Lock()
	ce, hit := g.creates.m[sk]
	g.creates.mu.Unlock()
	if hit {
		if !ce.none {
			acc.SetManagedFields([]metav1.ManagedFieldsEntry{{
				Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: k.GVK.GroupVersion().String(),
				Time: &metav1.Time{Time: time.Now().UTC()}, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: ce.raw},
				Subresource: k.Subresource,
			}})
		}
		return obj, nil
	}
	out := fm.UpdateNoErrors(live, obj, manager)
	oacc, ok := out.(metav1.Object)
	if !ok {
		return out, nil
	}
	switch mf := oacc.GetManagedFields(); {
	case len(mf) == 0:
		ce = createEntry{none: true}
	case len(mf) == 1 && mf[0].Manager == manager && mf[0].Operation == metav1.ManagedFieldsOperationUpdate && mf[0].FieldsV1 != nil &&
		mf[0].Subresource == k.Subresource && mf[0].APIVersion == k.GVK.GroupVersion().String():
		ce = createEntry{raw: append([]byte(nil), mf[0].FieldsV1.Raw...)}
		mf[0].FieldsV1.Raw = ce.raw
	default:
		return out, nil
	}
	g.creates.mu.Lock()
	if g.creates.m == nil || len(g.creates.m) >= maxCreateShapes {
		g.creates.m = map[shape]createEntry{}
	}
	g.creates.m[sk] = ce
	g.creates.mu.Unlock()
	return out, nil
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	// scalarTypes marshal themselves to a JSON scalar: only whether they
	// are set matters.
	scalarTypes = map[reflect.Type]bool{
		reflect.TypeFor[metav1.Time]():        true,
		reflect.TypeFor[metav1.MicroTime]():   true,
		reflect.TypeFor[metav1.Duration]():    true,
		reflect.TypeFor[resource.Quantity]():  true,
		reflect.TypeFor[intstr.IntOrString](): true,
	}
)

// shape identifies a shape description by two independent 64-bit hashes
// of it (a collision of both is not a practical concern).
type shape [2]uint64

var (
	shapeSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
	shapeBufs  = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}
)

// shapeKey describes what of obj decides its field set: for every field
// whether it is nil or zero (which, with the type's json tags, decides
// whether structured-merge-diff sees it), map keys, list lengths, and every
// scalar inside list items verbatim (list keys and set members). ok is
// false for objects holding free-form JSON (RawExtension, JSON, maps of
// any), whose set depends on content the walk does not describe.
func shapeKey(obj runtime.Object, prefix string) (shape, bool) {
	bp := shapeBufs.Get().(*[]byte)
	w := shapeWalker{buf: append((*bp)[:0], prefix...)}
	w.buf = append(w.buf, 0)
	w.walk(reflect.ValueOf(obj), false)
	k := shape{maphash.Bytes(shapeSeeds[0], w.buf), maphash.Bytes(shapeSeeds[1], w.buf)}
	*bp = w.buf
	shapeBufs.Put(bp)
	return k, w.ok()
}

type shapeWalker struct {
	buf []byte
	bad bool
}

func (w *shapeWalker) ok() bool { return !w.bad }

func (w *shapeWalker) bit(b bool) {
	if b {
		w.buf = append(w.buf, '1')
	} else {
		w.buf = append(w.buf, '0')
	}
}

func (w *shapeWalker) str(s string) {
	w.buf = strconv.AppendInt(w.buf, int64(len(s)), 10)
	w.buf = append(w.buf, ':')
	w.buf = append(w.buf, s...)
}

func (w *shapeWalker) walk(v reflect.Value, inList bool) {
	if w.bad {
		return
	}
	t := v.Type()
	if scalarTypes[t] {
		w.bit(v.IsZero())
		if inList && !v.IsZero() {
			// a list item's scalar may be a key: its value counts
			data, err := json.Marshal(v.Interface())
			if err != nil {
				w.bad = true
				return
			}
			w.str(string(data))
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			w.buf = append(w.buf, 'n')
			return
		}
		w.buf = append(w.buf, 'p')
		w.walk(v.Elem(), inList)
	case reflect.Interface:
		if v.IsNil() {
			w.buf = append(w.buf, 'n')
			return
		}
		w.bad = true // free-form content
	case reflect.Struct:
		if marshalsItself(t) {
			w.bad = true // RawExtension, JSON, FieldsV1, ...: content-dependent
			return
		}
		w.buf = append(w.buf, '{')
		for _, i := range exportedFields(t) {
			w.walk(v.Field(i), inList)
		}
		w.buf = append(w.buf, '}')
	case reflect.Map:
		if v.IsNil() {
			w.buf = append(w.buf, 'n')
			return
		}
		if t.Key().Kind() != reflect.String {
			w.bad = true
			return
		}
		w.buf = append(w.buf, 'm')
		if v.Len() == 1 {
			it := v.MapRange()
			it.Next()
			w.str(it.Key().String())
			w.walk(it.Value(), inList)
		} else {
			keys := v.MapKeys()
			sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
			for _, k := range keys {
				w.str(k.String())
				w.walk(v.MapIndex(k), inList)
			}
		}
		w.buf = append(w.buf, '}')
	case reflect.Slice:
		if v.IsNil() {
			w.buf = append(w.buf, 'n')
			return
		}
		if t.Elem().Kind() == reflect.Uint8 { // []byte: a base64 scalar
			w.bit(v.Len() == 0)
			if inList {
				w.str(string(v.Bytes()))
			}
			return
		}
		w.buf = append(w.buf, '[')
		w.buf = strconv.AppendInt(w.buf, int64(v.Len()), 10)
		for i := 0; i < v.Len(); i++ {
			w.walk(v.Index(i), true)
		}
		w.buf = append(w.buf, ']')
	case reflect.Array:
		w.bad = true
	case reflect.String:
		w.bit(v.Len() == 0)
		if inList {
			w.str(v.String())
		}
	case reflect.Bool:
		w.bit(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.bit(v.Int() == 0)
		if inList {
			w.buf = strconv.AppendInt(append(w.buf, '='), v.Int(), 10)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.bit(v.Uint() == 0)
		if inList {
			w.buf = strconv.AppendUint(append(w.buf, '='), v.Uint(), 10)
		}
	case reflect.Float32, reflect.Float64:
		w.bit(v.Float() == 0)
		if inList {
			w.buf = strconv.AppendFloat(append(w.buf, '='), v.Float(), 'g', -1, 64)
		}
	default:
		w.bad = true
	}
}

var selfMarshaling sync.Map // reflect.Type → bool

func marshalsItself(t reflect.Type) bool {
	if v, ok := selfMarshaling.Load(t); ok {
		return v.(bool)
	}
	b := t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
	selfMarshaling.Store(t, b)
	return b
}

var fieldPlans sync.Map // reflect.Type → []int, the exported fields of a struct

func exportedFields(t reflect.Type) []int {
	if p, ok := fieldPlans.Load(t); ok {
		return p.([]int)
	}
	var idx []int
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).IsExported() {
			idx = append(idx, i)
		}
	}
	fieldPlans.Store(t, idx)
	return idx
}
