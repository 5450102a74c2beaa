package registrytest

import (
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FindError reports whether errs holds an error of type typ at path.
func FindError(errs field.ErrorList, path string, typ field.ErrorType) bool {
	for _, e := range errs {
		if e.Field == path && e.Type == typ {
			return true
		}
	}
	return false
}

// ErrorKeys lists errs as sorted "path: type" strings.
func ErrorKeys(errs field.ErrorList) []string {
	got := make([]string, 0, len(errs))
	for _, e := range errs {
		got = append(got, e.Field+": "+e.Type.String())
	}
	sort.Strings(got)
	return got
}

// ExpectErrors fails t unless errs are exactly the "path: type" errors in
// want (in any order).
func ExpectErrors(t testing.TB, errs field.ErrorList, want ...string) {
	t.Helper()
	w := append([]string(nil), want...)
	sort.Strings(w)
	if got := ErrorKeys(errs); strings.Join(got, "\n") != strings.Join(w, "\n") {
		t.Errorf("errors:\n  got  %q\n  want %q\nfull: %v", got, w, errs.ToAggregate())
	}
}
