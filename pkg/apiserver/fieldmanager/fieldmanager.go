package fieldmanager

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// MaxManagerLength is the longest field manager name (upstream's
// FieldManagerMaxLength).
const MaxManagerLength = 128

// Source is one generation of OpenAPI definitions (openapi.Definitions).
// A Source is compared by identity: a new value means new definitions.
type Source interface {
	Schemas() (map[string]*spec.Schema, error)
}

// Config configures Managers.
type Config struct {
	// Source returns the current definitions.
	Source func() Source
	// Convertor converts objects between the served versions and the hub
	// (storage) version of a kind, typed or unstructured.
	Convertor runtime.ObjectConvertor
	// Creater makes empty objects of a kind.
	Creater runtime.ObjectCreater
}

// Kind says which FieldManager is wanted.
type Kind struct {
	// GVK is the served kind (the version managedFields entries name).
	GVK schema.GroupVersionKind
	// Hub is the version objects are stored in.
	Hub schema.GroupVersion
	// Subresource is "" for the main resource, or "status", "scale", ...
	Subresource string
	// CustomResource selects upstream's custom resource field manager:
	// fields the schema does not know are kept, a kind without schema
	// is merged with the deduced type.
	CustomResource bool
	// ResetFields are the fields a write through this endpoint may not set
	// (the status of a main resource, the spec of a status subresource).
	ResetFields []fieldpath.Path
}

func (k Kind) key() string {
	var b strings.Builder
	b.Grow(64)
	for _, s := range []string{k.GVK.Group, k.GVK.Version, k.GVK.Kind, k.Hub.Group, k.Hub.Version, k.Subresource} {
		b.WriteString(s)
		b.WriteByte('|')
	}
	if k.CustomResource {
		b.WriteString("cr")
	}
	for _, p := range k.ResetFields {
		b.WriteString("|" + p.String())
	}
	return b.String()
}

// Managers hands out field managers; it is safe for concurrent use.
type Managers struct {
	cfg Config
	mu  sync.Mutex
	gen atomic.Pointer[generation]
	// lastGood is the last type converter built without error: a new
	// generation whose definitions do not convert (a custom resource's
	// schema structured-merge-diff rejects) falls back to it, so one bad
	// schema never takes field management from every other kind.
	lastGood managedfields.TypeConverter
}

type generation struct {
	src  Source
	once sync.Once
	tc   managedfields.TypeConverter
	err  error
	fms  sync.Map // Kind.key() → *managedfields.FieldManager
	// creates memoizes creates' entries by shape (create.go).
	creates createMemo
}

// New returns Managers for cfg.
func New(cfg Config) *Managers { return &Managers{cfg: cfg} }

func (m *Managers) current() *generation {
	src := m.cfg.Source()
	if g := m.gen.Load(); g != nil && g.src == src {
		return g
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.gen.Load()
	if g == nil || g.src != src {
		g = &generation{src: src}
		m.gen.Store(g)
	}
	return g
}

func (m *Managers) typeConverter(g *generation) (managedfields.TypeConverter, error) {
	g.once.Do(func() {
		schemas, err := g.src.Schemas()
		if err == nil {
			g.tc, err = newTypeConverter(schemas)
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if err == nil {
			m.lastGood = g.tc
			return
		}
		if m.lastGood != nil {
			g.tc = m.lastGood
			return
		}
		g.err = err
	})
	return g.tc, g.err
}

// For returns the field manager of k.
func (m *Managers) For(k Kind) (*managedfields.FieldManager, error) {
	return m.forKey(m.current(), k, k.key())
}

func (m *Managers) forKey(g *generation, k Kind, key string) (*managedfields.FieldManager, error) {
	if fm, ok := g.fms.Load(key); ok {
		return fm.(*managedfields.FieldManager), nil
	}
	tc, err := m.typeConverter(g)
	if err != nil && !k.CustomResource {
		return nil, err
	}
	if k.CustomResource && (tc == nil || !knows(tc, k.GVK)) {
		tc = managedfields.NewDeducedTypeConverter()
	}
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	if len(k.ResetFields) > 0 {
		reset = map[fieldpath.APIVersion]fieldpath.Filter{
			fieldpath.APIVersion(k.GVK.GroupVersion().String()): fieldpath.NewExcludeSetFilter(fieldpath.NewSet(k.ResetFields...)),
		}
	}
	newFM := managedfields.NewDefaultFieldManager
	if k.CustomResource {
		newFM = managedfields.NewDefaultCRDFieldManager
	}
	fm, err := newFM(tc, m.cfg.Convertor, noDefaulting{}, m.cfg.Creater, k.GVK, k.Hub, k.Subresource, reset)
	if err != nil {
		return nil, err
	}
	actual, _ := g.fms.LoadOrStore(key, fm)
	return actual.(*managedfields.FieldManager), nil
}

// knows reports whether tc has a type for gvk.
func knows(tc managedfields.TypeConverter, gvk schema.GroupVersionKind) bool {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	_, err := tc.ObjectToTyped(u)
	return err == nil || !runtime.IsNotRegisteredError(err) && !strings.Contains(err.Error(), "no corresponding type")
}

// noDefaulting: the API server defaults an applied object after the merge,
// with the rest of the write path.
type noDefaulting struct{}

func (noDefaulting) Default(runtime.Object) {}

// ManagerName is the manager of a write: the fieldManager parameter, or the
// User-Agent's product (before the first "/"), as upstream.
func ManagerName(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	prefix, _, _ := strings.Cut(userAgent, "/")
	var buf bytes.Buffer
	for _, r := range prefix {
		if !unicode.IsPrint(r) {
			continue
		}
		if buf.Len()+utf8.RuneLen(r) > MaxManagerLength {
			break
		}
		buf.WriteRune(r)
	}
	return buf.String()
}

// DecodeApply decodes the body of an application/apply-patch+yaml request
// (YAML or JSON) into the applied configuration.
func DecodeApply(body []byte) (*unstructured.Unstructured, error) {
	obj := map[string]any{}
	if err := yaml.Unmarshal(body, &obj); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// StrictApplyErrors reports duplicate fields of an apply body, for
// fieldValidation Strict and Warn (unknown fields fail the typed conversion
// in any case, as upstream).
func StrictApplyErrors(body []byte) error {
	obj := map[string]any{}
	return yaml.UnmarshalStrict(body, &obj)
}

// TypeConverter returns the structured-merge-diff types of the current
// definitions for gvk (admission policies' ApplyConfiguration mutations);
// a custom resource kind without a known type gets the deduced converter,
// as its field manager does.
func (m *Managers) TypeConverter(gvk schema.GroupVersionKind, customResource bool) (managedfields.TypeConverter, error) {
	tc, err := m.typeConverter(m.current())
	if err != nil && !customResource {
		return nil, err
	}
	if customResource && (tc == nil || !knows(tc, gvk)) {
		return managedfields.NewDeducedTypeConverter(), nil
	}
	return tc, nil
}
