package builtin

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/printers"
	"github.com/skiff-sh/skiff/pkg/scheme"
)

// Adding a resource touches one place per concern (its Definition, the
// scheme, the client's resource table, its printer); this test fails when
// they disagree.
func TestDefinitionsAgreeWithSchemeClientAndPrinters(t *testing.T) {
	s := scheme.New()
	defs := map[schema.GroupResource]bool{}
	for _, d := range Definitions() {
		gr := schema.GroupResource{Group: d.Group, Resource: d.Resource}
		if defs[gr] {
			t.Errorf("%v defined twice", gr)
		}
		defs[gr] = true
		for _, vd := range d.Extra {
			if vd.Group != "" {
				defs[schema.GroupResource{Group: vd.Group, Resource: d.Resource}] = true
			}
		}
		gv := schema.GroupVersion{Group: d.Group, Version: d.Version}
		for _, kind := range []string{d.Kind, d.ListKind} {
			if !s.Recognizes(gv.WithKind(kind)) {
				t.Errorf("%v: the scheme does not know %s", gr, gv.WithKind(kind))
			}
		}
		gvks, _, err := s.ObjectKinds(d.New())
		if err != nil || gvks[0].Kind != d.Kind {
			t.Errorf("%v: New() is %v in the scheme, want kind %s (%v)", gr, gvks, d.Kind, err)
		}
		r, err := client.ResourceFor(d.New().(client.Object))
		if err != nil {
			t.Errorf("%v: not in the client's resource table: %v", gr, err)
		} else if r.Group != d.Group || r.Version != d.Version || r.Resource != d.Resource || r.Namespaced != d.Namespaced {
			t.Errorf("%v: the client's table says %+v, the definition %s/%s %s namespaced=%v", gr, r, d.Group, d.Version, d.Resource, d.Namespaced)
		}
		if _, ok := printers.For(gr); !ok {
			t.Errorf("%v: no printer (use the default handler explicitly if upstream has none)", gr)
		}
	}
	// Served without a Definition: computed by the API server.
	computed := map[schema.GroupResource]bool{{Resource: "componentstatuses"}: true}
	for r := range client.BuiltinResources() {
		gr := schema.GroupResource{Group: r.Group, Resource: r.Resource}
		if !defs[gr] {
			t.Errorf("the client's table has %v, which is not served", gr)
		}
	}
	for _, gr := range printers.Resources() {
		if !defs[gr] && !computed[gr] && !pendingPrinters[gr] {
			t.Errorf("printers has %v, which is not served", gr)
		}
	}
}

// pendingPrinters have printers ahead of their resources (being added on
// other branches); the list must end empty.
var pendingPrinters = map[schema.GroupResource]bool{}
