package bootstrappolicy

import rbacv1 "k8s.io/api/rbac/v1"

// NamespaceRoles returns upstream's bootstrap Roles by namespace.
func NamespaceRoles() map[string][]rbacv1.Role {
	return byNamespace([]rbacv1.Role{
		role("kube-public", "system:controller:bootstrap-signer",
			rule(read...).groups("").resources("configmaps"),
			rule("update").groups("").resources("configmaps").names("cluster-info"),
			eventsRule(),
		),
		role("kube-system", "extension-apiserver-authentication-reader",
			rule(read...).groups("").resources("configmaps").names("extension-apiserver-authentication"),
		),
		role("kube-system", "system::leader-locking-kube-controller-manager",
			rule("watch").groups("").resources("configmaps"),
			rule("get", "update").groups("").resources("configmaps").names("kube-controller-manager"),
			rule("create", "get", "list", "update", "watch").groups("coordination.k8s.io").resources("leases"),
			rule("create", "get", "list", "update", "watch").groups("coordination.k8s.io").resources("leasecandidates"),
		),
		role("kube-system", "system::leader-locking-kube-scheduler",
			rule("watch").groups("").resources("configmaps"),
			rule("get", "update").groups("").resources("configmaps").names("kube-scheduler"),
			rule("create", "get", "list", "update", "watch").groups("coordination.k8s.io").resources("leases"),
			rule("create", "get", "list", "update", "watch").groups("coordination.k8s.io").resources("leasecandidates"),
		),
		role("kube-system", "system:controller:bootstrap-signer",
			rule(read...).groups("").resources("secrets"),
		),
		role("kube-system", "system:controller:cloud-provider",
			rule("create", "get", "list", "watch").groups("").resources("configmaps"),
		),
		role("kube-system", "system:controller:token-cleaner",
			rule("delete", "get", "list", "watch").groups("").resources("secrets"),
			eventsRule(),
		),
	}, func(r rbacv1.Role) string { return r.Namespace })
}

// NamespaceRoleBindings returns upstream's bootstrap RoleBindings by
// namespace.
func NamespaceRoleBindings() map[string][]rbacv1.RoleBinding {
	return byNamespace([]rbacv1.RoleBinding{
		roleBinding("kube-public", "system:controller:bootstrap-signer", "system:controller:bootstrap-signer", serviceAccount("kube-system", "bootstrap-signer")),
		roleBinding("kube-system", "system::extension-apiserver-authentication-reader", "extension-apiserver-authentication-reader", user("system:kube-controller-manager"), user("system:kube-scheduler")),
		roleBinding("kube-system", "system::leader-locking-kube-controller-manager", "system::leader-locking-kube-controller-manager", user("system:kube-controller-manager"), serviceAccount("kube-system", "kube-controller-manager"), serviceAccount("kube-system", "leader-election-controller")),
		roleBinding("kube-system", "system::leader-locking-kube-scheduler", "system::leader-locking-kube-scheduler", user("system:kube-scheduler"), serviceAccount("kube-system", "kube-scheduler")),
		roleBinding("kube-system", "system:controller:bootstrap-signer", "system:controller:bootstrap-signer", serviceAccount("kube-system", "bootstrap-signer")),
		roleBinding("kube-system", "system:controller:cloud-provider", "system:controller:cloud-provider", serviceAccount("kube-system", "cloud-provider")),
		roleBinding("kube-system", "system:controller:token-cleaner", "system:controller:token-cleaner", serviceAccount("kube-system", "token-cleaner")),
	}, func(b rbacv1.RoleBinding) string { return b.Namespace })
}

func byNamespace[T any](objs []T, ns func(T) string) map[string][]T {
	out := map[string][]T{}
	for _, o := range objs {
		out[ns(o)] = append(out[ns(o)], o)
	}
	return out
}
