package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
)

// Impersonation, as upstream's filter: Impersonate-User (a user, or a
// service account "system:serviceaccount:<ns>:<name>"), Impersonate-Group,
// Impersonate-Uid and Impersonate-Extra-<key> headers make the request act
// as that user once the requester may "impersonate" each of them: users,
// groups and serviceaccounts in core, uids and userextras/<key> in
// authentication.k8s.io. The impersonated user is in system:authenticated
// (system:unauthenticated for system:anonymous) unless a group header
// says otherwise.

// impersonation is one thing the request asks to act as.
type impersonation struct {
	kind      string // ServiceAccount, User, Group, UserExtra, UID
	namespace string
	name      string
	extraKey  string
}

// impersonationRequests reads the impersonation headers in upstream's order
// (user, groups, extras, uid).
func impersonationRequests(h http.Header) ([]impersonation, error) {
	var out []impersonation
	user := h.Get(authenticationv1.ImpersonateUserHeader)
	if user != "" {
		if ns, name, ok := splitServiceAccount(user); ok {
			out = append(out, impersonation{kind: "ServiceAccount", namespace: ns, name: name})
		} else {
			out = append(out, impersonation{kind: "User", name: user})
		}
	}
	other := false
	for _, g := range h.Values(authenticationv1.ImpersonateGroupHeader) {
		other = true
		out = append(out, impersonation{kind: "Group", name: g})
	}
	var extraHeaders []string
	for k := range h {
		if strings.HasPrefix(k, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			extraHeaders = append(extraHeaders, k)
		}
	}
	sort.Strings(extraHeaders)
	for _, k := range extraHeaders {
		other = true
		key := strings.ToLower(k[len(authenticationv1.ImpersonateUserExtraHeaderPrefix):])
		if u, err := url.PathUnescape(key); err == nil {
			key = u
		}
		for _, v := range h[k] {
			out = append(out, impersonation{kind: "UserExtra", name: v, extraKey: key})
		}
	}
	if uid := h.Get(authenticationv1.ImpersonateUIDHeader); uid != "" {
		other = true
		out = append(out, impersonation{kind: "UID", name: uid})
	}
	if other && user == "" {
		return nil, fmt.Errorf("requested %v without impersonating a user", describeImpersonations(out))
	}
	return out, nil
}

func describeImpersonations(l []impersonation) string {
	parts := make([]string, len(l))
	for i, x := range l {
		parts[i] = fmt.Sprintf("{%s %s %s}", x.kind, x.name, x.extraKey)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// splitServiceAccount is upstream's serviceaccount.SplitUsername.
func splitServiceAccount(username string) (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(username, "system:serviceaccount:")
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// impersonate returns the user the request acts as: u itself without
// impersonation headers, else the impersonated user once each impersonation
// is authorized (403 otherwise).
func (s *Server) impersonate(ctx context.Context, r *http.Request, u *User) (*User, error) {
	if len(r.Header) == 0 || !hasImpersonationHeader(r.Header) {
		return u, nil
	}
	reqs, err := impersonationRequests(r.Header)
	if err != nil {
		return nil, &authzInternalError{err: err}
	}
	requester := u.userInfo()
	groupsSpecified := len(r.Header.Values(authenticationv1.ImpersonateGroupHeader)) > 0
	out := &User{}
	var groups []string
	for _, x := range reqs {
		a := authorizer.Attributes{User: requester, Verb: "impersonate", ResourceRequest: true, Namespace: x.namespace, Name: x.name}
		switch x.kind {
		case "ServiceAccount":
			a.APIVersion, a.Resource = "v1", "serviceaccounts"
			out.Name = "system:serviceaccount:" + x.namespace + ":" + x.name
			if !groupsSpecified {
				groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + x.namespace}
			}
		case "User":
			a.APIVersion, a.Resource = "v1", "users"
			out.Name = x.name
		case "Group":
			a.APIVersion, a.Resource = "v1", "groups"
			groups = append(groups, x.name)
		case "UserExtra":
			a.APIGroup, a.APIVersion, a.Resource, a.Subresource = "authentication.k8s.io", "v1", "userextras", x.extraKey
			if out.Extra == nil {
				out.Extra = map[string][]string{}
			}
			out.Extra[x.extraKey] = append(out.Extra[x.extraKey], x.name)
		case "UID":
			a.APIGroup, a.APIVersion, a.Resource = "authentication.k8s.io", "v1", "uids"
			out.UID = x.name
		}
		if s.authorizer == nil {
			continue
		}
		if err := s.authorize(ctx, a); err != nil {
			return nil, err
		}
	}
	if out.Name != authorizer.Anonymous {
		add := true
		for _, g := range groups {
			if g == authorizer.AllAuthenticated || g == authorizer.AllUnauthenticated {
				add = false
			}
		}
		if add {
			groups = append(groups, authorizer.AllAuthenticated)
		}
	} else {
		add := true
		for _, g := range groups {
			if g == authorizer.AllUnauthenticated {
				add = false
			}
		}
		if add {
			groups = append(groups, authorizer.AllUnauthenticated)
		}
	}
	out.Groups = groups
	// The handlers see the request as the impersonated user made it.
	for k := range r.Header {
		if k == authenticationv1.ImpersonateUserHeader || k == authenticationv1.ImpersonateGroupHeader || k == authenticationv1.ImpersonateUIDHeader ||
			strings.HasPrefix(k, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			r.Header.Del(k)
		}
	}
	return out, nil
}

func hasImpersonationHeader(h http.Header) bool {
	for k := range h {
		if strings.HasPrefix(k, "Impersonate-") {
			return true
		}
	}
	return false
}
