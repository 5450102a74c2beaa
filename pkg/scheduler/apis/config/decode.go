package config

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Load reads the configuration file at path and returns it decoded,
// defaulted and validated: what `skiff scheduler --config` runs with. Every
// error names the file and, for a bad value, the field.
func Load(path string) (*KubeSchedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scheduler configuration: %w", err)
	}
	cfg, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("scheduler configuration %s: %w", path, err)
	}
	SetDefaults(cfg)
	if err := Validate(cfg); err != nil {
		return nil, fmt.Errorf("invalid scheduler configuration %s: %w", path, err)
	}
	return cfg, nil
}

// Default returns the configuration the scheduler runs with when no file
// is given: an empty v1 configuration with upstream's defaults.
func Default() *KubeSchedulerConfiguration {
	cfg := &KubeSchedulerConfiguration{TypeMeta: metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: Kind}}
	SetDefaults(cfg)
	return cfg
}

// Decode parses a KubeSchedulerConfiguration written in YAML or JSON, as
// upstream's strict decoder does: apiVersion must be
// kubescheduler.config.k8s.io/v1 and kind KubeSchedulerConfiguration;
// unknown and duplicate fields are errors naming them (also inside the
// args of in-tree plugins). pluginConfig args of in-tree plugins are
// decoded into their typed args; other plugins' args are kept as
// *runtime.Unknown with the raw JSON. Decode does not default or validate.
func Decode(data []byte) (*KubeSchedulerConfiguration, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		if strings.Contains(err.Error(), "already set in map") {
			return nil, runtime.NewStrictDecodingError([]error{err})
		}
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	var tm metav1.TypeMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &tm); err != nil {
		return nil, fmt.Errorf("expected a KubeSchedulerConfiguration object: %w", err)
	}
	if err := checkTypeMeta(tm); err != nil {
		return nil, err
	}

	cfg := &KubeSchedulerConfiguration{}
	strictErrs, err := sigsjson.UnmarshalStrict(js, cfg)
	if err != nil {
		return nil, fmt.Errorf("decoding KubeSchedulerConfiguration: %w", err)
	}
	for i := range cfg.Profiles {
		for j := range cfg.Profiles[i].PluginConfig {
			pc := &cfg.Profiles[i].PluginConfig[j]
			strict, err := decodeArgs(pc)
			if err != nil {
				return nil, fmt.Errorf("decoding .profiles[%d].pluginConfig[%d]: %w", i, j, err)
			}
			if strict != nil {
				strictErrs = append(strictErrs, fmt.Errorf("decoding .profiles[%d].pluginConfig[%d]: %w", i, j, strict))
			}
		}
	}
	if len(strictErrs) > 0 {
		return nil, runtime.NewStrictDecodingError(strictErrs)
	}
	return cfg, nil
}

func checkTypeMeta(tm metav1.TypeMeta) error {
	want := fmt.Sprintf("want apiVersion: %s and kind: %s", SchemeGroupVersion, Kind)
	if tm.APIVersion == "" || tm.Kind == "" {
		return fmt.Errorf("apiVersion and kind must be set (%s)", want)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return fmt.Errorf("invalid apiVersion %q: %v (%s)", tm.APIVersion, err, want)
	}
	if gv == SchemeGroupVersion && tm.Kind == Kind {
		return nil
	}
	msg := fmt.Sprintf("no kind %q is registered for version %q", tm.Kind, tm.APIVersion)
	if gv.Group == GroupName && gv.Version != Version {
		return fmt.Errorf("%s: %s was removed upstream, only %s is supported (%s)", msg, tm.APIVersion, SchemeGroupVersion, want)
	}
	return fmt.Errorf("%s (%s)", msg, want)
}

// decodeArgs fills pc.Args.Object. A non-nil strict error reports unknown
// or duplicate fields in the args; err is fatal.
func decodeArgs(pc *PluginConfig) (strict error, err error) {
	raw := pc.Args.Raw
	obj, typed := newArgs(pc.Name)
	if !typed {
		if len(raw) == 0 || string(raw) == "null" {
			pc.Args.Object = nil
			return nil, nil
		}
		pc.Args.Object = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
		return nil, nil
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if len(raw) != 0 && string(raw) != "null" {
		var tm metav1.TypeMeta
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &tm); err != nil {
			return nil, fmt.Errorf("decoding args for plugin %s: %w", pc.Name, err)
		}
		if tm.Kind != "" && tm.Kind != gvk.Kind {
			return nil, fmt.Errorf("args for plugin %s were not of type %s, got %s", pc.Name, gvk.GroupKind(), tm.GroupVersionKind().GroupKind())
		}
		if tm.APIVersion != "" && tm.APIVersion != SchemeGroupVersion.String() {
			return nil, fmt.Errorf("decoding args for plugin %s: no kind %q is registered for version %q", pc.Name, gvk.Kind, tm.APIVersion)
		}
		strictErrs, err := sigsjson.UnmarshalStrict(raw, obj)
		if err != nil {
			return nil, fmt.Errorf("decoding args for plugin %s: %w", pc.Name, err)
		}
		if len(strictErrs) > 0 {
			strict = runtime.NewStrictDecodingError([]error{
				fmt.Errorf("decoding args for plugin %s: %w", pc.Name, runtime.NewStrictDecodingError(strictErrs)),
			})
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
	pc.Args.Object = obj
	return strict, nil
}

// Encode renders cfg as YAML in the v1 wire shape (typed args are written
// from Args.Object, unknown args from their raw JSON). cfg is not modified.
func Encode(cfg *KubeSchedulerConfiguration) ([]byte, error) {
	out := *cfg
	out.Profiles = make([]KubeSchedulerProfile, len(cfg.Profiles))
	for i, p := range cfg.Profiles {
		if p.PluginConfig != nil {
			pcs := make([]PluginConfig, len(p.PluginConfig))
			for j, pc := range p.PluginConfig {
				pcs[j] = PluginConfig{Name: pc.Name, Args: runtime.RawExtension{Raw: pc.Args.Raw}}
				switch o := pc.Args.Object.(type) {
				case nil:
				case *runtime.Unknown:
					pcs[j].Args.Raw = o.Raw
				default:
					b, err := json.Marshal(o)
					if err != nil {
						return nil, fmt.Errorf("encoding args of plugin %s: %w", pc.Name, err)
					}
					pcs[j].Args.Raw = b
				}
			}
			p.PluginConfig = pcs
		}
		out.Profiles[i] = p
	}
	if len(cfg.Profiles) == 0 {
		out.Profiles = nil
	}
	if out.APIVersion == "" && out.Kind == "" {
		out.TypeMeta = metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: Kind}
	}
	js, err := json.Marshal(&out)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(js)
}

// DecodeInto decodes the args an out-of-tree plugin factory receives into
// its own args struct, as upstream's frameworkruntime.DecodeInto: nil args
// (or a *runtime.Unknown without data) leave into untouched; JSON (the
// content type Decode sets) and YAML are accepted; other objects are an
// error. Decoding is strict: an unknown or duplicate field is an error
// naming it (upstream decodes leniently here).
func DecodeInto(obj runtime.Object, into any) error {
	if obj == nil {
		return nil
	}
	u, ok := obj.(*runtime.Unknown)
	if !ok {
		return fmt.Errorf("want args of type runtime.Unknown, got %T", obj)
	}
	if u.Raw == nil {
		return nil
	}
	raw := u.Raw
	switch u.ContentType {
	case runtime.ContentTypeJSON, "":
	case runtime.ContentTypeYAML:
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return err
		}
		raw = js
	default:
		return fmt.Errorf("not supported content type %s", u.ContentType)
	}
	strictErrs, err := sigsjson.UnmarshalStrict(raw, into)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		return runtime.NewStrictDecodingError(strictErrs)
	}
	return nil
}
