package admission

import (
	"slices"
	"strings"
	"testing"
)

// The flags as upstream's: defaults, enable/disable in upstream's order
// whatever the order given, unknown and overlapping names refused.
func TestEnabledPlugins(t *testing.T) {
	defaults := []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "TaintNodesByCondition", "PodSecurity",
		"Priority", "DefaultTolerationSeconds", "DefaultStorageClass", "StorageObjectInUseProtection",
		"PersistentVolumeClaimResize", "RuntimeClass", "CertificateApproval", "CertificateSigning", "ClusterTrustBundleAttest",
		"CertificateSubjectRestriction", "DefaultIngressClass", "PodTopologyLabels", "MutatingAdmissionPolicy",
		"MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota"}
	tests := []struct {
		name            string
		enable, disable []string
		want            []string
		wantErr         string
	}{
		{name: "defaults", want: defaults},
		{name: "enable keeps upstream order", enable: []string{"AlwaysDeny", "NamespaceExists"},
			want: slices.Concat(defaults[:1], []string{"NamespaceExists"}, defaults[1:], []string{"AlwaysDeny"})},
		{name: "disable", disable: []string{"ResourceQuota", "PodSecurity"},
			want: slices.DeleteFunc(slices.Clone(defaults), func(s string) bool { return s == "ResourceQuota" || s == "PodSecurity" })},
		{name: "unknown", enable: []string{"Bogus"}, wantErr: `enable-admission-plugins plugin "Bogus" is unknown (valid admission plugins: AlwaysAdmit, NamespaceAutoProvision,`},
		{name: "unknown disabled", disable: []string{"Nope"}, wantErr: `disable-admission-plugins plugin "Nope" is unknown`},
		{name: "overlap", enable: []string{"ResourceQuota"}, disable: []string{"ResourceQuota"},
			wantErr: `[ResourceQuota] in enable-admission-plugins and disable-admission-plugins overlapped`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EnabledPlugins(tt.enable, tt.disable)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
	// The chain holds the implemented ones in that order.
	names, _ := EnabledPlugins([]string{"AlwaysDeny"}, []string{"LimitRanger"})
	c, skipped := NewChainFor(names, Deps{})
	got := c.Plugins()
	if got[0] != "NamespaceLifecycle" || got[len(got)-1] != "AlwaysDeny" || slices.Contains(got, "LimitRanger") || !slices.Contains(got, "ResourceQuota") {
		t.Errorf("chain %v", got)
	}
	if !slices.Contains(skipped, "ClusterTrustBundleAttest") || slices.Contains(skipped, "RuntimeClass") || slices.Contains(skipped, "ResourceQuota") ||
		slices.Contains(skipped, "PersistentVolumeClaimResize") || slices.Contains(skipped, "StorageObjectInUseProtection") {
		t.Errorf("skipped %v", skipped)
	}
}
