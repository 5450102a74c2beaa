package apiserver

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheme"
)

// NewScheme returns the scheme of every served type (see pkg/scheme).
func NewScheme() *runtime.Scheme { return scheme.New() }
