package customresource

import (
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func namedCRD(name, group string, names apiextensionsv1.CustomResourceDefinitionNames, accepted bool) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	crd.Spec.Group, crd.Spec.Names = group, names
	if accepted {
		crd.Status.AcceptedNames = names
	}
	return crd
}

func TestAcceptNames(t *testing.T) {
	existing := namedCRD("crontabs.example.com", "example.com", apiextensionsv1.CustomResourceDefinitionNames{
		Plural: "crontabs", Singular: "crontab", Kind: "CronTab", ListKind: "CronTabList", ShortNames: []string{"ct"}}, true)
	otherGroup := namedCRD("widgets.other.com", "other.com", apiextensionsv1.CustomResourceDefinitionNames{
		Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}, true)
	names := func(plural, singular, kind string, short ...string) apiextensionsv1.CustomResourceDefinitionNames {
		return apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: singular, Kind: kind, ListKind: kind + "List", ShortNames: short}
	}
	tests := []struct {
		name          string
		crd           *apiextensionsv1.CustomResourceDefinition
		status        apiextensionsv1.ConditionStatus
		reason, msg   string
		established   apiextensionsv1.ConditionStatus
		estReason     string
		acceptedKind  string
		acceptedShort int
	}{
		{"no conflicts", namedCRD("foos.example.com", "example.com", names("foos", "foo", "Foo", "f"), false),
			apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found", apiextensionsv1.ConditionTrue, "InitialNamesAccepted", "Foo", 1},
		{"same names in another group", namedCRD("widgets.example.com", "example.com", names("widgets", "widget", "Widget"), false),
			apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found", apiextensionsv1.ConditionTrue, "InitialNamesAccepted", "Widget", 0},
		{"plural conflict", namedCRD("crontabs.example.com2", "example.com", names("crontabs", "other", "Other"), false),
			apiextensionsv1.ConditionFalse, "PluralConflict", `"crontabs" is already in use`, apiextensionsv1.ConditionFalse, "NotAccepted", "Other", 0},
		{"singular vs short name", namedCRD("bars.example.com", "example.com", names("bars", "ct", "Bar"), false),
			apiextensionsv1.ConditionFalse, "SingularConflict", `"ct" is already in use`, apiextensionsv1.ConditionFalse, "NotAccepted", "Bar", 0},
		{"short name conflict", namedCRD("bars.example.com", "example.com", names("bars", "bar", "Bar", "b", "ct"), false),
			apiextensionsv1.ConditionFalse, "ShortNamesConflict", `"ct" is already in use`, apiextensionsv1.ConditionFalse, "NotAccepted", "Bar", 0},
		{"kind conflict", namedCRD("bars.example.com", "example.com", names("bars", "bar", "CronTab"), false),
			apiextensionsv1.ConditionFalse, "ListKindConflict", `"CronTabList" is already in use`, apiextensionsv1.ConditionFalse, "NotAccepted", "", 0},
		{"own names stay accepted", existing,
			apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found", apiextensionsv1.ConditionTrue, "InitialNamesAccepted", "CronTab", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			all := []*apiextensionsv1.CustomResourceDefinition{existing, otherGroup, tc.crd}
			got, cond, est := AcceptNames(tc.crd, all)
			if cond.Status != tc.status || cond.Reason != tc.reason || cond.Message != tc.msg {
				t.Errorf("NamesAccepted = %s/%s/%q", cond.Status, cond.Reason, cond.Message)
			}
			if est.Status != tc.established || est.Reason != tc.estReason {
				t.Errorf("Established = %s/%s", est.Status, est.Reason)
			}
			if got.Kind != tc.acceptedKind || len(got.ShortNames) != tc.acceptedShort {
				t.Errorf("accepted names = %+v", got)
			}
		})
	}
}

func TestSetConditionAndMarkTerminating(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	crd := &apiextensionsv1.CustomResourceDefinition{}
	c := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse, Reason: "A"}
	if !SetCondition(crd, c, t0) || SetCondition(crd, c, t1) {
		t.Fatal("SetCondition change reporting")
	}
	c.Reason = "B"
	SetCondition(crd, c, t1)
	if got := FindCondition(crd, apiextensionsv1.Established); got.LastTransitionTime != t0 || got.Reason != "B" {
		t.Errorf("same status must keep the transition time: %+v", got)
	}
	c.Status = apiextensionsv1.ConditionTrue
	SetCondition(crd, c, t1)
	if got := FindCondition(crd, apiextensionsv1.Established); got.LastTransitionTime != t1 || !IsTrue(crd, apiextensionsv1.Established) {
		t.Errorf("status change must move the transition time: %+v", got)
	}

	if !MarkTerminating(crd, t1) || len(crd.Finalizers) != 1 || crd.Finalizers[0] != CleanupFinalizer {
		t.Fatalf("first delete: finalizers %v", crd.Finalizers)
	}
	if got := FindCondition(crd, apiextensionsv1.Terminating); got == nil || got.Reason != "InstanceDeletionPending" ||
		got.Message != "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon" {
		t.Errorf("Terminating = %+v", got)
	}
	// Once the controller removed the finalizer, nothing brings it back.
	crd.Finalizers = nil
	if MarkTerminating(crd, t1) || len(crd.Finalizers) != 0 {
		t.Errorf("finalizer re-added: %v", crd.Finalizers)
	}
}
