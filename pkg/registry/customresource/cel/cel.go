package cel

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry/customresource/structural"
)

// Upstream's limits (k8s.io/apiserver/pkg/apis/cel and the CRD validation).
const (
	PerCallLimit                = 1000000
	RuntimeCELCostBudget        = 10000000
	StaticEstimatedCostLimit    = 10000000
	StaticEstimatedCRDCostLimit = 100000000
	MaxRequestSizeBytes         = 3 * 1024 * 1024
	maxMessageExpressionBytes   = 5 * 1024
)

// libEnv is upstream's base environment without variables; rules get self
// and oldSelf typed from their schema node (typed.go).
var libEnv = func() *cel.Env {
	env, err := cel.NewEnv(
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.Lists(ext.ListsVersion(3)),
		ext.TwoVarComprehensions(),
		kubernetesLibrary(),
		cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
	)
	if err != nil {
		panic(err)
	}
	return env
}()

// rule is one compiled x-kubernetes-validations entry.
type rule struct {
	src         apiextensionsv1.ValidationRule
	prog        cel.Program
	msg         cel.Program
	usesOldSelf bool
	maxCost     uint64
	msgMaxCost  uint64
	fieldPath   string
	err         string // compile error (rules that failed at CRD time never run)
	msgError    string // messageExpression compile error
}

// node mirrors the schema with the rules of each level.
type node struct {
	schema     *structural.Node
	rules      []*rule
	props      map[string]*node
	items      *node
	additional *node
	hasRules   bool // here or below
}

// Validator evaluates the rules of one schema.
type Validator struct {
	root *node
}

// internalRule prints like upstream's internal apiextensions.ValidationRule
// in field errors.
type internalRule struct {
	Rule              string
	Message           string
	MessageExpression string
	Reason            *apiextensionsv1.FieldValueErrorReason
	FieldPath         string
	OptionalOldSelf   *bool
}

func toInternal(r apiextensionsv1.ValidationRule) internalRule {
	return internalRule{Rule: r.Rule, Message: r.Message, MessageExpression: r.MessageExpression, Reason: r.Reason, FieldPath: r.FieldPath, OptionalOldSelf: r.OptionalOldSelf}
}

// Compile compiles every rule of the schema rooted at root. The errors are
// those of the CRD (paths under schemaPath, e.g.
// spec.validation.openAPIV3Schema). The Validator is nil when the schema
// has no rules; a nil Validator validates nothing.
func Compile(root *structural.Node, schemaPath *field.Path) (*Validator, field.ErrorList) {
	c := &compiler{types: newSchemaTypes(root)}
	one := uint64(1)
	n := c.compile(root, schemaPath, &one, true, nil)
	if c.total > StaticEstimatedCRDCostLimit {
		for _, e := range c.expensive {
			c.errs = append(c.errs, field.Forbidden(e.path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"))
		}
		c.errs = append(c.errs, field.Forbidden(schemaPath, costErrorMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", c.total, StaticEstimatedCRDCostLimit)))
	}
	if !n.hasRules {
		// No rules: nothing to run (and, as upstream, no "rules were not
		// checked" error on an object with schema errors).
		return nil, c.errs
	}
	return &Validator{root: n}, c.errs
}

type compiler struct {
	types     *schemaTypes
	errs      field.ErrorList
	total     uint64
	expensive []costed
}

type costed struct {
	path *field.Path
	cost uint64
}

// compile compiles the rules of s and below. uncorrelatable is the path of
// the nearest enclosing list whose items cannot be matched to old ones
// (not list-type map): oldSelf cannot be used under it.
// cardinality is how many times a value of s can occur in an object: the
// product of the declared maxItems/maxProperties of the enclosing lists and
// maps, or nil when one of them is unbounded (then a value can occur as
// often as a request has room for it, as upstream estimates).
func (c *compiler) compile(s *structural.Node, pth *field.Path, cardinality *uint64, root bool, uncorrelatable *field.Path) *node {
	if s == nil {
		return nil
	}
	n := &node{schema: s}
	if s.Source != nil {
		for i, r := range s.Source.XValidations {
			rp := pth.Child("x-kubernetes-validations").Index(i)
			cr := c.compileRule(r, s)
			if cr == nil {
				continue
			}
			if cr.err != "" {
				c.errs = append(c.errs, field.Invalid(rp.Child("rule"), toInternal(r), cr.err))
			} else {
				cost := mulGuard(cr.maxCost, cardinalityOf(s, cardinality))
				if cost > StaticEstimatedCostLimit {
					c.errs = append(c.errs, field.Forbidden(rp.Child("rule"), costErrorMessage("estimated rule cost", cost, StaticEstimatedCostLimit)))
				}
				c.observe(rp.Child("rule"), cost)
			}
			if cr.msg != nil {
				cost := mulGuard(cr.msgMaxCost, cardinalityOf(s, cardinality))
				if cost > StaticEstimatedCostLimit {
					c.errs = append(c.errs, field.Forbidden(rp.Child("messageExpression"), costErrorMessage("estimated messageExpression cost", cost, StaticEstimatedCostLimit)))
				}
				c.observe(rp.Child("messageExpression"), cost)
			}
			if msgErr := cr.msgErr(); msgErr != "" {
				c.errs = append(c.errs, field.Invalid(rp.Child("messageExpression"), toInternal(r), msgErr))
			}
			if cr.usesOldSelf && uncorrelatable != nil {
				c.errs = append(c.errs, field.Invalid(rp.Child("rule"), r.Rule, fmt.Sprintf("oldSelf cannot be used on the uncorrelatable portion of the schema within %v", uncorrelatable)))
			}
			if !cr.usesOldSelf && r.OptionalOldSelf != nil {
				c.errs = append(c.errs, field.Invalid(rp.Child("optionalOldSelf"), *r.OptionalOldSelf, "may not be set if oldSelf is not used in rule"))
			}
			n.rules = append(n.rules, cr)
		}
	}
	n.hasRules = len(n.rules) > 0
	if len(s.Props) > 0 {
		n.props = map[string]*node{}
		for _, k := range sortedKeys(s.Props) {
			if sub := c.compile(s.Props[k], pth.Child("properties").Key(k), cardinality, false, uncorrelatable); sub != nil && sub.hasRules {
				n.props[k] = sub
				n.hasRules = true
			}
		}
	}
	if s.Items != nil {
		itemsUncorrelatable := uncorrelatable
		if itemsUncorrelatable == nil && s.ListType != "map" {
			itemsUncorrelatable = pth
		}
		if sub := c.compile(s.Items, pth.Child("items"), childCardinality(s, cardinality), false, itemsUncorrelatable); sub != nil && sub.hasRules {
			n.items, n.hasRules = sub, true
		}
	}
	if s.Additional != nil {
		if sub := c.compile(s.Additional, pth.Child("additionalProperties"), childCardinality(s, cardinality), false, uncorrelatable); sub != nil && sub.hasRules {
			n.additional, n.hasRules = sub, true
		}
	}
	return n
}

// observe adds an expression's cost to the schema's total and keeps the
// four most expensive (upstream's report when the total is exceeded).
func (c *compiler) observe(p *field.Path, cost uint64) {
	c.total = addGuard(c.total, cost)
	c.expensive = append(c.expensive, costed{p, cost})
	sort.SliceStable(c.expensive, func(i, j int) bool { return c.expensive[i].cost > c.expensive[j].cost })
	if len(c.expensive) > 4 {
		c.expensive = c.expensive[:4]
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// childCardinality is the cardinality of the items (or map values) of s.
func childCardinality(s *structural.Node, cardinality *uint64) *uint64 {
	if cardinality == nil || s.Source == nil {
		return nil
	}
	var limit *int64
	switch s.Type {
	case "array":
		limit = s.Source.MaxItems
	case "object":
		limit = s.Source.MaxProperties
	}
	if limit == nil {
		return nil
	}
	out := mulGuard(*cardinality, uint64(*limit))
	return &out
}

// cardinalityOf is the bounded cardinality, or what a request has room
// for when unbounded.
func cardinalityOf(s *structural.Node, cardinality *uint64) uint64 {
	if cardinality != nil {
		return *cardinality
	}
	return MaxRequestSizeBytes / (minSerializedSize(s) + 1)
}

func mulGuard(a, b uint64) uint64 {
	if a == 0 || b == 0 {
		return 0
	}
	if math.MaxUint64/a < b {
		return math.MaxUint64
	}
	return a * b
}

func addGuard(a, b uint64) uint64 {
	if math.MaxUint64-a < b {
		return math.MaxUint64
	}
	return a + b
}

func costErrorMessage(name string, cost, limit uint64) string {
	f := float64(cost) / float64(limit)
	var factor string
	switch {
	case f > 100:
		factor = "more than 100x"
	case f < 1.5:
		factor = fmt.Sprintf("%fx", f)
	default:
		factor = fmt.Sprintf("%.1fx", f)
	}
	return fmt.Sprintf("%s exceeds budget by factor of %s (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", name, factor)
}

func (r *rule) msgErr() string { return r.msgError }

func (c *compiler) compileRule(r apiextensionsv1.ValidationRule, s *structural.Node) *rule {
	out := &rule{src: r, fieldPath: normalizeFieldPath(s, r.FieldPath)}
	if strings.TrimSpace(r.Rule) == "" {
		return nil // reported by the CRD validation
	}
	est := &estimator{root: s}
	baseEnv, err := c.types.envFor(s)
	if err != nil {
		out.err = "unexpected compilation error: " + err.Error()
		return out
	}
	ast, iss := baseEnv.Compile(r.Rule)
	if iss.Err() != nil {
		out.err = "compilation failed: " + iss.String()
		return out
	}
	if t := ast.OutputType(); t != cel.BoolType && t != cel.DynType {
		out.err = "cel expression must evaluate to a bool"
		return out
	}
	out.usesOldSelf = usesVar(ast, "oldSelf")
	prog, err := baseEnv.Program(ast, cel.CostLimit(PerCallLimit), cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
		cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)), cel.InterruptCheckFrequency(100))
	if err != nil {
		out.err = "program instantiation failed: " + err.Error()
		return out
	}
	out.prog = prog
	if cost, err := baseEnv.EstimateCost(ast, est); err == nil {
		out.maxCost = cost.Max
	} else {
		out.err = "cost estimation failed: " + err.Error()
		return out
	}
	if me := strings.TrimSpace(r.MessageExpression); me != "" {
		mast, iss := baseEnv.Compile(me)
		switch {
		case iss.Err() != nil:
			out.msgError = "messageExpression compilation failed: " + iss.String()
		case mast.OutputType() != cel.StringType && mast.OutputType() != cel.DynType:
			out.msgError = "messageExpression must evaluate to a string"
		default:
			mprog, err := baseEnv.Program(mast, cel.CostLimit(PerCallLimit), cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
				cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)), cel.InterruptCheckFrequency(100))
			if err != nil {
				out.msgError = "messageExpression instantiation failed: " + err.Error()
				break
			}
			out.msg = mprog
			if cost, err := baseEnv.EstimateCost(mast, est); err == nil {
				out.msgMaxCost = cost.Max
			}
		}
	}
	return out
}

// usesVar reports whether a checked expression refers to the variable.
func usesVar(a *cel.Ast, name string) bool {
	for _, ref := range a.NativeRep().ReferenceMap() {
		if ref.Name == name {
			return true
		}
	}
	return false
}

// estimator sizes the values a rule refers to from the schema (upstream's
// estimates: maxLength/maxItems/maxProperties, else what a 3 MiB request
// can hold).
type estimator struct {
	root *structural.Node
}

func (e *estimator) EstimateSize(el checker.AstNode) *checker.SizeEstimate {
	path := el.Path()
	if len(path) == 0 {
		// string() of a number, bool, timestamp or duration is short.
		if e := el.Expr(); e != nil && e.Kind() == ast.CallKind && e.AsCall().FunctionName() == "string" {
			return &checker.SizeEstimate{Min: 0, Max: 40}
		}
		return nil
	}
	if path[0] != "self" && path[0] != "oldSelf" {
		return nil
	}
	n := e.root
	for _, step := range path[1:] {
		if n == nil {
			return nil
		}
		switch step {
		case "@items", "@keys", "@values":
			switch {
			case n.Items != nil:
				n = n.Items
			case n.Additional != nil && step != "@keys":
				n = n.Additional
			default:
				return &checker.SizeEstimate{Min: 0, Max: maxStringLen(nil)}
			}
		default:
			if p, ok := unescape(n, step); ok {
				n = p
			} else if n.Additional != nil {
				n = n.Additional
			} else {
				return nil
			}
		}
	}
	if n == nil {
		return nil
	}
	switch n.Type {
	case "string", "":
		return &checker.SizeEstimate{Min: 0, Max: maxStringLen(n)}
	case "array", "object":
		return &checker.SizeEstimate{Min: 0, Max: maxElements(n)}
	}
	// Scalars have a size of one.
	return &checker.SizeEstimate{Min: 1, Max: 1}
}

func (e *estimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	// Comparing ip, cidr, url and quantity values is constant work.
	if function == "_==_" || function == "_!=_" {
		for _, a := range args {
			if t := a.Type(); t != nil {
				switch t.TypeName() {
				case ipType.TypeName(), cidrType.TypeName(), urlType.TypeName(), quantityType.TypeName():
					return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: 1}}
				}
			}
		}
	}
	return nil
}

func maxStringLen(n *structural.Node) uint64 {
	if n != nil && n.Source != nil && n.Source.MaxLength != nil {
		return uint64(*n.Source.MaxLength)
	}
	// A string of a request holds at most its size, less the quotes.
	return MaxRequestSizeBytes - 2
}

// minSerializedSize is the smallest JSON form of a value of n's type.
func minSerializedSize(n *structural.Node) uint64 {
	if n == nil {
		return 1
	}
	switch n.Type {
	case "string":
		if n.Source != nil && n.Source.MinLength != nil {
			return uint64(*n.Source.MinLength) + 2
		}
		return 2
	case "boolean":
		return 4
	case "integer", "number":
		return 1
	case "array", "object":
		return 2
	}
	return 1
}

// maxElements is the most items (or properties) a list (or map) of n can
// have.
func maxElements(n *structural.Node) uint64 {
	if n == nil || n.Source == nil {
		return MaxRequestSizeBytes
	}
	switch n.Type {
	case "array":
		if n.Source.MaxItems != nil {
			return uint64(*n.Source.MaxItems)
		}
		return (MaxRequestSizeBytes - 2) / (minSerializedSize(n.Items) + 1)
	case "object":
		if n.Source.MaxProperties != nil {
			return uint64(*n.Source.MaxProperties)
		}
		if n.Additional != nil {
			// "k":v, at least 4 bytes plus the value.
			return (MaxRequestSizeBytes - 2) / (minSerializedSize(n.Additional) + 4)
		}
		return uint64(len(n.Props)) + 1
	}
	return 1
}

// Validate evaluates every rule on obj (old: the stored object on update,
// nil on create). It reports failures as upstream does.
func (v *Validator) Validate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	if v == nil || v.root == nil || !v.root.hasRules {
		return nil
	}
	var oldV any
	if old != nil {
		oldV = old
	}
	errs, _ := v.root.validate(ctx, nil, obj, oldV, RuntimeCELCostBudget)
	return errs
}

func typeName(n *structural.Node, x any) string {
	if n != nil && n.Type != "" {
		return n.Type
	}
	switch x.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64:
		return "integer"
	case float64:
		return "number"
	}
	return ""
}

func (n *node) validate(ctx context.Context, pth *field.Path, x, old any, budget int64) (field.ErrorList, int64) {
	if n == nil || x == nil {
		return nil, budget
	}
	var errs field.ErrorList
	if len(n.rules) > 0 {
		var e field.ErrorList
		e, budget = n.evalRules(ctx, pth, x, old, budget)
		errs = append(errs, e...)
		if budget < 0 {
			return errs, budget
		}
	}
	switch x := x.(type) {
	case map[string]any:
		oldMap, _ := old.(map[string]any)
		mt := n.schema.MapType
		correlatable := mt == "" || mt == "granular" || mt == "atomic"
		for _, k := range sortedKeys(x) {
			var child *node
			var cp *field.Path
			if p, ok := n.props[k]; ok {
				child, cp = p, pth.Child(k)
			} else if n.additional != nil && n.schema.Props[k] == nil {
				child, cp = n.additional, pth.Key(k)
			}
			if child == nil {
				continue
			}
			var ov any
			if correlatable && oldMap != nil {
				ov = oldMap[k]
			}
			var e field.ErrorList
			e, budget = child.validate(ctx, cp, x[k], ov, budget)
			errs = append(errs, e...)
			if budget < 0 {
				return errs, budget
			}
		}
	case []any:
		if n.items == nil {
			break
		}
		oldList, _ := old.([]any)
		for i, item := range x {
			var ov any
			if n.schema.ListType == "map" {
				ov = findByKeys(oldList, item, n.schema.ListMapKeys)
			}
			var e field.ErrorList
			e, budget = n.items.validate(ctx, pth.Index(i), item, ov, budget)
			errs = append(errs, e...)
			if budget < 0 {
				return errs, budget
			}
		}
	}
	return errs, budget
}

// findByKeys finds the old item of a list-type map with item's keys.
func findByKeys(old []any, item any, keys []string) any {
	m, ok := item.(map[string]any)
	if !ok {
		return nil
	}
	for _, o := range old {
		om, ok := o.(map[string]any)
		if !ok {
			continue
		}
		match := true
		for _, k := range keys {
			a, _ := json.Marshal(m[k])
			b, _ := json.Marshal(om[k])
			if string(a) != string(b) {
				match = false
				break
			}
		}
		if match {
			return o
		}
	}
	return nil
}

type activation struct {
	self, oldSelf any
	hasOld        bool
}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "self":
		return types.DefaultTypeAdapter.NativeToValue(a.self), true
	case "oldSelf":
		if !a.hasOld {
			return nil, false
		}
		return types.DefaultTypeAdapter.NativeToValue(a.oldSelf), true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

func (n *node) evalRules(ctx context.Context, pth *field.Path, x, old any, budget int64) (field.ErrorList, int64) {
	var errs field.ErrorList
	typ := typeName(n.schema, x)
	act := &activation{self: toCEL(x, n.schema), hasOld: old != nil}
	if old != nil {
		act.oldSelf = toCEL(old, n.schema)
	}
	for _, r := range n.rules {
		if r.err != "" {
			errs = append(errs, field.Invalid(pth, typ, "rule compile error: "+r.err))
			continue
		}
		optionalOld := r.src.OptionalOldSelf != nil && *r.src.OptionalOldSelf
		if r.usesOldSelf && old == nil && !optionalOld {
			continue
		}
		ruleAct := interpreter.Activation(act)
		if optionalOld {
			ruleAct = &optionalActivation{act}
		}
		val, det, err := r.prog.ContextEval(ctx, ruleAct)
		if det == nil || det.ActualCost() == nil {
			errs = append(errs, field.Invalid(pth, typ, fmt.Sprintf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleErrorString(r.src))))
			return errs, -1
		}
		if c := *det.ActualCost(); c > math.MaxInt64 || int64(c) > budget {
			errs = append(errs, field.Invalid(pth, typ, "validation failed due to running out of cost budget, no further validation rules will be run"))
			return errs, -1
		} else {
			budget -= int64(c)
		}
		if err != nil {
			switch {
			case strings.HasPrefix(err.Error(), "no such overload"):
				errs = append(errs, field.Invalid(pth, typ, fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %v", err, ruleErrorString(r.src))))
			case strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded"):
				errs = append(errs, field.Invalid(pth, typ, fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %v", err, ruleErrorString(r.src))))
				return errs, -1
			default:
				errs = append(errs, field.Invalid(pth, typ, fmt.Sprintf("%v evaluating rule: %v", err, ruleErrorString(r.src))))
			}
			continue
		}
		if val == types.True {
			continue
		}
		// Ratcheting (upstream's CRDValidationRatcheting, on by default):
		// a rule that does not use oldSelf does not fail an update that
		// leaves its value as it was.
		if old != nil && !r.usesOldSelf && reflect.DeepEqual(x, old) {
			continue
		}
		cur := pth
		if r.fieldPath != "" {
			cur = cur.Child(r.fieldPath)
		}
		detail, ok := "", false
		if r.msg != nil {
			d, b, stop, msgErr := evalMessage(ctx, r, act, budget)
			budget = b
			if msgErr != "" && stop {
				errs = append(errs, field.Invalid(cur, typ, msgErr))
				return errs, -1
			}
			if msgErr == "" {
				detail, ok = d, true
			}
		}
		if !ok {
			detail = ruleMessageOrDefault(r.src)
		}
		var value any = x
		if typ == "object" || typ == "array" {
			value = field.OmitValueType{}
		}
		errs = append(errs, fieldErrorForReason(cur, value, detail, r.src.Reason))
	}
	return errs, budget
}

type optionalActivation struct{ *activation }

func (a *optionalActivation) ResolveName(name string) (any, bool) {
	if name == "oldSelf" {
		if !a.hasOld {
			return types.OptionalNone, true
		}
		return types.OptionalOf(types.DefaultTypeAdapter.NativeToValue(a.oldSelf)), true
	}
	return a.activation.ResolveName(name)
}

func evalMessage(ctx context.Context, r *rule, act *activation, budget int64) (string, int64, bool, string) {
	val, det, err := r.msg.ContextEval(ctx, act)
	if det == nil || det.ActualCost() == nil {
		return "", -1, true, fmt.Sprintf("runtime cost could not be calculated for messageExpression: %q", r.src.MessageExpression)
	}
	c := *det.ActualCost()
	if c > math.MaxInt64 || int64(c) > budget {
		return "", -1, true, "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"
	}
	budget -= int64(c)
	if err != nil {
		if strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded") {
			return "", -1, true, fmt.Sprintf("no further validation rules will be run due to call cost exceeds limit for messageExpression: %q", r.src.MessageExpression)
		}
		return "", budget, false, "messageExpression evaluation failed due to: " + err.Error()
	}
	s, ok := val.Value().(string)
	if !ok {
		return "", budget, false, "messageExpression failed to convert to string"
	}
	s = strings.TrimSpace(s)
	switch {
	case len(s) > maxMessageExpressionBytes:
		return "", budget, false, fmt.Sprintf("messageExpression beyond allowable length of %d", maxMessageExpressionBytes)
	case strings.Contains(s, "\n"):
		return "", budget, false, "messageExpression should not contain line breaks"
	case s == "":
		return "", budget, false, "messageExpression should evaluate to a non-empty string"
	}
	return s, budget, false, ""
}

func ruleMessageOrDefault(r apiextensionsv1.ValidationRule) string {
	if r.Message == "" {
		return "failed rule: " + ruleErrorString(r)
	}
	return strings.TrimSpace(r.Message)
}

func ruleErrorString(r apiextensionsv1.ValidationRule) string {
	if r.Message != "" {
		return strings.TrimSpace(r.Message)
	}
	return strings.TrimSpace(r.Rule)
}

func fieldErrorForReason(p *field.Path, value any, detail string, reason *apiextensionsv1.FieldValueErrorReason) *field.Error {
	if reason == nil {
		return field.Invalid(p, value, detail)
	}
	switch *reason {
	case apiextensionsv1.FieldValueForbidden:
		return field.Forbidden(p, detail)
	case apiextensionsv1.FieldValueRequired:
		return field.Required(p, detail)
	case apiextensionsv1.FieldValueDuplicate:
		return field.Duplicate(p, value)
	}
	return field.Invalid(p, value, detail)
}

// normalizeFieldPath turns a rule's fieldPath (".a.b", ".m['k.x']") into
// the field path upstream reports errors at: properties as children, keys
// of additionalProperties maps as keys ("a.b", "m[k.x]").
func normalizeFieldPath(n *structural.Node, p string) string {
	if strings.TrimSpace(p) == "" {
		return ""
	}
	var out *field.Path
	add := func(name string) {
		if n != nil {
			if sub, ok := n.Props[name]; ok {
				out, n = out.Child(name), sub
				return
			}
			if n.Additional != nil {
				out, n = out.Key(name), n.Additional
				return
			}
		}
		out, n = out.Child(name), nil
	}
	for p != "" {
		switch {
		case p[0] == '.':
			p = p[1:]
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			add(p[:end])
			p = p[end:]
		case strings.HasPrefix(p, "['"):
			end := strings.Index(p, "']")
			if end < 0 {
				return strings.TrimPrefix(p, ".")
			}
			add(p[2:end])
			p = p[end+2:]
		default:
			return strings.TrimPrefix(p, ".")
		}
	}
	return out.String()
}
