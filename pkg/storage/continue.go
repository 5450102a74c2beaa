package storage

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// A continue token is opaque to clients; ours has upstream's shape:
// base64url(JSON{"v":"meta.k8s.io/v1","rv":<list revision>,"start":<next key>}).
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

var errInvalidContinue = errors.New("continue key is not valid")

// EncodeContinue builds the token for a list that resumes at key (under
// prefix) at revision rev.
func EncodeContinue(key, prefix string, rev int64) (string, error) {
	next := strings.TrimPrefix(key, prefix)
	if next == key {
		return "", fmt.Errorf("unable to encode next field: the key and key prefix do not match")
	}
	out, err := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: rev, StartKey: next})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// DecodeContinue returns the key to resume at and the list revision. The key
// cannot escape prefix.
func DecodeContinue(token, prefix string) (string, int64, error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", errInvalidContinue, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("%w: %v", errInvalidContinue, err)
	}
	if c.APIVersion != "meta.k8s.io/v1" {
		return "", 0, fmt.Errorf("%w: server does not recognize this encoded version %q", errInvalidContinue, c.APIVersion)
	}
	// -1 is the inconsistent continuation a 410 hands out: "from this key
	// at the latest revision".
	if c.ResourceVersion == 0 || c.ResourceVersion < -1 {
		return "", 0, fmt.Errorf("%w: incorrect encoded start resourceVersion (version meta.k8s.io/v1)", errInvalidContinue)
	}
	if c.StartKey == "" {
		return "", 0, fmt.Errorf("%w: encoded start key empty (version meta.k8s.io/v1)", errInvalidContinue)
	}
	key := c.StartKey
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	// A key ending in the NUL we append stays as it is under path.Clean.
	if cleaned := path.Clean(key); cleaned != key {
		return "", 0, fmt.Errorf("%w: %v", errInvalidContinue, c.StartKey)
	}
	return prefix + key[1:], c.ResourceVersion, nil
}

// DefaultAttrs returns an object's labels and its metadata.name and
// metadata.namespace fields.
func DefaultAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	return labels.Set(a.GetLabels()), ObjectMetaFields(a), nil
}

// ObjectMetaFields returns the field set every object has.
func ObjectMetaFields(a interface {
	GetName() string
	GetNamespace() string
}) fields.Set {
	f := fields.Set{"metadata.name": a.GetName()}
	if ns := a.GetNamespace(); ns != "" {
		f["metadata.namespace"] = ns
	}
	return f
}
