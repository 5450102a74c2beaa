package bootstrappolicy

import rbacv1 "k8s.io/api/rbac/v1"

// Skiff's own additions to the bootstrap policy, for the controllers skiff
// has and upstream does not. They are not upstream's (policy_test.go
// compares only the upstream functions) and carry the same label and
// annotation, so that they are reconciled the same way.

// LocalPathProvisionerServiceAccount is the service account (in
// kube-system) of skiff's local-path provisioner when the controller
// manager uses service account credentials.
const LocalPathProvisionerServiceAccount = "local-path-provisioner"

// KubeletAPIClientUser is the identity of the API server's client
// certificate toward kubelets (kubeadm's apiserver-kubelet-client CN).
const KubeletAPIClientUser = "kube-apiserver-kubelet-client"

// SkiffClusterRoles returns the ClusterRoles of skiff's own controllers.
func SkiffClusterRoles() []rbacv1.ClusterRole {
	return []rbacv1.ClusterRole{
		// The local-path provisioner: upstream's
		// system:persistent-volume-provisioner (for external provisioners)
		// plus creating its StorageClass, which it ensures at start.
		clusterRole("skiff:local-path-provisioner",
			rule("create", "delete", "get", "list", "watch").groups("").resources("persistentvolumes"),
			rule("get", "list", "watch", "update").groups("").resources("persistentvolumeclaims"),
			rule(read...).groups("storage.k8s.io").resources("storageclasses"),
			rule("create").groups("storage.k8s.io").resources("storageclasses"),
			rule("watch").groups("").resources("events"),
			eventsRule(),
		),
	}
}

// SkiffClusterRoleBindings binds SkiffClusterRoles to their controllers'
// service accounts, and the API server's kubelet client to
// system:kubelet-api-admin.
func SkiffClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	return []rbacv1.ClusterRoleBinding{
		clusterRoleBinding("skiff:local-path-provisioner", serviceAccount(ControllerNamespace, LocalPathProvisionerServiceAccount)),
		// The API server's kubelet client (logs, exec, attach,
		// port-forward, nodes/proxy) may use every kubelet API, as
		// upstream's system:kubelet-api-admin allows (kubeadm makes that
		// identity a cluster admin instead; this is the least it needs).
		{ObjectMeta: objectMeta("", "skiff:kube-apiserver-kubelet-client"),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:kubelet-api-admin"},
			Subjects: []rbacv1.Subject{user(KubeletAPIClientUser)}},
	}
}
