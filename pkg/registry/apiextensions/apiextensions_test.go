package apiextensions

import (
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func crontabSchema() *apiextensionsv1.CustomResourceValidation {
	return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"cronSpec": {Type: "string"},
					"image":    {Type: "string"},
					"replicas": {Type: "integer", Default: &apiextensionsv1.JSON{Raw: []byte("1")}},
					"ports": {
						Type:         "array",
						XListType:    new("map"),
						XListMapKeys: []string{"name"},
						Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
							Type:       "object",
							Required:   []string{"name"},
							Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string"}, "port": {Type: "integer"}},
						}},
					},
					"labels": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
					"extra":  {Type: "object", XPreserveUnknownFields: new(true)},
					"size":   {XIntOrString: true},
				},
			},
			"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}}},
		},
	}}
}

func validCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "crontabs.stable.example.com", ResourceVersion: "1"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "stable.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "crontabs", Kind: "CronTab", ShortNames: []string{"ct"}},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: crontabSchema(),
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
				},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Spec", Type: "string", JSONPath: ".spec.cronSpec"}},
				SelectableFields:         []apiextensionsv1.SelectableField{{JSONPath: ".spec.image"}},
			}},
		},
	}
	DefaultCustomResourceDefinition(crd)
	return crd
}

// twoVersions gives the CRD a second, different version so per-version
// paths are used.
func twoVersions(crd *apiextensionsv1.CustomResourceDefinition) {
	v := *crd.Spec.Versions[0].DeepCopy()
	v.Name, v.Storage = "v2", false
	v.Schema.OpenAPIV3Schema.Description = "v2"
	crd.Spec.Versions = append(crd.Spec.Versions, v)
}

func TestDefaultCustomResourceDefinition(t *testing.T) {
	crd := validCRD()
	if crd.Spec.Names.Singular != "crontab" || crd.Spec.Names.ListKind != "CronTabList" {
		t.Errorf("names = %+v", crd.Spec.Names)
	}
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
		t.Errorf("conversion = %+v", crd.Spec.Conversion)
	}
	if len(crd.Status.StoredVersions) != 1 || crd.Status.StoredVersions[0] != "v1" {
		t.Errorf("storedVersions = %v", crd.Status.StoredVersions)
	}
	if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("scope changed")
	}

	wh := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Foo", Singular: "thefoo", ListKind: "Foos"},
		Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Name: "conv", Namespace: "ns"}},
		}},
	}}
	DefaultCustomResourceDefinition(wh)
	if p := wh.Spec.Conversion.Webhook.ClientConfig.Service.Port; p == nil || *p != 443 {
		t.Errorf("webhook port = %v", p)
	}
	if wh.Spec.Names.Singular != "thefoo" || wh.Spec.Names.ListKind != "Foos" {
		t.Errorf("user names overwritten: %+v", wh.Spec.Names)
	}
}

func TestValidateCustomResourceDefinition(t *testing.T) {
	props := func(c *apiextensionsv1.CustomResourceDefinition) map[string]apiextensionsv1.JSONSchemaProps {
		return c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties
	}
	tests := []struct {
		name   string
		mutate func(*apiextensionsv1.CustomResourceDefinition)
		path   string
		typ    field.ErrorType
		msg    string
	}{
		{name: "valid", mutate: func(*apiextensionsv1.CustomResourceDefinition) {}},
		{name: "valid two versions", mutate: twoVersions},
		{name: "valid cluster scope", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = apiextensionsv1.ClusterScoped }},
		{name: "valid webhook", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Name: "conv", Namespace: "ns", Path: new("/convert")}},
				ConversionReviewVersions: []string{"v1"},
			}}
		}},
		{name: "approved k8s.io group", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Group, c.Name = "gateway.networking.k8s.io", "crontabs.gateway.networking.k8s.io"
			c.Annotations = map[string]string{"api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/1"}
		}},
		{name: "wrong name", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Name = "crontab.stable.example.com" },
			path: "metadata.name", typ: field.ErrorTypeInvalid,
			msg: `metadata.name: Invalid value: "crontab.stable.example.com": must be spec.names.plural+"."+spec.group`},
		{name: "group without dot", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Group, c.Name = "stable", "crontabs.stable" },
			path: "spec.group", typ: field.ErrorTypeInvalid},
		{name: "no group", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Group = "" },
			path: "spec.group", typ: field.ErrorTypeRequired},
		{name: "no scope", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = "" },
			path: "spec.scope", typ: field.ErrorTypeRequired},
		{name: "bad scope", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = "Global" },
			path: "spec.scope", typ: field.ErrorTypeNotSupported},
		{name: "no plural", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.Plural = "" },
			path: "spec.names.plural", typ: field.ErrorTypeRequired},
		{name: "bad plural", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Names.Plural, c.Name = "CronTabs", "CronTabs.stable.example.com"
		}, path: "spec.names.plural", typ: field.ErrorTypeInvalid},
		{name: "bad kind", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.Kind = "Cron_Tab" },
			path: "spec.names.kind", typ: field.ErrorTypeInvalid},
		{name: "kind == listKind", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.ListKind = "CronTab" },
			path: "spec.names.listKind", typ: field.ErrorTypeInvalid},
		{name: "bad short name", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.ShortNames = []string{"c t"} },
			path: "spec.names.shortNames[0]", typ: field.ErrorTypeInvalid},
		{name: "no storage version", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Storage = false },
			path: "spec.versions", typ: field.ErrorTypeInvalid},
		{name: "two storage versions", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			twoVersions(c)
			c.Spec.Versions[1].Storage = true
		}, path: "spec.versions", typ: field.ErrorTypeInvalid},
		{name: "duplicate versions", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			twoVersions(c)
			c.Spec.Versions[1].Name = "v1"
		}, path: "spec.versions", typ: field.ErrorTypeInvalid},
		{name: "bad version name", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Name = "V1"
			c.Status.StoredVersions = []string{"V1"}
		}, path: "spec.versions[0].name", typ: field.ErrorTypeInvalid},
		{name: "no schema", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Schema = nil },
			path: "spec.versions[0].schema.openAPIV3Schema", typ: field.ErrorTypeRequired},
		{name: "no schema in second version", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			twoVersions(c)
			c.Spec.Versions[1].Schema = nil
		}, path: "spec.versions[1].schema.openAPIV3Schema", typ: field.ErrorTypeRequired},
		{name: "root type missing (single version: spec.validation path)", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Type = ""
		}, path: "spec.validation.openAPIV3Schema.type", typ: field.ErrorTypeRequired,
			msg: "spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root"},
		{name: "root type string", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Type = "string"
		}, path: "spec.validation.openAPIV3Schema.type", typ: field.ErrorTypeInvalid},
		{name: "field without type", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			props(c)["cronSpec"] = apiextensionsv1.JSONSchemaProps{Description: "when"}
		}, path: "spec.validation.openAPIV3Schema.properties[spec].properties[cronSpec].type", typ: field.ErrorTypeRequired,
			msg: "spec.validation.openAPIV3Schema.properties[spec].properties[cronSpec].type: Required value: must not be empty for specified object fields"},
		{name: "field without type in second version", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			twoVersions(c)
			c.Spec.Versions[1].Schema.OpenAPIV3Schema.Properties["status"] = apiextensionsv1.JSONSchemaProps{}
		}, path: "spec.versions[1].schema.openAPIV3Schema.properties[status].type", typ: field.ErrorTypeRequired},
		{name: "array without items", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			props(c)["tags"] = apiextensionsv1.JSONSchemaProps{Type: "array"}
		}, path: "spec.validation.openAPIV3Schema.properties[spec].properties[tags].items", typ: field.ErrorTypeRequired},
		{name: "unknown type", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			props(c)["image"] = apiextensionsv1.JSONSchemaProps{Type: "str"}
		}, path: "spec.validation.openAPIV3Schema.properties[spec].properties[image].type", typ: field.ErrorTypeNotSupported},
		{name: "$ref", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			props(c)["image"] = apiextensionsv1.JSONSchemaProps{Type: "string", Ref: new("#/definitions/x")}
		}, path: "spec.validation.openAPIV3Schema.properties[spec].properties[image].$ref", typ: field.ErrorTypeForbidden},
		{name: "properties and additionalProperties", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			props(c)["labels"] = apiextensionsv1.JSONSchemaProps{Type: "object",
				Properties:           map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string"}},
				AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}}
		}, path: "spec.validation.openAPIV3Schema.properties[spec].properties[labels].additionalProperties", typ: field.ErrorTypeForbidden},
		{name: "preserve-unknown-fields false", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			props(c)["extra"] = apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: new(false)}
		}, path: "spec.validation.openAPIV3Schema.properties[spec].properties[extra].x-kubernetes-preserve-unknown-fields", typ: field.ErrorTypeInvalid},
		{name: "list-map key not required", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			p := props(c)["ports"]
			p.Items.Schema.Required = nil
		}, path: "spec.validation.openAPIV3Schema.properties[spec].properties[ports].items.properties[name].default", typ: field.ErrorTypeRequired},
		{name: "list-type on object", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			props(c)["labels"] = apiextensionsv1.JSONSchemaProps{Type: "object", XListType: new("set")}
		}, path: "spec.validation.openAPIV3Schema.properties[spec].properties[labels].type", typ: field.ErrorTypeInvalid},
		{name: "nullable root", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Nullable = true
		}, path: "spec.validation.openAPIV3Schema.nullable", typ: field.ErrorTypeForbidden},
		{name: "metadata with more than name", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["metadata"] = apiextensionsv1.JSONSchemaProps{Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"labels": {Type: "object"}}}
		}, path: "spec.validation.openAPIV3Schema.properties[metadata]", typ: field.ErrorTypeForbidden},
		{name: "metadata with name only is fine", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["metadata"] = apiextensionsv1.JSONSchemaProps{Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string", MaxLength: new(int64(20))}}}
		}},
		{name: "default in top-level metadata", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["kind"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"X"`)}}
		}, path: "spec.validation.openAPIV3Schema.properties[kind].default", typ: field.ErrorTypeForbidden},
		{name: "bad pattern", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			props(c)["image"] = apiextensionsv1.JSONSchemaProps{Type: "string", Pattern: "("}
		}, path: "spec.validation.openAPIV3Schema.properties[spec].properties[image].pattern", typ: field.ErrorTypeInvalid},
		{name: "empty CEL rule", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations = apiextensionsv1.ValidationRules{{Rule: " "}}
		}, path: "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule", typ: field.ErrorTypeRequired},
		{name: "CEL rule does not compile", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.spec.replicas >"}}
		}, path: "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule", typ: field.ErrorTypeInvalid},
		{name: "CEL fieldPath not in the schema", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations = apiextensionsv1.ValidationRules{{Rule: "true", FieldPath: ".spec.nope"}}
		}, path: "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].fieldPath", typ: field.ErrorTypeInvalid,
			msg: `spec.validation.openAPIV3Schema.x-kubernetes-validations[0].fieldPath: Invalid value: ".spec.nope": must be a valid path`},
		{name: "CEL fieldPath in the schema", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations = apiextensionsv1.ValidationRules{{Rule: "true", FieldPath: ".spec['labels'].anykey"}}
		}},
		{name: "CEL rule too expensive", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			p := props(c)["labels"]
			p.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.all(k, self.all(j, self[k] == self[j]))"}}
			props(c)["labels"] = p
		}, path: "spec.validation.openAPIV3Schema.properties[spec].properties[labels].x-kubernetes-validations[0].rule", typ: field.ErrorTypeForbidden},
		{name: "scale path outside spec", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Subresources.Scale.SpecReplicasPath = ".status.replicas"
		}, path: "spec.subresources.scale.specReplicasPath", typ: field.ErrorTypeInvalid},
		{name: "bad printer column", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].AdditionalPrinterColumns[0].Type = "text"
		}, path: "spec.additionalPrinterColumns[0].type", typ: field.ErrorTypeInvalid},
		{name: "printer column without path (per version)", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			twoVersions(c)
			c.Spec.Versions[1].AdditionalPrinterColumns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "X", Type: "string"}}
		}, path: "spec.versions[1].additionalPrinterColumns[0].JSONPath", typ: field.ErrorTypeRequired},
		{name: "selectable object field", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.labels"}}
		}, path: "spec.selectableFields[0].jsonPath", typ: field.ErrorTypeInvalid},
		{name: "selectable unknown field", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.nope"}}
		}, path: "spec.selectableFields[0].jsonPath", typ: field.ErrorTypeInvalid},
		{name: "webhook without config", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}
		}, path: "spec.conversion.webhookClientConfig", typ: field.ErrorTypeRequired},
		{name: "webhook http url", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: new("http://conv.example.com/convert")}, ConversionReviewVersions: []string{"v1"}}}
		}, path: "spec.conversion.webhookClientConfig.url", typ: field.ErrorTypeInvalid},
		{name: "webhook unknown review versions", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: new("https://conv.example.com/convert")}, ConversionReviewVersions: []string{"v2"}}}
		}, path: "spec.conversion.conversionReviewVersions", typ: field.ErrorTypeInvalid},
		{name: "webhook config with None", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Conversion.Webhook = &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: new("https://x.example.com")}}
		}, path: "spec.conversion.webhookClientConfig", typ: field.ErrorTypeForbidden},
		{name: "preserveUnknownFields", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.PreserveUnknownFields = true },
			path: "spec.preserveUnknownFields", typ: field.ErrorTypeInvalid},
		{name: "k8s.io group without approval", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Group, c.Name = "x.k8s.io", "crontabs.x.k8s.io"
		}, path: "metadata.annotations[api-approved.kubernetes.io]", typ: field.ErrorTypeRequired},
		{name: "k8s.io group with bad approval", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Group, c.Name = "x.k8s.io", "crontabs.x.k8s.io"
			c.Annotations = map[string]string{"api-approved.kubernetes.io": "yes"}
		}, path: "metadata.annotations[api-approved.kubernetes.io]", typ: field.ErrorTypeInvalid},
		{name: "stored version missing", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Status.StoredVersions = nil },
			path: "status.storedVersions", typ: field.ErrorTypeInvalid},
		{name: "namespaced", mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Namespace = "default" },
			path: "metadata.namespace", typ: field.ErrorTypeForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			crd := validCRD()
			tc.mutate(crd)
			errs := ValidateCustomResourceDefinition(crd)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if !registrytest.FindError(errs, tc.path, tc.typ) {
				t.Fatalf("want %s at %s, got %v", tc.typ, tc.path, errs)
			}
			if tc.msg != "" {
				for _, e := range errs {
					if e.Error() == tc.msg {
						return
					}
				}
				t.Fatalf("want message %q, got %v", tc.msg, errs)
			}
		})
	}
}

func TestValidateCustomResourceDefinitionUpdate(t *testing.T) {
	established := func() *apiextensionsv1.CustomResourceDefinition {
		c := validCRD()
		c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
		return c
	}
	tests := []struct {
		name   string
		old    func() *apiextensionsv1.CustomResourceDefinition
		mutate func(*apiextensionsv1.CustomResourceDefinition)
		path   string
		typ    field.ErrorType
	}{
		{"add a version", established, twoVersions, "", ""},
		{"scope may change before Established", validCRD, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = apiextensionsv1.ClusterScoped }, "", ""},
		{"scope fixed once Established", established, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = apiextensionsv1.ClusterScoped },
			"spec.scope", field.ErrorTypeInvalid},
		{"kind fixed once Established", established, func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Names.Kind, c.Spec.Names.ListKind = "Cron", "CronList"
		}, "spec.names.kind", field.ErrorTypeInvalid},
		{"group immutable", validCRD, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Group = "other.example.com" },
			"spec.group", field.ErrorTypeInvalid},
		{"plural immutable", validCRD, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.Plural = "tabs" },
			"spec.names.plural", field.ErrorTypeInvalid},
		{"stored version removed from spec", established, func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Name = "v2"
			c.Status.StoredVersions = []string{"v1", "v2"}
		}, "status.storedVersions[0]", field.ErrorTypeInvalid},
		{"new storage version not yet recorded", established, func(c *apiextensionsv1.CustomResourceDefinition) {
			twoVersions(c)
			c.Spec.Versions[0].Storage, c.Spec.Versions[1].Storage = false, true
		}, "status.storedVersions", field.ErrorTypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := tc.old()
			crd := old.DeepCopy()
			tc.mutate(crd)
			errs := ValidateCustomResourceDefinitionUpdate(crd, old)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if !registrytest.FindError(errs, tc.path, tc.typ) {
				t.Fatalf("want %s at %s, got %v", tc.typ, tc.path, errs)
			}
		})
	}

	// preserveUnknownFields may stay true on CRDs that already have it.
	old := validCRD()
	old.Spec.PreserveUnknownFields = true
	crd := old.DeepCopy()
	errs := ValidateCustomResourceDefinitionUpdate(crd, old)
	// Only the schema's default is a problem then, not the flag itself.
	if len(errs) != 1 || errs[0].Detail != "must be false in order to use defaults in the schema" {
		t.Fatalf("got %v", errs)
	}
}

func TestValidateCustomResourceDefinitionStatusUpdate(t *testing.T) {
	old := validCRD()
	crd := old.DeepCopy()
	crd.Status.AcceptedNames = crd.Spec.Names
	crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
	if errs := ValidateCustomResourceDefinitionStatusUpdate(crd, old); len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	crd.Status.AcceptedNames.Plural = "Bad_Plural"
	if errs := ValidateCustomResourceDefinitionStatusUpdate(crd, old); !registrytest.FindError(errs, "status.acceptedNames.plural", field.ErrorTypeInvalid) {
		t.Fatalf("got %v", errs)
	}
}
