package openapi

import (
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Definitions is every definition of one generation of the documents, as
// OpenAPI v3 schemas (refs of the form #/components/schemas/<name>), the
// input of structured-merge-diff's type converter. A new generation is made
// by each Update; callers may cache what they derive from it by identity.
type Definitions struct {
	once    sync.Once
	st      *state
	schemas map[string]*spec.Schema
	err     error
}

// Schemas returns the definitions, parsed on first use. The map is shared:
// callers must not modify it.
func (d *Definitions) Schemas() (map[string]*spec.Schema, error) {
	d.once.Do(func() {
		all := make(map[string]bool, len(d.st.model.defs))
		for name := range d.st.model.defs {
			all[name] = true
		}
		data, err := json.Marshal(renderDefinitions(d.st.model, all, v3))
		if err != nil {
			d.err = fmt.Errorf("openapi: definitions: %w", err)
			return
		}
		out := map[string]*spec.Schema{}
		if err := json.Unmarshal(data, &out); err != nil {
			d.err = fmt.Errorf("openapi: definitions: %w", err)
			return
		}
		d.schemas = out
	})
	return d.schemas, d.err
}

// Definitions returns the definitions of the documents being served.
func (h *Handler) Definitions() *Definitions {
	return h.state.Load().defs
}
