package apiserver_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/skiff-sh/skiff/pkg/testenv"
)

// TestListItemsCarryNoTypeMeta: as upstream, a list's items have no kind
// or apiVersion (the list's own kind says what they are), while a GET of
// one object has them.
func TestListItemsCarryNoTypeMeta(t *testing.T) {
	env := testenv.StartT(t)
	c := env.HTTPClient()
	for _, rv := range []string{"", "0"} {
		resp, err := c.Get(env.URL + "/api/v1/namespaces?resourceVersion=" + rv)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var list struct {
			Kind, APIVersion string
			Items            []map[string]any
		}
		if err := json.Unmarshal(body, &list); err != nil {
			t.Fatalf("rv=%q: %v: %s", rv, err, body)
		}
		if list.Kind != "NamespaceList" || list.APIVersion != "v1" || len(list.Items) < 4 {
			t.Fatalf("rv=%q: %s %s with %d items", rv, list.Kind, list.APIVersion, len(list.Items))
		}
		for _, it := range list.Items {
			if _, ok := it["kind"]; ok {
				t.Fatalf("rv=%q: item has kind: %v", rv, it)
			}
			if _, ok := it["apiVersion"]; ok {
				t.Fatalf("rv=%q: item has apiVersion: %v", rv, it)
			}
			if it["metadata"].(map[string]any)["name"] == "" {
				t.Fatalf("item lost its metadata: %v", it)
			}
		}
	}
	resp, err := c.Get(env.URL + "/api/v1/namespaces/default")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), `{"kind":"Namespace","apiVersion":"v1",`) {
		t.Fatalf("single object lacks TypeMeta: %s", body)
	}
}
