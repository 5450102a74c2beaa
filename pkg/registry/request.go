package registry

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
)

type userKey struct{}

// WithUser returns ctx carrying the authenticated user of the request, so
// that a strategy can record who created an object (see
// Strategy.SetRequester). The API server adds it after authentication.
func WithUser(ctx context.Context, u *authenticationv1.UserInfo) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user WithUser put into ctx, or nil.
func UserFrom(ctx context.Context) *authenticationv1.UserInfo {
	u, _ := ctx.Value(userKey{}).(*authenticationv1.UserInfo)
	return u
}
