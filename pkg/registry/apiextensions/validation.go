package apiextensions

import (
	"fmt"
	"github.com/skiff-sh/skiff/pkg/registry/webhook"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry/customresource/cel"
	"github.com/skiff-sh/skiff/pkg/registry/customresource/structural"
)

// Upstream validates CRDs in its internal form, which differs from v1 in
// ways that show in error paths, and we keep those paths so messages match:
//
//   - When every version has the same schema (always the case with a single
//     version), the schema is validated once, under spec.validation; e.g.
//     "spec.validation.openAPIV3Schema.type: Required value: must not be
//     empty at the root". Likewise spec.subresources,
//     spec.additionalPrinterColumns and spec.selectableFields. Otherwise the
//     paths are spec.versions[i].schema, and so on.
//   - The conversion webhook's fields are spec.conversion.webhookClientConfig
//     and spec.conversion.conversionReviewVersions.
//
// x-kubernetes-validations rules are compiled and their cost estimated with
// pkg/registry/customresource/cel (upstream's messages and limits).
//
// Knowingly left out (upstream needs its schema libraries for them):
// checking default
// values against their schema and for pruning, the structural rules inside
// allOf/anyOf/oneOf/not, the field restrictions at the schema root when the
// status subresource is on, and parsing conversion webhook CA bundles.

const maxSelectableFields = 8

// ValidateCustomResourceDefinition validates a new CRD (after defaulting).
func ValidateCustomResourceDefinition(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	// The name is how the API server finds the resource: <plural>.<group>.
	nameFn := func(name string, prefix bool) []string {
		msgs := apimachineryvalidation.NameIsDNSSubdomain(name, prefix)
		if name != crd.Spec.Names.Plural+"."+crd.Spec.Group {
			msgs = append(msgs, `must be spec.names.plural+"."+spec.group`)
		}
		return msgs
	}
	allErrs := apimachineryvalidation.ValidateObjectMeta(&crd.ObjectMeta, false, nameFn, field.NewPath("metadata"))
	allErrs = append(allErrs, validateSpec(&crd.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateNames(&crd.Status.AcceptedNames, field.NewPath("status", "acceptedNames"))...)
	allErrs = append(allErrs, validateStoredVersions(crd.Status.StoredVersions, crd.Spec.Versions, field.NewPath("status", "storedVersions"))...)
	allErrs = append(allErrs, validateAPIApproval(crd, nil)...)
	allErrs = append(allErrs, validatePreserveUnknownFields(crd, nil)...)
	return allErrs
}

// ValidateCustomResourceDefinitionUpdate validates an update of the main
// resource. group and names.plural make up the name and never change. scope
// and names.kind are fixed once the CRD is Established, since from then on
// custom resources may be stored under them. A version may only leave
// spec.versions once it is no longer in status.storedVersions (after a
// storage migration).
func ValidateCustomResourceDefinitionUpdate(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&crd.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	allErrs = append(allErrs, validateSpec(&crd.Spec, spec)...)
	if isEstablished(old) {
		allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(crd.Spec.Scope, old.Spec.Scope, spec.Child("scope"))...)
		allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(crd.Spec.Names.Kind, old.Spec.Names.Kind, spec.Child("names", "kind"))...)
	}
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(crd.Spec.Group, old.Spec.Group, spec.Child("group"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(crd.Spec.Names.Plural, old.Spec.Names.Plural, spec.Child("names", "plural"))...)
	allErrs = append(allErrs, validateNames(&crd.Status.AcceptedNames, field.NewPath("status", "acceptedNames"))...)
	allErrs = append(allErrs, validateStoredVersions(crd.Status.StoredVersions, crd.Spec.Versions, field.NewPath("status", "storedVersions"))...)
	allErrs = append(allErrs, validateAPIApproval(crd, old)...)
	allErrs = append(allErrs, validatePreserveUnknownFields(crd, old)...)
	return allErrs
}

// ValidateCustomResourceDefinitionStatusUpdate validates a write to the
// status subresource (by the CRD controllers): as upstream, only metadata and
// the accepted names are checked.
func ValidateCustomResourceDefinitionStatusUpdate(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&crd.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateNames(&crd.Status.AcceptedNames, field.NewPath("status", "acceptedNames"))...)
}

func isEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

func validateSpec(spec *apiextensionsv1.CustomResourceDefinitionSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList

	groupPath := fldPath.Child("group")
	if spec.Group == "" {
		allErrs = append(allErrs, field.Required(groupPath, ""))
	} else if msgs := content.IsDNS1123Subdomain(spec.Group); len(msgs) > 0 {
		allErrs = append(allErrs, field.Invalid(groupPath, spec.Group, strings.Join(msgs, ",")))
	} else if !strings.Contains(spec.Group, ".") {
		// Dot-less groups are reserved for Kubernetes' own APIs ("apps").
		allErrs = append(allErrs, field.Invalid(groupPath, spec.Group, "should be a domain with at least one dot"))
	}

	switch spec.Scope {
	case apiextensionsv1.ClusterScoped, apiextensionsv1.NamespaceScoped:
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("scope"), ""))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("scope"), spec.Scope, []string{"Cluster", "Namespaced"}))
	}

	allErrs = append(allErrs, validateVersions(spec, fldPath)...)
	if spec.PreserveUnknownFields && specHasDefaults(spec) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("preserveUnknownFields"), true, "must be false in order to use defaults in the schema"))
	}

	namesPath := fldPath.Child("names")
	for _, n := range []struct{ value, name string }{
		{spec.Names.Plural, "plural"}, {spec.Names.Singular, "singular"},
		{spec.Names.Kind, "kind"}, {spec.Names.ListKind, "listKind"},
	} {
		if n.value == "" {
			allErrs = append(allErrs, field.Required(namesPath.Child(n.name), ""))
		}
	}
	allErrs = append(allErrs, validateNames(&spec.Names, namesPath)...)

	allErrs = append(allErrs, validateConversion(spec, fldPath.Child("conversion"))...)
	return allErrs
}

// validateVersions checks the version list and each version's schema,
// subresources, printer columns and selectable fields.
func validateVersions(spec *apiextensionsv1.CustomResourceDefinitionSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	versions := spec.Versions
	versionsPath := fldPath.Child("versions")

	storageCount := 0
	seen := map[string]bool{}
	unique := true
	for i, v := range versions {
		if v.Storage {
			storageCount++
		}
		if seen[v.Name] {
			unique = false
		}
		seen[v.Name] = true
		if msgs := utilvalidation.IsDNS1035Label(v.Name); len(msgs) > 0 {
			allErrs = append(allErrs, field.Invalid(versionsPath.Index(i).Child("name"), v.Name, strings.Join(msgs, ",")))
		}
		for _, msg := range validateDeprecationWarning(v.Deprecated, v.DeprecationWarning) {
			allErrs = append(allErrs, field.Invalid(versionsPath.Index(i).Child("deprecationWarning"), v.DeprecationWarning, msg))
		}
	}

	// Schemas. Pruning of unknown fields needs a structural schema, so every
	// version must have one (unless the legacy preserveUnknownFields is on).
	if allSame(versions, func(v *apiextensionsv1.CustomResourceDefinitionVersion) any { return v.Schema }) {
		if s := versions[0].Schema; s != nil && s.OpenAPIV3Schema != nil {
			allErrs = append(allErrs, validateRootSchema(s.OpenAPIV3Schema, spec, fldPath.Child("validation", "openAPIV3Schema"))...)
		} else {
			for i := range versions {
				allErrs = append(allErrs, field.Required(versionsPath.Index(i).Child("schema", "openAPIV3Schema"), ""))
			}
		}
	} else {
		for i, v := range versions {
			schemaPath := versionsPath.Index(i).Child("schema", "openAPIV3Schema")
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				allErrs = append(allErrs, field.Required(schemaPath, ""))
				continue
			}
			allErrs = append(allErrs, validateRootSchema(v.Schema.OpenAPIV3Schema, spec, schemaPath)...)
		}
	}

	if allSame(versions, func(v *apiextensionsv1.CustomResourceDefinitionVersion) any { return v.Subresources }) {
		allErrs = append(allErrs, validateSubresources(versions[0].Subresources, fldPath.Child("subresources"))...)
	} else {
		for i, v := range versions {
			allErrs = append(allErrs, validateSubresources(v.Subresources, versionsPath.Index(i).Child("subresources"))...)
		}
	}

	if allSame(versions, func(v *apiextensionsv1.CustomResourceDefinitionVersion) any { return v.AdditionalPrinterColumns }) {
		for j := range versions[0].AdditionalPrinterColumns {
			allErrs = append(allErrs, validateColumn(&versions[0].AdditionalPrinterColumns[j], fldPath.Child("additionalPrinterColumns").Index(j))...)
		}
	} else {
		for i, v := range versions {
			for j := range v.AdditionalPrinterColumns {
				allErrs = append(allErrs, validateColumn(&v.AdditionalPrinterColumns[j], versionsPath.Index(i).Child("additionalPrinterColumns").Index(j))...)
			}
		}
	}

	sharedSelectable := allSame(versions, func(v *apiextensionsv1.CustomResourceDefinitionVersion) any { return v.SelectableFields })
	for i, v := range versions {
		if len(v.SelectableFields) == 0 || (sharedSelectable && i > 0) {
			continue
		}
		path := versionsPath.Index(i).Child("selectableFields")
		if sharedSelectable {
			path = fldPath.Child("selectableFields")
		}
		allErrs = append(allErrs, validateSelectableFields(v.SelectableFields, v.Schema, path)...)
	}

	if !unique {
		allErrs = append(allErrs, field.Invalid(versionsPath, versions, "must contain unique version names"))
	}
	if storageCount != 1 {
		allErrs = append(allErrs, field.Invalid(versionsPath, versions, "must have exactly one version marked as storage version"))
	}
	return allErrs
}

// allSame reports whether get returns semantically equal values for all
// versions (and there is at least one version).
func allSame[T any](versions []apiextensionsv1.CustomResourceDefinitionVersion, get func(*apiextensionsv1.CustomResourceDefinitionVersion) T) bool {
	if len(versions) == 0 {
		return false
	}
	for i := range versions {
		if !equality.Semantic.DeepEqual(get(&versions[i]), get(&versions[0])) {
			return false
		}
	}
	return true
}

func validateDeprecationWarning(deprecated bool, warning *string) []string {
	if warning == nil {
		return nil
	}
	if !deprecated {
		return []string{"can only be set for deprecated versions"}
	}
	var msgs []string
	if len(*warning) > 256 {
		msgs = append(msgs, "must be <= 256 characters long")
	}
	if *warning == "" {
		msgs = append(msgs, "must not be an empty string")
	}
	for i, r := range *warning {
		if !unicode.IsPrint(r) {
			msgs = append(msgs, fmt.Sprintf("must only contain printable UTF-8 characters; non-printable character found at index %d", i))
			break
		}
	}
	if !utf8.ValidString(*warning) {
		msgs = append(msgs, "must only contain printable UTF-8 characters")
	}
	return msgs
}

// validateNames checks the resource names in spec.names and in
// status.acceptedNames: all DNS-1035 labels (kind and listKind may be
// CamelCase), and kind != listKind so that a list can be told from an item.
func validateNames(names *apiextensionsv1.CustomResourceDefinitionNames, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	label := func(value, name string, lower bool) {
		check := value
		prefix := ""
		if lower {
			check = strings.ToLower(value)
			prefix = "may have mixed case, but should otherwise match: "
		}
		if msgs := utilvalidation.IsDNS1035Label(check); value != "" && len(msgs) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child(name), value, prefix+strings.Join(msgs, ",")))
		}
	}
	label(names.Plural, "plural", false)
	label(names.Singular, "singular", false)
	label(names.Kind, "kind", true)
	label(names.ListKind, "listKind", true)
	for i, s := range names.ShortNames {
		if msgs := utilvalidation.IsDNS1035Label(s); len(msgs) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("shortNames").Index(i), s, strings.Join(msgs, ",")))
		}
	}
	if names.Kind != "" && names.Kind == names.ListKind {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("listKind"), names.ListKind, "kind and listKind may not be the same"))
	}
	for i, c := range names.Categories {
		if msgs := utilvalidation.IsDNS1035Label(c); len(msgs) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("categories").Index(i), c, strings.Join(msgs, ",")))
		}
	}
	return allErrs
}

// validateStoredVersions: status.storedVersions lists every version objects
// may still be stored in. It must include the current storage version, and
// each entry must still be in spec.versions, or stored objects could no
// longer be read.
func validateStoredVersions(stored []string, versions []apiextensionsv1.CustomResourceDefinitionVersion, fldPath *field.Path) field.ErrorList {
	if len(stored) == 0 {
		return field.ErrorList{field.Invalid(fldPath, stored, "must have at least one stored version")}
	}
	var allErrs field.ErrorList
	for _, v := range versions {
		if v.Storage && !slices.Contains(stored, v.Name) {
			allErrs = append(allErrs, field.Invalid(fldPath, stored, "must have the storage version "+v.Name))
		}
	}
	for i, s := range stored {
		if !slices.ContainsFunc(versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == s }) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), s, fmt.Sprintf(
				"missing from spec.versions; %[1]s was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in %[1]s and removes %[1]s from status.storedVersions", s)))
		}
	}
	return allErrs
}

// validateConversion checks how custom resources are converted between
// versions: None (only apiVersion changes) or a Webhook.
func validateConversion(spec *apiextensionsv1.CustomResourceDefinitionSpec, fldPath *field.Path) field.ErrorList {
	conv := spec.Conversion
	if conv == nil {
		return nil
	}
	var allErrs field.ErrorList
	if conv.Strategy != apiextensionsv1.NoneConverter && spec.PreserveUnknownFields {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("strategy"), conv.Strategy, "must be None if spec.preserveUnknownFields is true"))
	}
	switch conv.Strategy {
	case apiextensionsv1.NoneConverter, apiextensionsv1.WebhookConverter:
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("strategy"), ""))
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("strategy"), conv.Strategy, []string{"None", "Webhook"}))
	}

	var cc *apiextensionsv1.WebhookClientConfig
	var reviewVersions []string
	if conv.Webhook != nil {
		cc, reviewVersions = conv.Webhook.ClientConfig, conv.Webhook.ConversionReviewVersions
	}
	ccPath := fldPath.Child("webhookClientConfig")
	reviewPath := fldPath.Child("conversionReviewVersions")
	if conv.Strategy != apiextensionsv1.WebhookConverter {
		if cc != nil {
			allErrs = append(allErrs, field.Forbidden(ccPath, "should not be set when strategy is not set to Webhook"))
		}
		if len(reviewVersions) > 0 {
			allErrs = append(allErrs, field.Forbidden(reviewPath, "should not be set when strategy is not set to Webhook"))
		}
		return allErrs
	}

	switch {
	case cc == nil:
		allErrs = append(allErrs, field.Required(ccPath, "required when strategy is set to Webhook"))
	case (cc.URL == nil) == (cc.Service == nil):
		allErrs = append(allErrs, field.Required(ccPath, "exactly one of url or service is required"))
	case cc.URL != nil:
		allErrs = append(allErrs, webhook.ValidateURL(ccPath.Child("url"), *cc.URL)...)
	default:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		allErrs = append(allErrs, webhook.ValidateService(ccPath.Child("service"), cc.Service.Namespace, cc.Service.Name, cc.Service.Path, port)...)
	}

	if len(reviewVersions) == 0 {
		allErrs = append(allErrs, field.Required(reviewPath, ""))
		return allErrs
	}
	seen := map[string]bool{}
	known := false
	for i, v := range reviewVersions {
		if seen[v] {
			allErrs = append(allErrs, field.Invalid(reviewPath.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			allErrs = append(allErrs, field.Invalid(reviewPath.Index(i), v, msg))
		}
		known = known || v == "v1" || v == "v1beta1"
	}
	// The API server must be able to speak one of the ConversionReview
	// versions the webhook accepts.
	if !known {
		allErrs = append(allErrs, field.Invalid(reviewPath, reviewVersions, "must include at least one of v1, v1beta1"))
	}
	return allErrs
}

// validateSubresources: the scale subresource maps Scale's replicas and
// selector onto simple JSON paths in the custom resource.
func validateSubresources(sub *apiextensionsv1.CustomResourceSubresources, fldPath *field.Path) field.ErrorList {
	if sub == nil || sub.Scale == nil {
		return nil
	}
	var allErrs field.ErrorList
	scale := sub.Scale
	underPrefix := func(value, name string, prefixes ...string) {
		p := fldPath.Child("scale." + name)
		if value == "" {
			allErrs = append(allErrs, field.Required(p, ""))
			return
		}
		if errs := validateSimpleJSONPath(value, p); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
			return
		}
		for _, prefix := range prefixes {
			if strings.HasPrefix(value, prefix) {
				return
			}
		}
		msg := "should be a json path under " + prefixes[0][:len(prefixes[0])-1]
		if len(prefixes) > 1 {
			msg = "should be a json path under either .spec or .status"
		}
		allErrs = append(allErrs, field.Invalid(p, value, msg))
	}
	underPrefix(scale.SpecReplicasPath, "specReplicasPath", ".spec.")
	underPrefix(scale.StatusReplicasPath, "statusReplicasPath", ".status.")
	if scale.LabelSelectorPath != nil && *scale.LabelSelectorPath != "" {
		underPrefix(*scale.LabelSelectorPath, "labelSelectorPath", ".spec.", ".status.")
	}
	return allErrs
}

func validateSimpleJSONPath(s string, fldPath *field.Path) field.ErrorList {
	switch {
	case s == "":
		return field.ErrorList{field.Invalid(fldPath, s, "must not be empty")}
	case s[0] != '.':
		return field.ErrorList{field.Invalid(fldPath, s, "must be a simple json path starting with .")}
	}
	return nil
}

// validateColumn checks an additionalPrinterColumns entry (the extra columns
// `kubectl get` shows).
func validateColumn(col *apiextensionsv1.CustomResourceColumnDefinition, fldPath *field.Path) field.ErrorList {
	types := []string{"boolean", "date", "integer", "number", "string"}
	formats := []string{"byte", "date", "date-time", "double", "float", "int32", "int64", "password"}
	var allErrs field.ErrorList
	if col.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	}
	typesMsg := "must be one of " + strings.Join(types, ",")
	if col.Type == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("type"), typesMsg))
	} else if !slices.Contains(types, col.Type) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), col.Type, typesMsg))
	}
	if col.Format != "" && !slices.Contains(formats, col.Format) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("format"), col.Format, "must be one of "+strings.Join(formats, ",")))
	}
	if col.JSONPath == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("JSONPath"), ""))
	} else {
		allErrs = append(allErrs, validateSimpleJSONPath(col.JSONPath, fldPath.Child("JSONPath"))...)
	}
	return allErrs
}

// validateSelectableFields checks the fields a CRD offers to field
// selectors: at most 8, each a scalar (string, integer or boolean) field
// outside metadata. Simplified: the path is resolved through properties only.
func validateSelectableFields(fields []apiextensionsv1.SelectableField, schema *apiextensionsv1.CustomResourceValidation, fldPath *field.Path) field.ErrorList {
	if schema == nil || schema.OpenAPIV3Schema == nil {
		return field.ErrorList{field.Invalid(fldPath, "", "may only be set when `version.schema.openAPIV3Schema` is not included")}
	}
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for i, f := range fields {
		p := fldPath.Index(i).Child("jsonPath")
		if f.JSONPath == "" {
			allErrs = append(allErrs, field.Required(p, ""))
			continue
		}
		target, ok := resolveJSONPath(schema.OpenAPIV3Schema, f.JSONPath)
		if !ok {
			allErrs = append(allErrs, field.Invalid(p, f.JSONPath, "is an invalid path: does not refer to a field in the schema"))
			continue
		}
		if strings.HasPrefix(f.JSONPath, ".metadata.") {
			allErrs = append(allErrs, field.Invalid(p, f.JSONPath, "must not point to fields in metadata"))
		}
		if target.Type != "string" && target.Type != "boolean" && target.Type != "integer" {
			allErrs = append(allErrs, field.Invalid(p, f.JSONPath, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
		}
		if seen[f.JSONPath] {
			allErrs = append(allErrs, field.Duplicate(p, f.JSONPath))
		}
		seen[f.JSONPath] = true
	}
	if len(seen) > maxSelectableFields {
		allErrs = append(allErrs, field.TooMany(fldPath, len(seen), maxSelectableFields))
	}
	return allErrs
}

// resolveJSONPath follows ".a.b" through the schema's properties. metadata
// is implicit in every schema, so ".metadata.x" resolves to a string.
func resolveJSONPath(schema *apiextensionsv1.JSONSchemaProps, path string) (*apiextensionsv1.JSONSchemaProps, bool) {
	if !strings.HasPrefix(path, ".") || path == "." {
		return nil, false
	}
	parts := strings.Split(path[1:], ".")
	if parts[0] == "metadata" && len(parts) == 2 {
		return &apiextensionsv1.JSONSchemaProps{Type: "string"}, true
	}
	current := schema
	for _, part := range parts {
		next, ok := current.Properties[part]
		if !ok {
			return nil, false
		}
		current = &next
	}
	return current, true
}

// validateAPIApproval: groups under k8s.io and kubernetes.io belong to the
// Kubernetes project; CRDs there need the api-approved.kubernetes.io
// annotation, set to the URL of the approving PR or to "unapproved, ...".
func validateAPIApproval(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	g := crd.Spec.Group
	if !(g == "k8s.io" || strings.HasSuffix(g, ".k8s.io") || g == "kubernetes.io" || strings.HasSuffix(g, ".kubernetes.io")) {
		return nil
	}
	state, reason := approvalState(crd.Annotations)
	// An unchanged state is never rejected, so controllers that only touch
	// the spec keep working.
	if old != nil {
		if oldState, _ := approvalState(old.Annotations); oldState == state {
			return nil
		}
	}
	path := field.NewPath("metadata", "annotations").Key(apiextensionsv1.KubeAPIApprovedAnnotation)
	switch state {
	case approvalMissing:
		return field.ErrorList{field.Required(path, reason)}
	case approvalInvalid:
		return field.ErrorList{field.Invalid(path, crd.Annotations[apiextensionsv1.KubeAPIApprovedAnnotation], reason)}
	}
	return nil
}

type approval int

const (
	approvalInvalid approval = iota
	approvalGiven
	approvalBypassed
	approvalMissing
)

func approvalState(annotations map[string]string) (approval, string) {
	value := annotations[apiextensionsv1.KubeAPIApprovedAnnotation]
	u, err := url.ParseRequestURI(value)
	switch {
	case value == "":
		return approvalMissing, fmt.Sprintf("protected groups must have approval annotation %q, see https://github.com/kubernetes/enhancements/pull/1111", apiextensionsv1.KubeAPIApprovedAnnotation)
	case strings.HasPrefix(value, "unapproved"):
		return approvalBypassed, fmt.Sprintf("not approved: %q", value)
	case err == nil && u.Host != "" && u.Scheme != "":
		return approvalGiven, fmt.Sprintf("approved in %v", value)
	default:
		return approvalInvalid, fmt.Sprintf("protected groups must have approval annotation %q with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111", apiextensionsv1.KubeAPIApprovedAnnotation)
	}
}

// validatePreserveUnknownFields: spec.preserveUnknownFields=true is the
// pre-v1 "keep any field" mode. It may stay on for old CRDs but not be
// turned on; new schemas say x-kubernetes-preserve-unknown-fields instead.
func validatePreserveUnknownFields(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	if old != nil && old.Spec.PreserveUnknownFields {
		return nil
	}
	if crd.Spec.PreserveUnknownFields {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "preserveUnknownFields"), true,
			"cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead")}
	}
	return nil
}

// Schema validation.
//
// A CRD schema is an OpenAPI v3 schema restricted so that it is
// "structural": every field has a type, the types form a tree the API server
// can prune unknown fields and apply defaults with, and features that make
// that impossible ($ref, patternProperties, ...) are forbidden.

// schemaLevel tells where a schema node sits, for the "type" messages.
type schemaLevel int

const (
	rootLevel schemaLevel = iota
	fieldLevel
	itemLevel
)

// validateRootSchema validates a version's openAPIV3Schema.
func validateRootSchema(schema *apiextensionsv1.JSONSchemaProps, spec *apiextensionsv1.CustomResourceDefinitionSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !spec.PreserveUnknownFields {
		allErrs = append(allErrs, validateStructural(schema, rootLevel, fldPath)...)
	}
	if schema.Nullable {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("nullable"), "nullable cannot be true at the root"))
	}
	allErrs = append(allErrs, validateSchemaProps(schema, fldPath, true, "")...)
	if len(allErrs) == 0 {
		// As upstream, rules are compiled and costed once the schema is
		// otherwise valid.
		if s, err := structural.New(schema); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath, "", err.Error()))
		} else {
			_, errs := cel.Compile(s.Root, fldPath)
			allErrs = append(allErrs, errs...)
		}
	}
	return allErrs
}

// validateStructural checks the structural rules on the tree of properties,
// items and additionalProperties.
func validateStructural(s *apiextensionsv1.JSONSchemaProps, level schemaLevel, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList

	if s.Type == "array" && s.Items == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("items"), "must be specified"))
	}
	if s.Items != nil && s.Items.Schema != nil {
		allErrs = append(allErrs, validateStructural(s.Items.Schema, itemLevel, fldPath.Child("items"))...)
	}
	for _, name := range sortedKeys(s.Properties) {
		prop := s.Properties[name]
		allErrs = append(allErrs, validateStructural(&prop, fieldLevel, fldPath.Child("properties").Key(name))...)
	}
	if s.AdditionalProperties != nil {
		if level == rootLevel {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("additionalProperties"), "must not be used at the root"))
		}
		if s.AdditionalProperties.Schema != nil {
			allErrs = append(allErrs, validateStructural(s.AdditionalProperties.Schema, fieldLevel, fldPath.Child("additionalProperties"))...)
		}
	}

	preserveUnknown := s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
	if s.XIntOrString && preserveUnknown {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("x-kubernetes-preserve-unknown-fields"), true, "must be false if x-kubernetes-int-or-string is true"))
	}
	if s.XIntOrString && s.XEmbeddedResource {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("x-kubernetes-embedded-resource"), true, "must be false if x-kubernetes-int-or-string is true"))
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("pattern"), s.Pattern, fmt.Sprintf("must be a valid regular expression, but isn't: %v", err)))
		}
	}

	typePath := fldPath.Child("type")
	switch {
	case s.XEmbeddedResource && s.Type == "":
		allErrs = append(allErrs, field.Required(typePath, "must be object if x-kubernetes-embedded-resource is true"))
	case s.XEmbeddedResource && s.Type != "object":
		allErrs = append(allErrs, field.Invalid(typePath, s.Type, "must be object if x-kubernetes-embedded-resource is true"))
	case s.Type == "" && !s.XIntOrString && !preserveUnknown:
		msg := map[schemaLevel]string{
			rootLevel:  "must not be empty at the root",
			fieldLevel: "must not be empty for specified object fields",
			itemLevel:  "must not be empty for specified array items",
		}[level]
		allErrs = append(allErrs, field.Required(typePath, msg))
	}
	if s.XEmbeddedResource && s.AdditionalProperties != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("additionalProperties"), "must not be used if x-kubernetes-embedded-resource is set"))
	}
	if level == rootLevel && s.Type != "" && s.Type != "object" {
		allErrs = append(allErrs, field.Invalid(typePath, s.Type, "must be object at the root"))
	}

	// A resource (the root, or an embedded one) has apiVersion, kind and
	// metadata whose shape the API server owns.
	isResource := level == rootLevel || s.XEmbeddedResource
	propsPath := fldPath.Child("properties")
	if isResource {
		for _, name := range []string{"apiVersion", "kind"} {
			if prop, ok := s.Properties[name]; ok && prop.Type != "string" {
				allErrs = append(allErrs, field.Invalid(propsPath.Key(name).Child("type"), prop.Type, "must be string"))
			}
		}
	}
	if metadata, ok := s.Properties["metadata"]; ok {
		metaPath := propsPath.Key("metadata")
		if isResource && metadata.Type != "object" {
			allErrs = append(allErrs, field.Invalid(metaPath.Child("type"), metadata.Type, "must be object"))
		}
		if level == rootLevel && !onlyNameAndGenerateName(metadata) {
			allErrs = append(allErrs, field.Forbidden(metaPath, "must not specify anything other than name and generateName, but metadata is implicitly specified"))
		}
	}

	if s.XEmbeddedResource && !preserveUnknown && len(s.Properties) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("properties"), "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"))
	}
	return allErrs
}

// onlyNameAndGenerateName: a root metadata schema may only constrain name
// and generateName (the rest of ObjectMeta is validated by the API server).
func onlyNameAndGenerateName(metadata apiextensionsv1.JSONSchemaProps) bool {
	rest := metadata
	rest.Type = ""
	rest.Default = nil
	rest.Properties = nil
	for name := range metadata.Properties {
		if name != "name" && name != "generateName" {
			return false
		}
	}
	return equality.Semantic.DeepEqual(rest, apiextensionsv1.JSONSchemaProps{})
}

// validateSchemaProps checks the OpenAPI features CRDs do not support and the
// Kubernetes extensions (x-kubernetes-*). noDefaults, when set, is why
// defaults are forbidden in this subtree.
func validateSchemaProps(s *apiextensionsv1.JSONSchemaProps, fldPath *field.Path, isRoot bool, noDefaults string) field.ErrorList {
	if s == nil {
		return nil
	}
	var allErrs field.ErrorList
	forbid := func(cond bool, child, msg string) {
		if cond {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(child), msg))
		}
	}

	types := []string{"array", "boolean", "integer", "number", "object", "string"}
	if s.Type != "" && !slices.Contains(types, s.Type) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), s.Type, types))
	}
	forbid(s.Default != nil && noDefaults != "", "default", "must not be set "+noDefaults)
	forbid(s.ID != "", "id", "id is not supported")
	forbid(s.AdditionalItems != nil, "additionalItems", "additionalItems is not supported")
	forbid(len(s.PatternProperties) != 0, "patternProperties", "patternProperties is not supported")
	forbid(len(s.Definitions) != 0, "definitions", "definitions is not supported")
	forbid(s.Dependencies != nil, "dependencies", "dependencies is not supported")
	forbid(s.Ref != nil, "$ref", "$ref is not supported")
	forbid(s.Type == "null", "type", "type cannot be set to null, use nullable as an alternative")
	forbid(s.Items != nil && len(s.Items.JSONSchemas) != 0, "items", "items must be a schema object and not an array")
	forbid(s.UniqueItems, "uniqueItems", "uniqueItems cannot be set to true since the runtime complexity becomes quadratic")

	// properties are for structs, additionalProperties for maps; mixing them
	// would contradict the convention that unknown fields are dropped.
	if s.AdditionalProperties != nil {
		if len(s.Properties) != 0 && (!s.AdditionalProperties.Allows || s.AdditionalProperties.Schema != nil) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("additionalProperties"), "additionalProperties and properties are mutual exclusive"))
		}
		allErrs = append(allErrs, validateSchemaProps(s.AdditionalProperties.Schema, fldPath.Child("additionalProperties"), false, noDefaults)...)
	}
	for _, name := range sortedKeys(s.Properties) {
		prop := s.Properties[name]
		reason := noDefaults
		if isRoot && (name == "metadata" || name == "kind" || name == "apiVersion") {
			reason = "in top-level " + name
		}
		allErrs = append(allErrs, validateSchemaProps(&prop, fldPath.Child("properties").Key(name), false, reason)...)
	}
	if s.Items != nil {
		allErrs = append(allErrs, validateSchemaProps(s.Items.Schema, fldPath.Child("items"), false, noDefaults)...)
	}
	allErrs = append(allErrs, validateSchemaProps(s.Not, fldPath.Child("not"), false, noDefaults)...)
	for _, group := range []struct {
		name string
		list []apiextensionsv1.JSONSchemaProps
	}{{"allOf", s.AllOf}, {"oneOf", s.OneOf}, {"anyOf", s.AnyOf}} {
		for i := range group.list {
			allErrs = append(allErrs, validateSchemaProps(&group.list[i], fldPath.Child(group.name).Index(i), false, noDefaults)...)
		}
	}

	allErrs = append(allErrs, validateExtensions(s, fldPath)...)
	return allErrs
}

// validateExtensions checks the x-kubernetes-* markers that steer pruning,
// server-side apply merging and CEL validation.
func validateExtensions(s *apiextensionsv1.JSONSchemaProps, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	typePath := fldPath.Child("type")

	if s.XPreserveUnknownFields != nil && !*s.XPreserveUnknownFields {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("x-kubernetes-preserve-unknown-fields"), false, "must be true or undefined"))
	}

	if s.XMapType != nil {
		if s.Type == "" {
			allErrs = append(allErrs, field.Required(typePath, "must be object if x-kubernetes-map-type is specified"))
		} else if s.Type != "object" {
			allErrs = append(allErrs, field.Invalid(typePath, s.Type, "must be object if x-kubernetes-map-type is specified"))
		}
		if *s.XMapType != "atomic" && *s.XMapType != "granular" {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("x-kubernetes-map-type"), *s.XMapType, []string{"atomic", "granular"}))
		}
	}

	listTypePath := fldPath.Child("x-kubernetes-list-type")
	if s.XListType != nil {
		if s.Type == "" {
			allErrs = append(allErrs, field.Required(typePath, "must be array if x-kubernetes-list-type is specified"))
		} else if s.Type != "array" {
			allErrs = append(allErrs, field.Invalid(typePath, s.Type, "must be array if x-kubernetes-list-type is specified"))
		}
		switch *s.XListType {
		case "atomic", "set", "map":
		default:
			allErrs = append(allErrs, field.NotSupported(listTypePath, *s.XListType, []string{"atomic", "set", "map"}))
		}
	}
	if len(s.XListMapKeys) > 0 {
		if s.XListType == nil {
			allErrs = append(allErrs, field.Required(listTypePath, "must be map if x-kubernetes-list-map-keys is non-empty"))
		} else if *s.XListType != "map" {
			allErrs = append(allErrs, field.Invalid(listTypePath, *s.XListType, "must be map if x-kubernetes-list-map-keys is non-empty"))
		}
	}
	if s.XListType != nil && *s.XListType == "map" {
		allErrs = append(allErrs, validateListMap(s, fldPath)...)
	}
	// Set items are compared whole, so they must be atomic values.
	if s.XListType != nil && *s.XListType == "set" && s.Items != nil && s.Items.Schema != nil {
		item := s.Items.Schema
		itemsPath := fldPath.Child("items")
		if item.Nullable {
			allErrs = append(allErrs, field.Forbidden(itemsPath.Child("nullable"), "cannot be nullable when x-kubernetes-list-type is set"))
		}
		switch {
		case item.Type == "array" && item.XListType != nil && *item.XListType != "atomic":
			allErrs = append(allErrs, field.Invalid(itemsPath.Child("x-kubernetes-list-type"), item.XListType, "must be atomic as item of a list with x-kubernetes-list-type=set"))
		case item.Type == "object" && (item.XMapType == nil || *item.XMapType != "atomic"):
			allErrs = append(allErrs, field.Invalid(itemsPath.Child("x-kubernetes-map-type"), item.XListType, "must be atomic as item of a list with x-kubernetes-list-type=set"))
		}
	}

	for i, rule := range s.XValidations {
		rulePath := fldPath.Child("x-kubernetes-validations").Index(i)
		trimmedRule, trimmedMsg := strings.TrimSpace(rule.Rule), strings.TrimSpace(rule.Message)
		switch {
		case trimmedRule == "":
			allErrs = append(allErrs, field.Required(rulePath.Child("rule"), "rule is not specified"))
		case rule.Message != "" && trimmedMsg == "":
			allErrs = append(allErrs, field.Invalid(rulePath.Child("message"), rule.Message, "must be non-empty if specified"))
		case strings.ContainsAny(trimmedMsg, "\r\n"):
			allErrs = append(allErrs, field.Invalid(rulePath.Child("message"), rule.Message, "must not contain line breaks"))
		case strings.ContainsAny(trimmedRule, "\r\n") && trimmedMsg == "":
			allErrs = append(allErrs, field.Required(rulePath.Child("message"), "message must be specified if rule contains line breaks"))
		}
		if rule.MessageExpression != "" && strings.TrimSpace(rule.MessageExpression) == "" {
			allErrs = append(allErrs, field.Required(rulePath.Child("messageExpression"), "messageExpression must be non-empty if specified"))
		}
		if rule.Reason != nil {
			reasons := []string{"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"}
			if !slices.Contains(reasons, string(*rule.Reason)) {
				allErrs = append(allErrs, field.NotSupported(rulePath.Child("reason"), *rule.Reason, reasons))
			}
		}
		if rule.FieldPath != "" && strings.TrimSpace(rule.FieldPath) == "" {
			allErrs = append(allErrs, field.Invalid(rulePath.Child("fieldPath"), rule.FieldPath, "must be non-empty if specified"))
		}
		if strings.ContainsAny(rule.FieldPath, "\r\n") {
			allErrs = append(allErrs, field.Invalid(rulePath.Child("fieldPath"), rule.FieldPath, "must not contain line breaks"))
		}
		if rule.FieldPath != "" && !validFieldPath(s, rule.FieldPath) {
			allErrs = append(allErrs, field.Invalid(rulePath.Child("fieldPath"), rule.FieldPath, "must be a valid path"))
		}
	}
	return allErrs
}

// validFieldPath reports whether a rule's fieldPath (".a.b", ".a['b.c']")
// names a field the schema declares (a property, or a key of an
// additionalProperties map).
func validFieldPath(s *apiextensionsv1.JSONSchemaProps, p string) bool {
	if !strings.HasPrefix(p, ".") && !strings.HasPrefix(p, "[") {
		return false
	}
	step := func(name string) bool {
		if sub, ok := s.Properties[name]; ok {
			s = &sub
			return true
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			s = s.AdditionalProperties.Schema
			return true
		}
		return false
	}
	for p != "" {
		switch {
		case p[0] == '.':
			p = p[1:]
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			if end == 0 || !step(p[:end]) {
				return false
			}
			p = p[end:]
		case strings.HasPrefix(p, "['"):
			end := strings.Index(p, "']")
			if end < 0 || !step(p[2:end]) {
				return false
			}
			p = p[end+2:]
		default:
			return false
		}
	}
	return true
}

// validateListMap: a list with x-kubernetes-list-type=map is merged by its
// key fields, which must be scalar properties of object items.
func validateListMap(s *apiextensionsv1.JSONSchemaProps, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	keysPath := fldPath.Child("x-kubernetes-list-map-keys")
	itemsPath := fldPath.Child("items")
	if len(s.XListMapKeys) == 0 {
		allErrs = append(allErrs, field.Required(keysPath, "must not be empty if x-kubernetes-list-type is map"))
	}
	if s.Items == nil {
		return append(allErrs, field.Required(itemsPath, "must have a schema if x-kubernetes-list-type is map"))
	}
	if s.Items.Schema == nil {
		return append(allErrs, field.Invalid(itemsPath, s.Items, "must only have a single schema if x-kubernetes-list-type is map"))
	}
	item := s.Items.Schema
	if item.Type != "object" {
		return append(allErrs, field.Invalid(itemsPath.Child("type"), item.Type, "must be object if parent array's x-kubernetes-list-type is map"))
	}
	if item.Nullable {
		allErrs = append(allErrs, field.Forbidden(itemsPath.Child("nullable"), "cannot be nullable when x-kubernetes-list-type is map"))
	}
	seen := map[string]bool{}
	for _, k := range s.XListMapKeys {
		if seen[k] {
			allErrs = append(allErrs, field.Invalid(keysPath, s.XListMapKeys, "must not contain duplicate entries"))
		}
		seen[k] = true
		prop, ok := item.Properties[k]
		if !ok {
			allErrs = append(allErrs, field.Invalid(keysPath, s.XListMapKeys, "entries must all be names of item properties"))
			continue
		}
		propPath := itemsPath.Child("properties").Key(k)
		if prop.Type == "array" || prop.Type == "object" {
			allErrs = append(allErrs, field.Invalid(propPath.Child("type"), item.Type, "must be a scalar type if parent array's x-kubernetes-list-type is map"))
		}
		if !slices.Contains(item.Required, k) && prop.Default == nil {
			allErrs = append(allErrs, field.Required(propPath.Child("default"), "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
		}
		if prop.Nullable {
			allErrs = append(allErrs, field.Forbidden(propPath.Child("nullable"), "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
		}
	}
	return allErrs
}

func specHasDefaults(spec *apiextensionsv1.CustomResourceDefinitionSpec) bool {
	for _, v := range spec.Versions {
		if v.Schema != nil && schemaHas(v.Schema.OpenAPIV3Schema, func(s *apiextensionsv1.JSONSchemaProps) bool { return s.Default != nil }) {
			return true
		}
	}
	return false
}

// schemaHas reports whether pred holds for s or any schema nested in it.
func schemaHas(s *apiextensionsv1.JSONSchemaProps, pred func(*apiextensionsv1.JSONSchemaProps) bool) bool {
	if s == nil {
		return false
	}
	if pred(s) {
		return true
	}
	for _, p := range s.Properties {
		if schemaHas(&p, pred) {
			return true
		}
	}
	if s.Items != nil && schemaHas(s.Items.Schema, pred) {
		return true
	}
	if s.AdditionalProperties != nil && schemaHas(s.AdditionalProperties.Schema, pred) {
		return true
	}
	for _, list := range [][]apiextensionsv1.JSONSchemaProps{s.AllOf, s.OneOf, s.AnyOf} {
		for i := range list {
			if schemaHas(&list[i], pred) {
				return true
			}
		}
	}
	return schemaHas(s.Not, pred)
}

func sortedKeys(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
