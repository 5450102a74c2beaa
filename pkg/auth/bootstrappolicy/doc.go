// Package bootstrappolicy is upstream Kubernetes 1.34's default RBAC policy
// as Go data: the ClusterRoles and ClusterRoleBindings every cluster starts
// with (cluster-admin, admin/edit/view and their system:aggregate-to-*
// parts, system:discovery, system:basic-user, system:public-info-viewer,
// the component roles such as system:kube-scheduler and
// system:kube-controller-manager, system:node, ...), the system:controller:*
// ClusterRoles of the controller manager's controllers bound to their
// kube-system service accounts, and the namespaced Roles/RoleBindings of
// kube-system and kube-public.
//
// ReconcileClusterRole, ReconcileRole, ReconcileClusterRoleBinding and
// ReconcileRoleBinding compute, as pure functions, how a stored bootstrap
// object is completed at start (upstream's union reconciliation: never
// removing what a user added, leaving objects annotated autoupdate=false
// alone); the API server applies them (pkg/apiserver/bootstrap_rbac.go).
// The controller manager uses the
// controller service account names when it runs with
// --use-service-account-credentials.
//
// Invariants:
//   - every object carries the label kubernetes.io/bootstrapping=rbac-defaults
//     and the annotation rbac.authorization.kubernetes.io/autoupdate=true;
//   - the data equals upstream's published policy for the default feature
//     gates (testdata/, compared by policy_test.go), including rules for
//     resources skiff does not serve: rules are only data;
//   - within a rule, verbs, API groups, resources, resource names and
//     non-resource URLs are sorted, as upstream's rule builder leaves them;
//   - each call returns fresh objects the caller may modify.
//
// The package depends only on k8s.io/api, k8s.io/apimachinery and
// pkg/auth/rbac (the rule coverage reconciliation shares with the
// escalation check).
package bootstrappolicy
