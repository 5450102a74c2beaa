package framework

import (
	"errors"
	"strings"
)

// Code is the outcome of running a plugin, as upstream's framework.Code.
type Code int

const (
	// Success: the plugin ran and the pod may go on. A nil *Status is
	// Success too.
	Success Code = iota
	// Error: an internal error; the pod goes back to the queue with
	// back-off and no node is blamed.
	Error
	// Unschedulable: the pod does not fit now; preemption may help.
	Unschedulable
	// UnschedulableAndUnresolvable: the pod does not fit and preempting
	// pods on the node cannot change that.
	UnschedulableAndUnresolvable
	// Wait: a Permit plugin holds the pod.
	Wait
	// Skip: PreFilter/PreScore say the plugin's Filter/Score have nothing
	// to do for this pod; Bind says "not mine, try the next binder".
	Skip
	// Pending: the pod waits for something outside the scheduler (a
	// PreEnqueue gate, or an external condition a plugin waits on).
	Pending
)

var codeNames = [...]string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Unknown"
}

// Status is the result of a plugin: a code, reasons shown to the user
// ("Insufficient cpu"), an optional error, and the plugin that produced
// it. The nil *Status means Success.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus returns a Status with code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{code: code, reasons: reasons}
}

// AsStatus wraps err in an Error status (nil for a nil err).
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, err: err}
}

// Code is the status' code; Success for nil.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// Reasons are the user-facing reasons: the error's message (if any)
// first, then the reasons, as upstream's.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	if s.err != nil {
		return append([]string{s.err.Error()}, s.reasons...)
	}
	return s.reasons
}

// Message joins the reasons with ", ".
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.Reasons(), ", ")
}

// AppendReason adds a reason.
func (s *Status) AppendReason(reason string) { s.reasons = append(s.reasons, reason) }

// Plugin is the plugin that produced the status ("" when unknown).
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin records the producing plugin and returns s.
func (s *Status) WithPlugin(plugin string) *Status {
	if s != nil {
		s.plugin = plugin
	}
	return s
}

// WithError attaches err (for logs) and returns s.
func (s *Status) WithError(err error) *Status {
	if s != nil {
		s.err = err
	}
	return s
}

// IsSuccess reports Success (or nil).
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsWait reports Wait.
func (s *Status) IsWait() bool { return s.Code() == Wait }

// IsSkip reports Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsRejected reports a status that keeps the pod off the node(s):
// Unschedulable, UnschedulableAndUnresolvable or Pending.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable || c == Pending
}

// AsError returns the status as an error (nil for Success, Wait and
// Skip).
func (s *Status) AsError() error {
	if s.IsSuccess() || s.IsWait() || s.IsSkip() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}

// Equal compares code, reasons and plugin (errors by message).
func (s *Status) Equal(o *Status) bool {
	if s == nil || o == nil {
		return s.IsSuccess() && o.IsSuccess()
	}
	if s.code != o.code || s.plugin != o.plugin || len(s.reasons) != len(o.reasons) {
		return false
	}
	for i := range s.reasons {
		if s.reasons[i] != o.reasons[i] {
			return false
		}
	}
	return (s.err == nil) == (o.err == nil) && (s.err == nil || s.err.Error() == o.err.Error())
}

func (s *Status) String() string {
	if s == nil {
		return "Success"
	}
	m := s.Message()
	if s.plugin != "" {
		return s.code.String() + " (" + s.plugin + "): " + m
	}
	return s.code.String() + ": " + m
}

// ErrNotFound is returned by CycleState.Read for a missing key.
var ErrNotFound = errors.New("not found")
