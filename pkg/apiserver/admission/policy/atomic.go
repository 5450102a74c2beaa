package policy

import (
	"fmt"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// checkNoAtomics is upstream's validatePatch: an apply configuration may
// not set an atomic list, map or struct (all of its other fields would
// silently be dropped).
func checkNoAtomics(v *typed.TypedValue) error {
	var found []string
	walkAtomics(nil, v.Schema(), v.TypeRef(), v.AsValue(), &found)
	if len(found) > 0 {
		return fmt.Errorf("may not mutate atomic arrays, maps or structs: %v", strings.Join(found, ", "))
	}
	return nil
}

func walkAtomics(path []fieldpath.PathElement, s *smdschema.Schema, tr smdschema.TypeRef, v value.Value, found *[]string) {
	atom, ok := s.Resolve(tr)
	if !ok {
		return
	}
	pathString := func() string {
		var b strings.Builder
		for _, pe := range path {
			b.WriteString(pe.String())
		}
		return b.String()
	}
	if v.IsMap() && atom.Map != nil {
		if atom.Map.ElementRelationship == smdschema.Atomic {
			*found = append(*found, pathString())
		}
		v.AsMap().Iterate(func(key string, val value.Value) bool {
			if sf, ok := atom.Map.FindField(key); ok {
				k := key
				walkAtomics(append(append([]fieldpath.PathElement(nil), path...), fieldpath.PathElement{FieldName: &k}), s, sf.Type, val, found)
			}
			return true
		})
	}
	if v.IsList() && atom.List != nil {
		if atom.List.ElementRelationship == smdschema.Atomic {
			*found = append(*found, pathString())
		}
		l := v.AsList()
		for i := 0; i < l.Length(); i++ {
			idx := i
			walkAtomics(append(append([]fieldpath.PathElement(nil), path...), fieldpath.PathElement{Index: &idx}), s, atom.List.ElementType, l.At(i), found)
		}
	}
}
