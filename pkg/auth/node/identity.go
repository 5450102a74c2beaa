package node

import (
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
)

const (
	// NodesGroup is the group every kubelet identity belongs to.
	NodesGroup = "system:nodes"
	// NodeUserNamePrefix starts a kubelet's user name.
	NodeUserNamePrefix = "system:node:"
)

// NodeIdentity is upstream's default node identifier: a user named
// system:node:<nodeName> in group system:nodes is the node nodeName
// (isNode true; nodeName may be empty for "system:node:"); anyone else is
// not a node.
func NodeIdentity(u *authenticationv1.UserInfo) (nodeName string, isNode bool) {
	if u == nil || !strings.HasPrefix(u.Username, NodeUserNamePrefix) {
		return "", false
	}
	for _, g := range u.Groups {
		if g == NodesGroup {
			return strings.TrimPrefix(u.Username, NodeUserNamePrefix), true
		}
	}
	return "", false
}
