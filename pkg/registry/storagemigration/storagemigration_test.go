package storagemigration

import (
	"sort"
	"strings"
	"testing"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func expectMessages(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	sort.Strings(got)
	w := append([]string(nil), want...)
	sort.Strings(w)
	ok := len(got) == len(w)
	for i := 0; ok && i < len(w); i++ {
		ok = strings.HasPrefix(got[i], w[i])
	}
	if !ok {
		t.Errorf("errors:\n  got  %q\n  want %q", got, w)
	}
}

func migration() *storagemigrationv1.StorageVersionMigration {
	return &storagemigrationv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "secrets", ResourceVersion: "1"},
		Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "secrets"}}}
}

func cond(t storagemigrationv1.MigrationConditionType, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: s, Reason: "R", LastTransitionTime: metav1.Now()}
}

func TestValidate(t *testing.T) {
	expectMessages(t, Validate(migration()))
	none := migration()
	none.Spec.Resource = metav1.GroupResource{Group: "apps"}
	expectMessages(t, Validate(none), "spec.resource.resource: Required value: resource is required")
	ns := migration()
	ns.Namespace = "default"
	expectMessages(t, Validate(ns), "metadata.namespace: Forbidden: not allowed on this type")

	old := migration()
	moved := old.DeepCopy()
	moved.Spec.Resource = metav1.GroupResource{Group: "apps", Resource: "deployments"}
	expectMessages(t, ValidateUpdate(moved, old),
		`group: Invalid value: "apps": field is immutable`, `resource: Invalid value: "deployments": field is immutable`)
}

func TestValidateStatusUpdate(t *testing.T) {
	running := migration()
	running.Status = storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "42",
		Conditions: []metav1.Condition{cond(storagemigrationv1.MigrationRunning, metav1.ConditionTrue)}}
	succeeded := migration()
	succeeded.Status = storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "42",
		Conditions: []metav1.Condition{cond(storagemigrationv1.MigrationSucceeded, metav1.ConditionTrue)}}
	tests := []struct {
		name     string
		old, new *storagemigrationv1.StorageVersionMigration
		mutate   func(*storagemigrationv1.StorageVersionMigration)
		want     []string
		// suffix: the one error's message after the rendered conditions
		suffix string
	}{
		{name: "start", old: migration(), new: running},
		{name: "finish", old: running, new: succeeded},
		{name: "bad resourceVersion", old: migration(), new: running, mutate: func(m *storagemigrationv1.StorageVersionMigration) { m.Status.ResourceVersion = "x" },
			want: []string{`status.resourceVersion: Invalid value: "x": failed to parse resource version "x": strconv.ParseInt: parsing "x": invalid syntax`}},
		{name: "negative resourceVersion", old: migration(), new: running, mutate: func(m *storagemigrationv1.StorageVersionMigration) { m.Status.ResourceVersion = "-1" },
			want: []string{"status.resourceVersion: Invalid value: -1: must be greater than or equal to 0"}},
		{name: "resourceVersion changed", old: running, new: running, mutate: func(m *storagemigrationv1.StorageVersionMigration) { m.Status.ResourceVersion = "43" },
			want: []string{`status.resourceVersion: Invalid value: "43": field is immutable`}},
		{name: "succeeded and running", old: running, new: running, mutate: func(m *storagemigrationv1.StorageVersionMigration) {
			m.Status.Conditions = append(m.Status.Conditions, cond(storagemigrationv1.MigrationSucceeded, metav1.ConditionTrue))
		}, suffix: "Running condition cannot be true when success condition is true"},
		{name: "success withdrawn", old: succeeded, new: succeeded, mutate: func(m *storagemigrationv1.StorageVersionMigration) {
			m.Status.Conditions[0].Status = metav1.ConditionFalse
		}, suffix: "Success condition cannot be set to false once it is true"},
		{name: "condition without reason", old: migration(), new: running, mutate: func(m *storagemigrationv1.StorageVersionMigration) {
			m.Status.Conditions[0].Reason = ""
		}, want: []string{"status.conditions[0].reason: Required value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.new.DeepCopy()
			if tt.mutate != nil {
				tt.mutate(n)
			}
			errs := ValidateStatusUpdate(n, tt.old)
			if tt.suffix != "" {
				if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "status.conditions: Invalid value: ") || !strings.HasSuffix(errs[0].Error(), tt.suffix) {
					t.Errorf("errors %v, want one at status.conditions ending %q", errs, tt.suffix)
				}
				return
			}
			expectMessages(t, errs, tt.want...)
		})
	}
}
