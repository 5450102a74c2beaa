package core

// Validation of the smaller core kinds: ConfigMap, Secret, ServiceAccount,
// Namespace, Node, Event, LimitRange and ResourceQuota.

import (
	"encoding/json"
	"fmt"
	"net"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateConfigMap validates a ConfigMap being created: keys must be valid
// file names ([-._a-zA-Z0-9]+), a key may not be in both data and
// binaryData, and the total size is at most 1 MiB.
func ValidateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	allErrs := ValidateObjectMeta(&cm.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	total := 0
	for key, value := range cm.Data {
		p := field.NewPath("data").Key(key)
		allErrs = append(allErrs, validateConfigKey(key, p)...)
		if _, dup := cm.BinaryData[key]; dup {
			allErrs = append(allErrs, field.Invalid(p, key, "duplicate of key present in binaryData"))
		}
		total += len(value)
	}
	for key, value := range cm.BinaryData {
		allErrs = append(allErrs, validateConfigKey(key, field.NewPath("binaryData").Key(key))...)
		total += len(value)
	}
	if total > corev1.MaxSecretSize {
		// The error is about the whole object, hence the empty path.
		allErrs = append(allErrs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return allErrs
}

func validateConfigKey(key string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsConfigMapKey(key) {
		allErrs = append(allErrs, field.Invalid(p, key, msg))
	}
	return allErrs
}

// ValidateConfigMapUpdate validates an update of a ConfigMap. An immutable
// ConfigMap (immutable: true) can change only its metadata.
func ValidateConfigMapUpdate(cm, old *corev1.ConfigMap) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&cm.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if old.Immutable != nil && *old.Immutable {
		if cm.Immutable == nil || !*cm.Immutable {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(cm.Data, old.Data) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(cm.BinaryData, old.BinaryData) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
		}
	}
	return append(allErrs, ValidateConfigMap(cm)...)
}

// ValidateSecret validates a Secret being created: key names, total size,
// and the keys each well-known secret type requires.
//
// Validation runs after stringData has been merged into data (the strategy
// does that, as upstream's conversion does).
func ValidateSecret(s *corev1.Secret) field.ErrorList {
	allErrs := ValidateObjectMeta(&s.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	dataPath := field.NewPath("data")
	total := 0
	for key, value := range s.Data {
		allErrs = append(allErrs, validateConfigKey(key, dataPath.Key(key))...)
		total += len(value)
	}
	if total > corev1.MaxSecretSize {
		allErrs = append(allErrs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}
	requireKey := func(key string) {
		if _, ok := s.Data[key]; !ok {
			allErrs = append(allErrs, field.Required(dataPath.Key(key), ""))
		}
	}
	requireJSON := func(key string) {
		b, ok := s.Data[key]
		if !ok {
			requireKey(key)
			return
		}
		if err := json.Unmarshal(b, &map[string]any{}); err != nil {
			allErrs = append(allErrs, field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error()))
		}
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		// The token controller fills in the token later; only the
		// service account name is needed up front.
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			allErrs = append(allErrs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg:
		requireJSON(corev1.DockerConfigKey)
	case corev1.SecretTypeDockerConfigJson:
		requireJSON(corev1.DockerConfigJsonKey)
	case corev1.SecretTypeBasicAuth:
		_, hasUser := s.Data[corev1.BasicAuthUsernameKey]
		_, hasPassword := s.Data[corev1.BasicAuthPasswordKey]
		if !hasUser && !hasPassword {
			requireKey(corev1.BasicAuthUsernameKey)
			requireKey(corev1.BasicAuthPasswordKey)
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		requireKey(corev1.TLSCertKey)
		requireKey(corev1.TLSPrivateKeyKey)
	}
	return allErrs
}

// ValidateSecretUpdate validates an update of a Secret: the type never
// changes, and an immutable Secret keeps its data.
func ValidateSecretUpdate(s, old *corev1.Secret) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateImmutable(s.Type, old.Type, field.NewPath("type"))...)
	if old.Immutable != nil && *old.Immutable {
		if s.Immutable == nil || !*s.Immutable {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(s.Data, old.Data) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
	}
	return append(allErrs, ValidateSecret(s)...)
}

// ValidateServiceAccount validates a ServiceAccount being created (only its
// metadata has rules).
func ValidateServiceAccount(sa *corev1.ServiceAccount) field.ErrorList {
	return ValidateObjectMeta(&sa.ObjectMeta, true, apivalidation.ValidateServiceAccountName, field.NewPath("metadata"))
}

// ValidateServiceAccountUpdate validates an update of a ServiceAccount.
func ValidateServiceAccountUpdate(sa, old *corev1.ServiceAccount) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&sa.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateServiceAccount(sa)...)
}

// ValidateNamespace validates a Namespace being created. Namespace names are
// DNS labels (they appear in DNS names such as svc.ns.svc.cluster.local).
func ValidateNamespace(ns *corev1.Namespace) field.ErrorList {
	allErrs := ValidateObjectMeta(&ns.ObjectMeta, false, apivalidation.ValidateNamespaceName, field.NewPath("metadata"))
	for _, f := range ns.Spec.Finalizers {
		p := field.NewPath("spec", "finalizers")
		allErrs = append(allErrs, apivalidation.ValidateFinalizerName(string(f), p)...)
		allErrs = append(allErrs, validateKubeFinalizerName(string(f), p)...)
	}
	return allErrs
}

// ValidateNamespaceUpdate validates an update of a Namespace (only the
// metadata rules apply; the strategy ignores spec and status changes).
func ValidateNamespaceUpdate(ns, old *corev1.Namespace) field.ErrorList {
	return ValidateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
}

// ValidateNamespaceStatusUpdate validates an update through
// namespaces/status: the phase is Active until deletion starts, then
// Terminating.
func ValidateNamespaceStatusUpdate(ns, old *corev1.Namespace) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status", "Phase") // sic, upstream's path
	if ns.DeletionTimestamp.IsZero() {
		if ns.Status.Phase != corev1.NamespaceActive {
			allErrs = append(allErrs, field.Invalid(p, ns.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty"))
		}
	} else if ns.Status.Phase != corev1.NamespaceTerminating {
		allErrs = append(allErrs, field.Invalid(p, ns.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
	}
	return allErrs
}

// ValidateNode validates a Node being created.
func ValidateNode(node *corev1.Node) field.ErrorList {
	metaPath := field.NewPath("metadata")
	allErrs := ValidateObjectMeta(&node.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, metaPath)
	// Upstream reports taint errors under "metadata.taints" (sic).
	allErrs = append(allErrs, validateNodeTaints(node.Spec.Taints, metaPath.Child("taints"))...)
	allErrs = append(allErrs, validateNodeResources(node)...)
	if len(node.Spec.PodCIDRs) > 0 {
		p := field.NewPath("spec", "podCIDRs")
		v4, v6 := 0, 0
		seen := map[string]bool{}
		for i, cidr := range node.Spec.PodCIDRs {
			errs := validation.IsValidCIDR(p.Index(i), cidr)
			allErrs = append(allErrs, errs...)
			if ip, _, err := net.ParseCIDR(cidr); err == nil && len(errs) == 0 {
				if ip.To4() != nil {
					v4++
				} else {
					v6++
				}
			}
			if seen[cidr] {
				allErrs = append(allErrs, field.Duplicate(p.Index(i), cidr))
			}
			seen[cidr] = true
		}
		if len(node.Spec.PodCIDRs) > 1 && (v4 > 1 || v6 > 1 || len(node.Spec.PodCIDRs) > 2) {
			allErrs = append(allErrs, field.Invalid(p, node.Spec.PodCIDRs, "may specify no more than one CIDR for each IP family"))
		}
	}
	return allErrs
}

func validateNodeTaints(taints []corev1.Taint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for i, t := range taints {
		p := fldPath.Index(i)
		allErrs = append(allErrs, metavalidation.ValidateLabelName(t.Key, p.Child("key"))...)
		if errs := validation.IsValidLabelValue(t.Value); len(errs) != 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("value"), t.Value, strings.Join(errs, ";")))
		}
		allErrs = append(allErrs, validateTaintEffect(t.Effect, p.Child("effect"))...)
		key := string(t.Effect) + "/" + t.Key
		if seen[key] {
			e := field.Duplicate(p, t)
			e.Detail = "taints must be unique by key and effect pair"
			allErrs = append(allErrs, e)
			continue
		}
		seen[key] = true
	}
	return allErrs
}

func validateNodeResources(node *corev1.Node) field.ErrorList {
	var allErrs field.ErrorList
	for name, q := range node.Status.Capacity {
		allErrs = append(allErrs, validateResourceQuantityValue(name, q, field.NewPath("status", "capacity", string(name)))...)
	}
	for name, q := range node.Status.Allocatable {
		allErrs = append(allErrs, validateResourceQuantityValue(name, q, field.NewPath("status", "allocatable", string(name)))...)
	}
	return allErrs
}

// ValidateNodeUpdate validates an update of a Node. podCIDRs and providerID
// can be set once (by the node IPAM controller / cloud provider) and then
// never change; taints and unschedulable may change freely.
func ValidateNodeUpdate(node, old *corev1.Node) field.ErrorList {
	metaPath := field.NewPath("metadata")
	allErrs := ValidateObjectMetaUpdate(&node.ObjectMeta, &old.ObjectMeta, metaPath)
	allErrs = append(allErrs, validateNodeResources(node)...)
	seen := map[corev1.NodeAddress]bool{}
	for i, a := range node.Status.Addresses {
		if seen[a] {
			allErrs = append(allErrs, field.Duplicate(field.NewPath("status", "addresses").Index(i), a))
		}
		seen[a] = true
	}
	if len(old.Spec.PodCIDRs) > 0 && !reflect.DeepEqual(old.Spec.PodCIDRs, node.Spec.PodCIDRs) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "podCIDRs"), "node updates may not change podCIDR except from \"\" to valid"))
	}
	if old.Spec.ProviderID != "" && old.Spec.ProviderID != node.Spec.ProviderID {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "providerID"), "node updates may not change providerID except from \"\" to valid"))
	}
	allErrs = append(allErrs, validateNodeTaints(node.Spec.Taints, metaPath.Child("taints"))...)
	if node.Spec.DoNotUseExternalID != old.Spec.DoNotUseExternalID {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "externalID"), "may not be updated"))
	}
	// Simplified: the deprecated spec.configSource is not validated.
	return allErrs
}

// ValidateNodeStatusUpdate validates an update through nodes/status; upstream
// applies the same rules as to a full update.
func ValidateNodeStatusUpdate(node, old *corev1.Node) field.ErrorList {
	return ValidateNodeUpdate(node, old)
}

// Limits on the fields of core/v1 Events written by new-style reporters.
const (
	eventReportingInstanceLengthLimit = 128
	eventActionLengthLimit            = 128
	eventReasonLengthLimit            = 128
	eventNoteLengthLimit              = 1024
)

// ValidateEvent validates a core/v1 Event being created. The core/v1 API
// keeps the lenient legacy rules (the strict ones apply to events.k8s.io/v1).
// As upstream, the generic metadata checks every object gets (names only
// need to be valid URL path segments) run only once those rules pass.
func ValidateEvent(ev *corev1.Event) field.ErrorList {
	if errs := legacyValidateEvent(ev); len(errs) > 0 {
		return errs
	}
	return apivalidation.ValidateObjectMeta(&ev.ObjectMeta, true, path.ValidatePathSegmentName, field.NewPath("metadata"))
}

// ValidateEventUpdate validates an update of a core/v1 Event.
func ValidateEventUpdate(ev, old *corev1.Event) field.ErrorList {
	if errs := legacyValidateEvent(ev); len(errs) > 0 {
		return errs
	}
	allErrs := apivalidation.ValidateObjectMeta(&ev.ObjectMeta, true, path.ValidatePathSegmentName, field.NewPath("metadata"))
	return append(allErrs, apivalidation.ValidateObjectMetaUpdate(&ev.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

func legacyValidateEvent(ev *corev1.Event) field.ErrorList {
	var allErrs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	if ev.EventTime.IsZero() {
		// Old-style event: the namespaces must agree ("default" is
		// tolerated for cluster-scoped objects, for old clients).
		if ev.InvolvedObject.Namespace == "" {
			if ev.Namespace != metav1.NamespaceNone && ev.Namespace != metav1.NamespaceDefault {
				allErrs = append(allErrs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if ev.Namespace != ev.InvolvedObject.Namespace {
			allErrs = append(allErrs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		if ev.InvolvedObject.Namespace == "" && ev.Namespace != metav1.NamespaceDefault && ev.Namespace != metav1.NamespaceSystem {
			allErrs = append(allErrs, field.Invalid(nsPath, ev.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		if ev.ReportingController == "" {
			allErrs = append(allErrs, field.Required(field.NewPath("reportingController"), ""))
		}
		allErrs = append(allErrs, ValidateQualifiedName(ev.ReportingController, field.NewPath("reportingController"))...)
		for _, f := range []struct {
			name     string
			value    string
			limit    int
			required bool
		}{
			{"reportingInstance", ev.ReportingInstance, eventReportingInstanceLengthLimit, true},
			{"action", ev.Action, eventActionLengthLimit, true},
			{"reason", ev.Reason, eventReasonLengthLimit, true},
			{"message", ev.Message, eventNoteLengthLimit, false},
		} {
			if f.required && f.value == "" {
				allErrs = append(allErrs, field.Required(field.NewPath(f.name), ""))
			}
			if len(f.value) > f.limit {
				allErrs = append(allErrs, field.Invalid(field.NewPath(f.name), "", fmt.Sprintf("can have at most %v characters", f.limit)))
			}
		}
	}
	allErrs = append(allErrs, validateDNS1123Subdomain(ev.Namespace, field.NewPath("namespace"))...)
	return allErrs
}

// ValidateLimitRange validates a LimitRange being created: one item per
// type, known resource names, and min <= defaultRequest <= default <= max.
func ValidateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	allErrs := ValidateObjectMeta(&lr.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	types := map[corev1.LimitType]bool{}
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		p := field.NewPath("spec", "limits").Index(i)
		allErrs = append(allErrs, validateLimitType(item.Type, p.Child("type"))...)
		if types[item.Type] {
			allErrs = append(allErrs, field.Duplicate(p.Child("type"), item.Type))
		}
		types[item.Type] = true

		nameFn := validateResourceName
		if item.Type == corev1.LimitTypePod || item.Type == corev1.LimitTypeContainer {
			nameFn = validateContainerResourceName
		}
		lists := []struct {
			name string
			list corev1.ResourceList
		}{{"max", item.Max}, {"min", item.Min}, {"default", item.Default}, {"defaultRequest", item.DefaultRequest}, {"maxLimitRequestRatio", item.MaxLimitRequestRatio}}
		if item.Type == corev1.LimitTypePod {
			if len(item.Default) > 0 {
				allErrs = append(allErrs, field.Forbidden(p.Child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(item.DefaultRequest) > 0 {
				allErrs = append(allErrs, field.Forbidden(p.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		}
		keys := map[corev1.ResourceName]bool{}
		for _, l := range lists {
			for name := range l.list {
				allErrs = append(allErrs, nameFn(name, p.Child(l.name).Key(string(name)))...)
				keys[name] = true
			}
		}
		if item.Type == corev1.LimitTypePersistentVolumeClaim {
			_, hasMin := item.Min[corev1.ResourceStorage]
			_, hasMax := item.Max[corev1.ResourceStorage]
			if !hasMin && !hasMax {
				allErrs = append(allErrs, field.Required(p.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
			}
		}
		for name := range keys {
			allErrs = append(allErrs, validateLimitRangeItemValues(item, name, p)...)
		}
	}
	return allErrs
}

func validateLimitType(t corev1.LimitType, p *field.Path) field.ErrorList {
	allErrs := ValidateQualifiedName(string(t), p)
	if len(allErrs) == 0 && !strings.Contains(string(t), "/") {
		switch t {
		case corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim:
		default:
			allErrs = append(allErrs, field.Invalid(p, t, "must be a standard limit type or fully qualified"))
		}
	}
	return allErrs
}

// validateLimitRangeItemValues compares the values given for one resource.
func validateLimitRangeItemValues(item *corev1.LimitRangeItem, name corev1.ResourceName, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	key := string(name)
	minQ, hasMin := item.Min[name]
	maxQ, hasMax := item.Max[name]
	def, hasDef := item.Default[name]
	defReq, hasDefReq := item.DefaultRequest[name]
	ratio, hasRatio := item.MaxLimitRequestRatio[name]
	if hasMin && hasMax && minQ.Cmp(maxQ) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("min").Key(key), minQ, fmt.Sprintf("min value %s is greater than max value %s", minQ.String(), maxQ.String())))
	}
	if hasDefReq && hasMin && minQ.Cmp(defReq) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("defaultRequest").Key(key), defReq, fmt.Sprintf("min value %s is greater than default request value %s", minQ.String(), defReq.String())))
	}
	if hasDefReq && hasMax && defReq.Cmp(maxQ) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("defaultRequest").Key(key), defReq, fmt.Sprintf("default request value %s is greater than max value %s", defReq.String(), maxQ.String())))
	}
	if hasDefReq && hasDef && defReq.Cmp(def) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("defaultRequest").Key(key), defReq, fmt.Sprintf("default request value %s is greater than default limit value %s", defReq.String(), def.String())))
	}
	if hasDef && hasMin && minQ.Cmp(def) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("default").Key(key), minQ, fmt.Sprintf("min value %s is greater than default value %s", minQ.String(), def.String())))
	}
	if hasDef && hasMax && def.Cmp(maxQ) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("default").Key(key), maxQ, fmt.Sprintf("default value %s is greater than max value %s", def.String(), maxQ.String())))
	}
	if hasRatio && ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("maxLimitRequestRatio").Key(key), ratio, fmt.Sprintf("ratio %s is less than 1", ratio.String())))
	}
	if hasRatio && hasMin && hasMax && minQ.MilliValue() > 0 {
		limit := float64(maxQ.MilliValue()) / float64(minQ.MilliValue())
		if float64(ratio.MilliValue())/1000 > limit {
			allErrs = append(allErrs, field.Invalid(p.Child("maxLimitRequestRatio").Key(key), ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), limit)))
		}
	}
	if !isOvercommitAllowed(name) && hasDef && hasDefReq && def.Cmp(defReq) != 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("defaultRequest").Key(key), defReq, fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", def.String(), defReq.String(), key)))
	}
	return allErrs
}

// ValidateLimitRangeUpdate validates an update of a LimitRange (the same
// rules as on create, plus metadata immutability).
func ValidateLimitRangeUpdate(lr, old *corev1.LimitRange) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&lr.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateLimitRange(lr)...)
}

// ValidateResourceQuota validates a ResourceQuota being created.
func ValidateResourceQuota(rq *corev1.ResourceQuota) field.ErrorList {
	allErrs := ValidateObjectMeta(&rq.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, validateResourceQuotaSpec(&rq.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateQuotaList(rq.Status.Hard, field.NewPath("status", "hard"))...)
	return append(allErrs, validateQuotaList(rq.Status.Used, field.NewPath("status", "used"))...)
}

func validateQuotaList(list corev1.ResourceList, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for name, q := range list {
		rp := p.Key(string(name))
		allErrs = append(allErrs, validateQuotaResourceName(name, rp)...)
		allErrs = append(allErrs, validateResourceQuantityValue(name, q, rp)...)
	}
	return allErrs
}

func validateResourceQuotaSpec(spec *corev1.ResourceQuotaSpec, p *field.Path) field.ErrorList {
	allErrs := validateQuotaList(spec.Hard, p.Child("hard"))
	scopesPath := p.Child("scopes")
	scopes := map[corev1.ResourceQuotaScope]bool{}
	for _, scope := range spec.Scopes {
		if !isStandardQuotaScope(scope) {
			allErrs = append(allErrs, field.Invalid(scopesPath, spec.Scopes, "unsupported scope"))
		}
		for name := range spec.Hard {
			if isStandardQuotaResourceName(name) && !isQuotaScopeValidForResource(scope, name) {
				allErrs = append(allErrs, field.Invalid(scopesPath, spec.Scopes, "unsupported scope applied to resource"))
			}
		}
		scopes[scope] = true
	}
	allErrs = append(allErrs, checkConflictingScopes(scopes, scopesPath, spec.Scopes)...)
	if sel := spec.ScopeSelector; sel != nil {
		sp := p.Child("scopeSelector", "matchExpressions")
		selScopes := map[corev1.ResourceQuotaScope]bool{}
		for _, req := range sel.MatchExpressions {
			if !isStandardQuotaScope(req.ScopeName) {
				allErrs = append(allErrs, field.Invalid(sp.Child("scopeName"), req.ScopeName, "unsupported scope"))
			}
			for name := range spec.Hard {
				if isStandardQuotaResourceName(name) && !isQuotaScopeValidForResource(req.ScopeName, name) {
					allErrs = append(allErrs, field.Invalid(sp, sel, "unsupported scope applied to resource"))
				}
			}
			switch req.ScopeName {
			case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
				corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
				if req.Operator != corev1.ScopeSelectorOpExists {
					allErrs = append(allErrs, field.Invalid(sp.Child("operator"), req.Operator,
						"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
				}
			}
			switch req.Operator {
			case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
				if len(req.Values) == 0 {
					allErrs = append(allErrs, field.Required(sp.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
				}
			case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
				if len(req.Values) != 0 {
					allErrs = append(allErrs, field.Invalid(sp.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
				}
			default:
				allErrs = append(allErrs, field.Invalid(sp.Child("operator"), req.Operator, "not a valid selector operator"))
			}
			selScopes[req.ScopeName] = true
		}
		allErrs = append(allErrs, checkConflictingScopes(selScopes, sp, spec.Scopes)...)
	}
	return allErrs
}

func checkConflictingScopes(scopes map[corev1.ResourceQuotaScope]bool, p *field.Path, raw []corev1.ResourceQuotaScope) field.ErrorList {
	var allErrs field.ErrorList
	if scopes[corev1.ResourceQuotaScopeBestEffort] && scopes[corev1.ResourceQuotaScopeNotBestEffort] {
		allErrs = append(allErrs, field.Invalid(p, raw, "conflicting scopes"))
	}
	if scopes[corev1.ResourceQuotaScopeTerminating] && scopes[corev1.ResourceQuotaScopeNotTerminating] {
		allErrs = append(allErrs, field.Invalid(p, raw, "conflicting scopes"))
	}
	return allErrs
}

func isStandardQuotaScope(s corev1.ResourceQuotaScope) bool {
	switch s {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeBestEffort,
		corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopePriorityClass,
		corev1.ResourceQuotaScopeCrossNamespacePodAffinity, corev1.ResourceQuotaScopeVolumeAttributesClass:
		return true
	}
	return false
}

// isQuotaScopeValidForResource: pod scopes only limit pods and their
// compute resources; BestEffort pods have no compute resources to limit.
func isQuotaScopeValidForResource(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	podCompute := name == corev1.ResourcePods || name == corev1.ResourceCPU || name == corev1.ResourceMemory ||
		name == corev1.ResourceLimitsCPU || name == corev1.ResourceLimitsMemory ||
		name == corev1.ResourceRequestsCPU || name == corev1.ResourceRequestsMemory
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podCompute
	case corev1.ResourceQuotaScopeBestEffort:
		return name == corev1.ResourcePods
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return name == corev1.ResourcePersistentVolumeClaims || name == corev1.ResourceRequestsStorage
	}
	return true
}

// ValidateResourceQuotaUpdate validates an update of a ResourceQuota: the
// scopes cannot change.
func ValidateResourceQuotaUpdate(rq, old *corev1.ResourceQuota) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&rq.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateResourceQuotaSpec(&rq.Spec, field.NewPath("spec"))...)
	oldScopes, newScopes := map[corev1.ResourceQuotaScope]bool{}, map[corev1.ResourceQuotaScope]bool{}
	for _, s := range old.Spec.Scopes {
		oldScopes[s] = true
	}
	for _, s := range rq.Spec.Scopes {
		newScopes[s] = true
	}
	if !reflect.DeepEqual(oldScopes, newScopes) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "scopes"), rq.Spec.Scopes, fieldImmutableErrorMsg))
	}
	return allErrs
}

// ValidateResourceQuotaStatusUpdate validates an update through
// resourcequotas/status.
func ValidateResourceQuotaStatusUpdate(rq, old *corev1.ResourceQuota) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&rq.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if rq.ResourceVersion == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	allErrs = append(allErrs, validateQuotaList(rq.Status.Hard, field.NewPath("status", "hard"))...)
	return append(allErrs, validateQuotaList(rq.Status.Used, field.NewPath("status", "used"))...)
}
