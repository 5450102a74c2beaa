package customresource

import (
	"context"
	"fmt"
	"math"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/printers"
	"github.com/skiff-sh/skiff/pkg/printers/jsonpath"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/customresource/cel"
	"github.com/skiff-sh/skiff/pkg/registry/customresource/structural"
)

// Resource is everything needed to serve one CRD's objects.
type Resource struct {
	CRD *apiextensionsv1.CustomResourceDefinition
	// Def describes the resource in its storage version (names, scope,
	// the storage strategy used by the garbage collector and namespace
	// deletion). Its Extra is empty: the served versions are Versions.
	Def *registry.Definition
	// Versions are the served versions, the storage version among them.
	Versions []*Version
	// Fields extracts every version's selectable fields (plus
	// metadata.name/namespace) for the watch cache.
	Fields func(obj runtime.Object) map[string]string
}

// Version is one served version of a custom resource.
type Version struct {
	Name    string
	Storage bool
	// VersionDef converts between this version and storage (None
	// conversion: apiVersion only) and prunes/defaults request bodies.
	VersionDef registry.VersionDef
	// Strategy validates objects of this version (on create and update).
	Strategy *registry.Strategy
	// Status is the status subresource's strategy; nil without one.
	Status *registry.Strategy
	// Scale serves the scale subresource; nil without one.
	Scale *registry.ScaleFuncs
	// Table prints this version's additionalPrinterColumns.
	Table printers.Handler
	// FieldLabels are the field selector keys this version supports.
	FieldLabels map[string]bool
	// Schema is the version's openAPIV3Schema (nil without one).
	Schema *apiextensionsv1.JSONSchemaProps
	// Validator checks an object of this version against its schema
	// (structural validation, list types, CEL rules); nil: no checks
	// beyond metadata.
	Validator Validator
}

// Validator checks objects of one version against its schema. old is nil
// on create. status restricts the check to .status (status subresource).
type Validator interface {
	// Validate runs the schema's value validations.
	Validate(obj, old map[string]any, statusOnly bool) field.ErrorList
	// ValidateStructure checks embedded resources, list types and (unless
	// prior has blocking errors) the CEL rules.
	ValidateStructure(obj, old map[string]any, prior field.ErrorList) field.ErrorList
	// Prune drops undeclared fields and returns their paths.
	Prune(obj map[string]any) []string
	// Default prunes unknown fields and applies defaults to a request body.
	Default(obj map[string]any)
	// Structural is the compiled schema (kube-openapi form in Spec).
	Structural() *structural.Schema
}

// schemaValidator is the Validator of a structural schema and its CEL rules.
type schemaValidator struct {
	s     *structural.Schema
	rules *cel.Validator
}

func (v schemaValidator) Validate(obj, old map[string]any, statusOnly bool) field.ErrorList {
	return v.s.Ratchet(v.s.ValidateValues(obj, statusOnly), obj, old)
}

func (v schemaValidator) ValidateStructure(obj, old map[string]any, prior field.ErrorList) field.ErrorList {
	errs := v.s.Ratchet(v.s.ValidateStructure(obj), obj, old)
	if v.rules == nil {
		return errs
	}
	// As upstream, rules are not run on an object with blocking errors.
	for _, e := range append(prior, errs...) {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
	}
	return append(errs, v.rules.Validate(context.Background(), obj, old)...)
}
func (v schemaValidator) Prune(obj map[string]any) []string { return v.s.Prune(obj) }
func (v schemaValidator) Default(obj map[string]any) {
	v.s.Prune(obj)
	v.s.PruneNulls(obj)
	v.s.Default(obj)
}
func (v schemaValidator) Structural() *structural.Schema { return v.s }

// NewValidator builds a version's Validator.
func NewValidator(crd *apiextensionsv1.CustomResourceDefinition, version string, schema *apiextensionsv1.JSONSchemaProps) (Validator, error) {
	s, err := structural.New(schema)
	if err != nil {
		return nil, err
	}
	// Compile errors were reported when the CRD was written.
	rules, _ := cel.Compile(s.Root, nil)
	return schemaValidator{s: s, rules: rules}, nil
}

// CleanupFinalizer is the finalizer a deleted CRD carries until its
// objects are gone.
const CleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// StorageVersion returns the CRD's storage version name.
func StorageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

func newUnstructured() runtime.Object     { return &unstructured.Unstructured{} }
func newUnstructuredList() runtime.Object { return &unstructured.UnstructuredList{} }

// New builds the Resource of crd (which is valid: it passed the CRD
// strategy's validation).
func New(crd *apiextensionsv1.CustomResourceDefinition) (*Resource, error) {
	crd = crd.DeepCopy()
	names := crd.Status.AcceptedNames
	if names.Plural == "" {
		names = crd.Spec.Names
	}
	storageVersion := StorageVersion(crd)
	if storageVersion == "" {
		return nil, fmt.Errorf("customresourcedefinition %s has no storage version", crd.Name)
	}
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	res := &Resource{CRD: crd}

	// Selectable fields of all versions (paths agree across versions with
	// None conversion; each version only accepts its own keys).
	allPaths := map[string]*jsonpath.Path{}
	for _, v := range crd.Spec.Versions {
		for _, sf := range v.SelectableFields {
			if p, err := jsonpath.Parse(sf.JSONPath); err == nil {
				allPaths[strings.TrimPrefix(sf.JSONPath, ".")] = p
			}
		}
	}
	res.Fields = func(obj runtime.Object) map[string]string {
		out := map[string]string{}
		u, ok := obj.(*unstructured.Unstructured)
		for k, p := range allPaths {
			out[k] = ""
			if !ok || u.Object == nil {
				continue
			}
			if vals := p.Find(u.Object); len(vals) > 0 && vals[0] != nil {
				out[k] = jsonpath.Format(vals[0])
			}
		}
		return out
	}

	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		ver, err := newVersion(crd, names, v, storageVersion, namespaced, res.Fields)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", crd.Name, v.Name, err)
		}
		res.Versions = append(res.Versions, ver)
	}

	var storageStrategy *registry.Strategy
	for _, ver := range res.Versions {
		if ver.Storage {
			storageStrategy = ver.Strategy
		}
	}
	if storageStrategy == nil {
		// The storage version is not served: objects are still stored in it.
		ver, err := newVersion(crd, names, crd.Spec.Versions[0], storageVersion, namespaced, res.Fields)
		if err != nil {
			return nil, err
		}
		storageStrategy = ver.Strategy
	}
	res.Def = &registry.Definition{
		Group: crd.Spec.Group, Version: storageVersion, Resource: names.Plural, Kind: names.Kind,
		ListKind: names.ListKind, Singular: names.Singular, ShortNames: names.ShortNames,
		Categories: names.Categories, Namespaced: namespaced,
		New: newUnstructured, NewList: newUnstructuredList, Strategy: storageStrategy,
	}
	return res, nil
}

func newVersion(crd *apiextensionsv1.CustomResourceDefinition, names apiextensionsv1.CustomResourceDefinitionNames,
	v apiextensionsv1.CustomResourceDefinitionVersion, storageVersion string, namespaced bool, fields func(runtime.Object) map[string]string) (*Version, error) {
	gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
	storageAPIVersion := schema.GroupVersion{Group: crd.Spec.Group, Version: storageVersion}.String()
	ver := &Version{Name: v.Name, Storage: v.Name == storageVersion}
	if v.Schema != nil {
		ver.Schema = v.Schema.OpenAPIV3Schema
	}
	if ver.Schema != nil {
		val, err := NewValidator(crd, v.Name, ver.Schema)
		if err != nil {
			return nil, err
		}
		ver.Validator = val
	}
	ver.VersionDef = registry.VersionDef{
		Group: crd.Spec.Group, Version: v.Name, New: newUnstructured, NewList: newUnstructuredList,
		Default: func(obj runtime.Object) {
			if u, ok := obj.(*unstructured.Unstructured); ok && ver.Validator != nil {
				ver.Validator.Default(u.Object)
			}
		},
	}
	if !ver.Storage {
		ver.VersionDef.ToStorage = func(obj runtime.Object) (runtime.Object, error) {
			u := obj.(*unstructured.Unstructured)
			u.SetAPIVersion(storageAPIVersion)
			return u, nil
		}
	}
	// Reads are defaulted as upstream defaults objects read from storage
	// (a default added to the schema later shows on old objects); in the
	// storage version without defaults a read is the stored object as is.
	readDefaults := ver.Validator != nil && ver.Validator.Structural().HasDefaults()
	if !ver.Storage || readDefaults {
		ver.VersionDef.FromStorage = func(obj runtime.Object) (runtime.Object, error) {
			u := obj.(*unstructured.Unstructured).DeepCopy()
			u.SetAPIVersion(gv.String())
			if readDefaults {
				ver.Validator.Structural().Default(u.Object)
			}
			return u, nil
		}
	}

	var subs apiextensionsv1.CustomResourceSubresources
	if v.Subresources != nil {
		subs = *v.Subresources
	}
	hasStatus := subs.Status != nil
	kind := gv.WithKind(names.Kind)
	validate := func(obj, old runtime.Object, statusOnly bool) field.ErrorList {
		u := obj.(*unstructured.Unstructured)
		var errs field.ErrorList
		// The object arrives in storage form: check it as this version.
		if k := u.GetKind(); k != kind.Kind {
			errs = append(errs, field.Invalid(field.NewPath("kind"), k, "must be "+kind.Kind))
		}
		if len(errs) > 0 {
			return errs
		}
		if old == nil {
			errs = append(errs, apimachineryvalidation.ValidateObjectMetaAccessor(u, namespaced, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
		} else {
			errs = append(errs, apimachineryvalidation.ValidateObjectMetaAccessorUpdate(u, old.(*unstructured.Unstructured), field.NewPath("metadata"))...)
		}
		var oldContent map[string]any
		if old != nil {
			oldContent = old.(*unstructured.Unstructured).Object
		}
		if ver.Validator != nil {
			errs = append(errs, ver.Validator.Validate(u.Object, oldContent, statusOnly)...)
		}
		if subs.Scale != nil {
			if !statusOnly {
				errs = append(errs, validateReplicas(u.Object, subs.Scale.SpecReplicasPath)...)
			}
			errs = append(errs, validateReplicas(u.Object, subs.Scale.StatusReplicasPath)...)
		}
		if ver.Validator != nil {
			errs = append(errs, ver.Validator.ValidateStructure(u.Object, oldContent, errs)...)
		}
		return errs
	}
	ver.Strategy = &registry.Strategy{
		Fields: fields,
		PrepareForCreate: func(obj runtime.Object) {
			u := obj.(*unstructured.Unstructured)
			if hasStatus {
				delete(u.Object, "status")
			}
			u.SetGeneration(1)
		},
		PrepareForUpdate: func(obj, old runtime.Object) {
			u, o := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
			if hasStatus {
				if st, ok := o.Object["status"]; ok {
					u.Object["status"] = runtime.DeepCopyJSONValue(st)
				} else {
					delete(u.Object, "status")
				}
			}
			if !equality.Semantic.DeepEqual(withoutKeys(u.Object, "metadata"), withoutKeys(o.Object, "metadata")) {
				u.SetGeneration(o.GetGeneration() + 1)
			}
		},
		Validate:       func(obj runtime.Object) field.ErrorList { return validate(obj, nil, false) },
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList { return validate(obj, old, false) },
	}
	if hasStatus {
		ver.Status = &registry.Strategy{
			Fields: fields,
			PrepareForUpdate: func(obj, old runtime.Object) {
				u, o := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
				status, hasNewStatus := u.Object["status"]
				managed := u.GetManagedFields()
				u.Object = o.DeepCopy().Object
				u.SetManagedFields(managed)
				if hasNewStatus {
					u.Object["status"] = status
				} else {
					delete(u.Object, "status")
				}
			},
			ValidateUpdate: func(obj, old runtime.Object) field.ErrorList { return validate(obj, old, true) },
		}
	}
	if sc := subs.Scale; sc != nil {
		ver.Scale = scaleFuncs(sc)
	}
	var cols []printers.Column
	for _, c := range v.AdditionalPrinterColumns {
		cols = append(cols, printers.Column{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority, JSONPath: c.JSONPath})
	}
	h, err := printers.CustomResource(cols)
	if err != nil {
		return nil, err
	}
	ver.Table = h
	// As upstream's CR field label conversion: metadata.name,
	// metadata.namespace for namespaced resources, the selectable fields.
	ver.FieldLabels = map[string]bool{"metadata.name": true}
	if namespaced {
		ver.FieldLabels["metadata.namespace"] = true
	}
	for _, sf := range v.SelectableFields {
		ver.FieldLabels[strings.TrimPrefix(sf.JSONPath, ".")] = true
	}
	return ver, nil
}

// withoutKeys returns a shallow copy of m without keys.
func withoutKeys(m map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func splitPath(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }

// validateReplicas checks a scale replicas path as upstream does.
func validateReplicas(obj map[string]any, path string) field.ErrorList {
	if path == "" {
		return nil
	}
	n, _, err := unstructured.NestedInt64(obj, splitPath(path)...)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, err.Error())}
	case n < 0:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, "should be a non-negative integer")}
	case n > math.MaxInt32:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}

// scaleFuncs reads and writes a custom resource's replicas at the scale
// subresource's paths.
func scaleFuncs(sc *apiextensionsv1.CustomResourceSubresourceScale) *registry.ScaleFuncs {
	return &registry.ScaleFuncs{
		Get: func(obj runtime.Object) (*autoscalingv1.Scale, error) {
			u := obj.(*unstructured.Unstructured)
			spec, _, err := unstructured.NestedInt64(u.Object, splitPath(sc.SpecReplicasPath)...)
			if err != nil {
				return nil, err
			}
			status, _, err := unstructured.NestedInt64(u.Object, splitPath(sc.StatusReplicasPath)...)
			if err != nil {
				return nil, err
			}
			s := &autoscalingv1.Scale{
				ObjectMeta: metav1.ObjectMeta{
					Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
					ResourceVersion: u.GetResourceVersion(), CreationTimestamp: u.GetCreationTimestamp(),
				},
				Spec:   autoscalingv1.ScaleSpec{Replicas: int32(spec)},
				Status: autoscalingv1.ScaleStatus{Replicas: int32(status)},
			}
			if sc.LabelSelectorPath != nil {
				sel, _, err := unstructured.NestedString(u.Object, splitPath(*sc.LabelSelectorPath)...)
				if err != nil {
					return nil, err
				}
				if sel != "" {
					if _, err := labels.Parse(sel); err == nil {
						s.Status.Selector = sel
					}
				}
			}
			return s, nil
		},
		SetReplicas: func(obj runtime.Object, replicas int32) {
			u := obj.(*unstructured.Unstructured)
			_ = unstructured.SetNestedField(u.Object, int64(replicas), splitPath(sc.SpecReplicasPath)...)
		},
	}
}
