package jsonpath

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// step is one element of a path.
type step struct {
	kind   stepKind
	name   string // field
	index  int    // index (negative counts from the end)
	filter *filter
}

type stepKind int

const (
	stepField stepKind = iota
	stepIndex
	stepAll
	stepFilter
	stepRecursive
)

// filter is [?(@.path op value)] or [?(@.path)].
type filter struct {
	path  []step
	op    string // "", "==", "!=", "<", ">", "<=", ">="
	value any
}

// Path is a parsed path.
type Path struct {
	src   string
	steps []step
}

// String returns the source of the path.
func (p *Path) String() string { return p.src }

// Parse parses a path with or without surrounding braces.
func Parse(src string) (*Path, error) {
	s := strings.TrimSpace(src)
	if strings.HasPrefix(s, "{") {
		if !strings.HasSuffix(s, "}") {
			return nil, fmt.Errorf("unclosed action")
		}
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	s = strings.TrimPrefix(s, "$")
	steps, rest, err := parseSteps(s, false)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("unrecognized character in action: %q", rest)
	}
	return &Path{src: src, steps: steps}, nil
}

func isIdentChar(c byte) bool {
	return c == '_' || c == '-' || c == '/' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// parseSteps parses steps until the input ends (or, inFilter, until a
// character that cannot continue a path).
func parseSteps(s string, inFilter bool) ([]step, string, error) {
	var steps []step
	for s != "" {
		switch {
		case strings.HasPrefix(s, ".."):
			steps = append(steps, step{kind: stepRecursive})
			s = s[1:]
		case s[0] == '.':
			s = s[1:]
			if s == "" {
				return steps, "", nil
			}
			if s[0] == '[' || s[0] == '.' {
				continue
			}
			if s[0] == '*' {
				steps = append(steps, step{kind: stepAll})
				s = s[1:]
				continue
			}
			i := 0
			for i < len(s) && isIdentChar(s[i]) {
				i++
			}
			if i == 0 {
				return nil, s, fmt.Errorf("invalid field name at %q", s)
			}
			steps = append(steps, step{kind: stepField, name: s[:i]})
			s = s[i:]
		case s[0] == '[':
			end := matchingBracket(s)
			if end < 0 {
				return nil, s, fmt.Errorf("unterminated array")
			}
			st, err := parseBracket(strings.TrimSpace(s[1:end]))
			if err != nil {
				return nil, s, err
			}
			steps = append(steps, st...)
			s = s[end+1:]
		default:
			if inFilter {
				return steps, s, nil
			}
			// A bare leading field name ("spec.replicas").
			if len(steps) == 0 && isIdentChar(s[0]) {
				s = "." + s
				continue
			}
			return steps, s, nil
		}
	}
	return steps, "", nil
}

// matchingBracket returns the index of the ']' closing s[0] == '[',
// skipping quoted strings and nested brackets.
func matchingBracket(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '[':
			depth++
		case c == ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func parseBracket(in string) ([]step, error) {
	switch {
	case in == "*":
		return []step{{kind: stepAll}}, nil
	case strings.HasPrefix(in, "?(") && strings.HasSuffix(in, ")"):
		f, err := parseFilter(strings.TrimSpace(in[2 : len(in)-1]))
		if err != nil {
			return nil, err
		}
		return []step{{kind: stepFilter, filter: f}}, nil
	case len(in) >= 2 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0]:
		var out []step
		// ['a','b'] unions are not supported; a single quoted key is.
		return append(out, step{kind: stepField, name: unquote(in)}), nil
	case strings.Contains(in, ":"):
		return nil, fmt.Errorf("array slices are not supported: [%s]", in)
	}
	n, err := strconv.Atoi(in)
	if err != nil {
		return nil, fmt.Errorf("invalid array index %q", in)
	}
	return []step{{kind: stepIndex, index: n}}, nil
}

func unquote(s string) string {
	if s[0] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return strings.ReplaceAll(s[1:len(s)-1], `\'`, `'`)
}

func parseFilter(in string) (*filter, error) {
	if !strings.HasPrefix(in, "@") {
		return nil, fmt.Errorf("invalid filter %q", in)
	}
	path, rest, err := parseSteps(in[1:], true)
	if err != nil {
		return nil, err
	}
	f := &filter{path: path}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return f, nil
	}
	for _, op := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if strings.HasPrefix(rest, op) {
			f.op = op
			rest = strings.TrimSpace(rest[len(op):])
			break
		}
	}
	if f.op == "" || rest == "" {
		return nil, fmt.Errorf("invalid filter %q", in)
	}
	switch {
	case rest[0] == '\'' || rest[0] == '"':
		if len(rest) < 2 || rest[len(rest)-1] != rest[0] {
			return nil, fmt.Errorf("invalid filter %q", in)
		}
		f.value = unquote(rest)
	case rest == "true" || rest == "false":
		f.value = rest == "true"
	default:
		n, err := strconv.ParseFloat(rest, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid filter value %q", rest)
		}
		f.value = n
	}
	return f, nil
}

// Find returns every value the path selects in obj, in document order.
func (p *Path) Find(obj any) []any {
	return eval(p.steps, []any{obj})
}

func eval(steps []step, cur []any) []any {
	for i, st := range steps {
		var next []any
		switch st.kind {
		case stepRecursive:
			var all []any
			for _, c := range cur {
				all = appendDescendants(all, c)
			}
			return eval(steps[i+1:], all)
		case stepField:
			for _, c := range cur {
				if m, ok := c.(map[string]any); ok {
					if v, ok := m[st.name]; ok {
						next = append(next, v)
					}
				}
			}
		case stepIndex:
			for _, c := range cur {
				if a, ok := c.([]any); ok {
					n := st.index
					if n < 0 {
						n += len(a)
					}
					if n >= 0 && n < len(a) {
						next = append(next, a[n])
					}
				}
			}
		case stepAll:
			for _, c := range cur {
				switch v := c.(type) {
				case []any:
					next = append(next, v...)
				case map[string]any:
					for _, k := range sortedKeys(v) {
						next = append(next, v[k])
					}
				}
			}
		case stepFilter:
			for _, c := range cur {
				items, ok := c.([]any)
				if !ok {
					continue
				}
				for _, it := range items {
					if st.filter.match(it) {
						next = append(next, it)
					}
				}
			}
		}
		cur = next
	}
	return cur
}

func appendDescendants(out []any, v any) []any {
	out = append(out, v)
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			out = appendDescendants(out, t[k])
		}
	case []any:
		for _, e := range t {
			out = appendDescendants(out, e)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func (f *filter) match(item any) bool {
	vals := eval(f.path, []any{item})
	if f.op == "" {
		return len(vals) > 0
	}
	for _, v := range vals {
		if compare(v, f.op, f.value) {
			return true
		}
	}
	return false
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func compare(a any, op string, b any) bool {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		if !ok {
			return op == "!="
		}
		switch op {
		case "==":
			return fa == fb
		case "!=":
			return fa != fb
		case "<":
			return fa < fb
		case ">":
			return fa > fb
		case "<=":
			return fa <= fb
		case ">=":
			return fa >= fb
		}
	}
	switch op {
	case "==":
		return a == b
	case "!=":
		return a != b
	}
	sa, ok1 := a.(string)
	sb, ok2 := b.(string)
	if !ok1 || !ok2 {
		return false
	}
	switch op {
	case "<":
		return sa < sb
	case ">":
		return sa > sb
	case "<=":
		return sa <= sb
	case ">=":
		return sa >= sb
	}
	return false
}

// Format prints a value as kubectl's jsonpath printer does: strings as is,
// numbers and booleans in their JSON form, objects and arrays as JSON.
func Format(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
