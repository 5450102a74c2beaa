package cluster

import (
	"context"
	"log/slog"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// Joining nodes (kubelet TLS bootstrapping), as `kubeadm init` prepares
// it: a bootstrap token's user (group NodeBootstrapTokenGroup, the group
// `skiff token create` puts its tokens in) may create a node client
// certificate signing request, and the controller manager's approver
// approves it; a node (system:nodes) may renew its own certificate. The
// ClusterRoles are upstream's bootstrap policy; the bindings are kubeadm's
// (names and subjects), created at start when missing and their subjects
// restored when changed, as kubeadm's CreateOrUpdate.

// NodeBootstrapTokenGroup is kubeadm's default extra group of node join
// tokens (kubeadm's NodeBootstrapTokenAuthGroup).
const NodeBootstrapTokenGroup = "system:bootstrappers:kubeadm:default-node-token"

// kubeadmClusterRoleBindings are the bindings kubeadm init creates for
// joining nodes.
func kubeadmClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	bind := func(name, role, group string) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}},
		}
	}
	return []*rbacv1.ClusterRoleBinding{
		bind("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", NodeBootstrapTokenGroup),
		bind("kubeadm:node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", NodeBootstrapTokenGroup),
		bind("kubeadm:node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"),
	}
}

// installKubeadmRBAC creates or restores kubeadmClusterRoleBindings.
func installKubeadmRBAC(ctx context.Context, c *client.Client) error {
	crbs := client.For[*rbacv1.ClusterRoleBinding, *rbacv1.ClusterRoleBindingList](c)
	for _, b := range kubeadmClusterRoleBindings() {
		if err := apply(ctx, crbs, b, func(cur, want *rbacv1.ClusterRoleBinding) {
			cur.Subjects = want.Subjects
		}); err != nil {
			return err
		}
	}
	return nil
}

// runKubeadmRBAC installs the bindings once the API server answers,
// retrying while it settles, then runs until ctx ends (as every in-process
// component: skiff up stops once all of them have returned).
func runKubeadmRBAC(ctx context.Context, c *client.Client, clk clock.Clock, logger *slog.Logger) error {
	for {
		err := installKubeadmRBAC(ctx, c)
		if err == nil {
			// An in-process component runs until the cluster stops: the
			// API server stops once every component has returned (with
			// the others disabled this would be at once).
			<-ctx.Done()
			return nil
		}
		logger.Warn("creating the node bootstrap RBAC bindings", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-clk.After(time.Second):
		}
	}
}
