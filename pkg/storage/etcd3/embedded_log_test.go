package etcd3

import (
	"errors"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestBenignFilter: only the storage-version monitor's "missing term
// information" error on a fresh member is dropped; the same message with
// another error, and every other entry, reach the log.
func TestBenignFilter(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		err  error
		want bool // logged
	}{
		{"fresh-member noise", "failed to update storage version", errors.New("cannot detect storage schema version: missing term information"), false},
		{"same message, real error", "failed to update storage version", errors.New("disk full"), true},
		{"other message", "failed to publish", errors.New("missing term information"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.ErrorLevel)
			lg := zap.New(benignFilter{core}).With(zap.String("cluster-version", "3.7.0"))
			lg.Error(tt.msg, zap.Error(tt.err))
			if got := logs.Len() == 1; got != tt.want {
				t.Fatalf("logged = %v, want %v", got, tt.want)
			}
		})
	}
}
