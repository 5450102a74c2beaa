package gc

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Upstream's periods.
const (
	ContainerGCPeriod = time.Minute
	ImageGCPeriod     = 5 * time.Minute
)

// Run collects containers every period until ctx ends (Collect at each
// tick).
func (g *ContainerGC) Run(ctx context.Context, period time.Duration, event func(eventtype, reason, message string), log *slog.Logger) {
	t := g.Clock.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		g.Collect(ctx, event, log)
	}
}

// Collect is one round of Run: a failure records ContainerGCFailed
// (upstream's StartGarbageCollection).
func (g *ContainerGC) Collect(ctx context.Context, event func(eventtype, reason, message string), log *slog.Logger) {
	if err := g.GarbageCollect(ctx); err != nil && ctx.Err() == nil {
		log.Warn("container garbage collection failed", "err", err)
		if event != nil {
			event(corev1.EventTypeWarning, ReasonContainerGCFailed, err.Error())
		}
	}
}

// Run collects images every period until ctx ends (Collect at each tick).
func (g *ImageGC) Run(ctx context.Context, period time.Duration, log *slog.Logger) {
	t := g.Clock.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		g.Collect(ctx, log)
	}
}

// Collect is one round of Run: a failure twice in a row records
// ImageGCFailed (the first may be stats not being ready yet, as upstream
// says). Rounds do not overlap.
func (g *ImageGC) Collect(ctx context.Context, log *slog.Logger) {
	err := g.GarbageCollect(ctx)
	if err == nil || ctx.Err() != nil {
		g.failed = false
		return
	}
	if g.failed {
		log.Warn("image garbage collection failed multiple times in a row", "err", err)
		g.event(corev1.EventTypeWarning, ReasonImageGCFailed, err.Error())
	} else {
		log.Info("image garbage collection failed once; stats initialization may not have completed yet", "err", err)
	}
	g.failed = true
}
