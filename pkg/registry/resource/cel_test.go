package resource

import "testing"

func TestCompileSelector(t *testing.T) {
	tests := []struct {
		expr, want string
	}{
		{expr: `device.driver == "gpu.example.com"`},
		{expr: `device.attributes["gpu.example.com"].model == "a100" && device.attributes["gpu.example.com"].memory > 16`},
		{expr: `device.capacity["gpu.example.com"].memory.compareTo(quantity("16Gi")) >= 0`},
		{expr: `device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.3"))`},
		{expr: `"gpu.example.com" in device.attributes && device.allowMultipleAllocations`},
		{expr: `device.attributes["dra.example.com"].model.matches("^a1.*")`},
		{expr: ``, want: "compilation failed: ERROR: <input>:1:0: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
		{expr: `device.driver ==`, want: "compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>'"},
		{expr: `dev.driver == "x"`, want: "compilation failed: ERROR: <input>:1:1: undeclared reference to 'dev' (in container '')"},
		{expr: `"x"`, want: "must evaluate to bool or the unknown type, not string"},
		{expr: `device.driver`, want: "must evaluate to bool or the unknown type, not string"},
		{expr: `device.drivr == "x"`, want: "compilation failed: ERROR: <input>:1:7: undefined field 'drivr'"},
		{expr: `device.capacity["x"].memory > 1`, want: "compilation failed: ERROR: <input>:1:29: found no matching overload for '_>_' applied to '(kubernetes.Quantity, int)'"},
		{expr: `quantity(1)`, want: "compilation failed: ERROR: <input>:1:9: found no matching overload for 'quantity' applied to '(int)'"},
	}
	for _, tt := range tests {
		got := compileSelector(tt.expr)
		if tt.want == "" && got != "" || tt.want != "" && (len(got) < len(tt.want) || got[:len(tt.want)] != tt.want) {
			t.Errorf("%q: got %q, want %q", tt.expr, got, tt.want)
		}
	}
}
