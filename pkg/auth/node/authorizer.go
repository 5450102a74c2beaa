package node

import (
	"context"
	"errors"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
	"github.com/skiff-sh/skiff/pkg/auth/rbac"
)

// NamespaceNodeLease holds the nodes' heartbeat leases.
const NamespaceNodeLease = "kube-node-lease"

// Authorizer is upstream's Node authorizer over a Graph.
type Authorizer struct {
	graph *Graph
	rules []rbacv1.PolicyRule
}

// New returns the Node authorizer answering from g, with rules (upstream's
// system:node ClusterRole rules) for every request the graph does not
// decide.
func New(g *Graph, rules []rbacv1.PolicyRule) *Authorizer {
	return &Authorizer{graph: g, rules: rules}
}

// Authorize decides a node's request as upstream's NodeAuthorizer (with
// AuthorizeNodeWithSelectors, on by default in 1.34); other users get no
// opinion.
func (z *Authorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	node, isNode := NodeIdentity(a.User)
	if !isNode {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if node == "" {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("unknown node for user %q", a.User.Username), nil
	}
	if a.ResourceRequest {
		switch a.APIGroup {
		case "":
			switch a.Resource {
			case "secrets":
				return z.readNamespaced(node, Secret, &a)
			case "configmaps":
				return z.readNamespaced(node, ConfigMap, &a)
			case "persistentvolumeclaims":
				if a.Subresource == "status" {
					return z.statusUpdate(node, PersistentVolumeClaim, &a)
				}
				return z.get(node, PersistentVolumeClaim, &a)
			case "persistentvolumes":
				return z.get(node, PersistentVolume, &a)
			case "serviceaccounts":
				return z.serviceAccount(node, &a)
			case "nodes":
				return z.node(node, &a)
			case "pods":
				return z.pod(node, &a)
			}
		case "resource.k8s.io":
			switch a.Resource {
			case "resourceclaims":
				return z.get(node, ResourceClaim, &a)
			case "resourceslices":
				return z.resourceSlice(node, &a)
			}
		case "storage.k8s.io":
			switch a.Resource {
			case "volumeattachments":
				return z.get(node, VolumeAttachment, &a)
			case "csinodes":
				return z.csiNode(node, &a)
			}
		case "coordination.k8s.io":
			if a.Resource == "leases" {
				return z.lease(node, &a)
			}
		}
	}
	if rbac.RulesAllow(&a, z.rules) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// RulesFor is upstream's: a node's permissions cannot be enumerated.
func (z *Authorizer) RulesFor(_ context.Context, u *authenticationv1.UserInfo, _ string) ([]authorizationv1.ResourceRule,
	[]authorizationv1.NonResourceRule, bool, error) {
	if _, isNode := NodeIdentity(u); isNode {
		return nil, nil, true, errors.New("node authorizer does not support user rule resolution")
	}
	return nil, nil, false, nil
}

var (
	allow     = authorizer.DecisionAllow
	noOpinion = authorizer.DecisionNoOpinion
)

func (z *Authorizer) statusUpdate(node string, k Kind, a *authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.Verb != "update" && a.Verb != "patch" {
		return noOpinion, "can only get/update/patch this type", nil
	}
	if a.Subresource != "status" {
		return noOpinion, "can only update status subresource", nil
	}
	return z.related(node, k, a)
}

func (z *Authorizer) get(node string, k Kind, a *authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.Verb != "get" {
		return noOpinion, "can only get individual resources of this type", nil
	}
	if a.Subresource != "" {
		return noOpinion, "cannot get subresource", nil
	}
	return z.related(node, k, a)
}

func (z *Authorizer) readNamespaced(node string, k Kind, a *authorizer.Attributes) (authorizer.Decision, string, error) {
	switch a.Verb {
	case "get", "list", "watch":
	default:
		return noOpinion, "can only read resources of this type", nil
	}
	if a.Subresource != "" {
		return noOpinion, "cannot read subresource", nil
	}
	if a.Namespace == "" {
		return noOpinion, "can only read namespaced object of this type", nil
	}
	return z.related(node, k, a)
}

func (z *Authorizer) related(node string, k Kind, a *authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.Name == "" {
		return noOpinion, "No Object name found", nil
	}
	if !z.graph.HasPath(node, k, a.Namespace, a.Name) {
		return noOpinion, fmt.Sprintf("no relationship found between node '%s' and this object", node), nil
	}
	return allow, "", nil
}

func (z *Authorizer) serviceAccount(node string, a *authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.Verb == "get" && a.Subresource == "" {
		// KubeletServiceAccountTokenForCredentialProviders (beta, on in 1.34)
		return z.readNamespaced(node, ServiceAccount, a)
	}
	if a.Verb != "create" || a.Name == "" {
		return noOpinion, "can only create tokens for individual service accounts", nil
	}
	if a.Subresource != "token" {
		return noOpinion, "can only create token subresource of serviceaccount", nil
	}
	return z.related(node, ServiceAccount, a)
}

func (z *Authorizer) lease(node string, a *authorizer.Attributes) (authorizer.Decision, string, error) {
	switch a.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return noOpinion, "can only get, create, update, patch, or delete a node lease", nil
	}
	if a.Namespace != NamespaceNodeLease {
		return noOpinion, fmt.Sprintf("can only access leases in the %q system namespace", NamespaceNodeLease), nil
	}
	if a.Verb != "create" && a.Name != node {
		return noOpinion, "can only access node lease with the same name as the requesting node", nil
	}
	return allow, "", nil
}

func (z *Authorizer) csiNode(node string, a *authorizer.Attributes) (authorizer.Decision, string, error) {
	switch a.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return noOpinion, "can only get, create, update, patch, or delete a CSINode", nil
	}
	if a.Subresource != "" {
		return noOpinion, "cannot authorize CSINode subresources", nil
	}
	if a.Verb != "create" && a.Name != node {
		return noOpinion, "can only access CSINode with the same name as the requesting node", nil
	}
	return allow, "", nil
}

func (z *Authorizer) resourceSlice(node string, a *authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.Subresource != "" {
		return noOpinion, "cannot authorize ResourceSlice subresources", nil
	}
	switch a.Verb {
	case "create":
		return allow, "", nil
	case "get", "update", "patch", "delete":
		return z.related(node, ResourceSlice, a)
	case "watch", "list", "deletecollection":
		if selects(a.FieldSelector, "spec.nodeName", node) {
			return allow, "", nil
		}
		return noOpinion, "can only list/watch/deletecollection resourceslices with nodeName field selector", nil
	}
	return noOpinion, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection", nil
}

func (z *Authorizer) node(node string, a *authorizer.Attributes) (authorizer.Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "create", "update", "patch":
			return allow, "", nil // NodeRestriction admission limits them to the node's own object
		case "get", "list", "watch":
			switch a.Name {
			case node:
				return allow, "", nil
			case "":
				return noOpinion, fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", node), nil
			default:
				return noOpinion, fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", node, a.Name), nil
			}
		}
	case "status":
		if a.Verb == "update" || a.Verb == "patch" {
			return allow, "", nil
		}
	}
	return noOpinion, "", nil
}

func (z *Authorizer) pod(node string, a *authorizer.Attributes) (authorizer.Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "get":
			return z.get(node, Pod, a)
		case "list", "watch":
			if selects(a.FieldSelector, "spec.nodeName", node) {
				return allow, "", nil
			}
			if a.Name != "" {
				return z.related(node, Pod, a)
			}
			return noOpinion, "can only list/watch pods with spec.nodeName field selector", nil
		case "create", "delete":
			return allow, "", nil // NodeRestriction admission limits them to mirror pods
		}
	case "status":
		if a.Verb == "update" || a.Verb == "patch" {
			return allow, "", nil
		}
	case "eviction":
		if a.Verb == "create" {
			return allow, "", nil
		}
	}
	return noOpinion, "", nil
}

// selects reports whether the field selector fs requires field=value.
func selects(fs, field, value string) bool {
	if fs == "" {
		return false
	}
	sel, err := fields.ParseSelector(fs)
	if err != nil {
		return false
	}
	for _, r := range sel.Requirements() {
		if r.Field == field && (r.Operator == selection.Equals || r.Operator == selection.DoubleEquals) && r.Value == value {
			return true
		}
	}
	return false
}
