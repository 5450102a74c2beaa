package runtime

import (
	"context"
	"sync"
)

// firstError keeps the first error of parallel work and cancels it.
type firstError struct {
	mu     sync.Mutex
	err    error
	cancel context.CancelFunc
}

func newFirstError(cancel context.CancelFunc) *firstError { return &firstError{cancel: cancel} }

func (e *firstError) set(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
		e.cancel()
	}
}

func (e *firstError) get() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}
