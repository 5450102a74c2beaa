package openapi

import (
	"encoding/json"
	"fmt"
)

//go:generate go run gen_markers.go

// markerTable is what the comment markers of the upstream API types add to
// their schemas (see gen_markers.go), keyed by "<package path>.<type name>".
type markerTable struct {
	Fields map[string]map[string]fieldMarkers `json:"fields"`
	Types  map[string]typeMarkers             `json:"types"`
	Enums  map[string]enumMarkers             `json:"enums"`
}

type fieldMarkers struct {
	Required *bool           `json:"r,omitempty"` // +required/+optional where they disagree with omitempty
	Skip     bool            `json:"s,omitempty"` // +k8s:openapi-gen=false
	Ext      map[string]any  `json:"x,omitempty"` // x-kubernetes-list-type, -list-map-keys, -map-type
	Default  json.RawMessage `json:"d,omitempty"` // +default
	Doc      string          `json:"doc,omitempty"`
}

type typeMarkers struct {
	Ext map[string]any `json:"x,omitempty"` // x-kubernetes-map-type, x-kubernetes-unions
	Doc string         `json:"doc,omitempty"`
}

type enumMarkers struct {
	Values []string `json:"v"` // sorted
	Lines  []string `json:"l"` // " - `\"Value\"` meaning", sorted
}

func loadMarkers() (*markerTable, error) {
	var mt markerTable
	if err := json.Unmarshal([]byte(markerJSON), &mt); err != nil {
		return nil, fmt.Errorf("openapi: marker table: %w", err)
	}
	return &mt, nil
}
