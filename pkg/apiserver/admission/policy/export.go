package policy

import (
	"context"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
)

// AuthorizerEnvOptions declare upstream's authorizer and
// authorizer.requestResource variables with the authorizer library, for
// the other admission CEL environments (admission webhooks'
// matchConditions).
func AuthorizerEnvOptions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Variable(varAuthorizer, authorizerType),
		cel.Variable(varRequestResource, resourceCheckType),
		authorizerLibrary(),
	}
}

// AuthorizerVars are the values of the authorizer and
// authorizer.requestResource variables for request a (matched: the
// resource a rule matched); a nil authorizer allows everything, as
// Config.Authorizer.
func AuthorizerVars(ctx context.Context, az authorizer.Authorizer, a *admission.Attributes, matched schema.GroupVersionResource) (authz, requestResource ref.Val) {
	if az == nil {
		az = authorizer.AlwaysAllow{}
	}
	return authorizerVals(ctx, az, a, matched)
}

// AuthorizerVariable and RequestResourceVariable are the names to bind
// AuthorizerVars' values to.
const (
	AuthorizerVariable      = varAuthorizer
	RequestResourceVariable = varRequestResource
)
