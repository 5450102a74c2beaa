package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/skiff-sh/skiff/pkg/component"
	"github.com/skiff-sh/skiff/pkg/scheduler"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// registry is what this scheduler adds to the in-tree plugins.
func registry() framework.Registry {
	return framework.Registry{"Hold": NewHold, "PreferLabel": NewPreferLabel}
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path to a kubeconfig (overrides clientConnection.kubeconfig of --config)")
	configFile := flag.String("config", "artifacts/scheduler-config.yaml", "a KubeSchedulerConfiguration enabling the plugins in a profile")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *configFile, *kubeconfig, logger); err != nil {
		logger.Error("scheduler-plugin failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, configFile, kubeconfig string, logger *slog.Logger) error {
	// 1. The configuration: profiles, their plugins and args, as for
	// upstream's kube-scheduler --config.
	cc, err := config.Load(configFile)
	if err != nil {
		return err
	}
	if kubeconfig != "" {
		cc.ClientConnection.Kubeconfig = kubeconfig
	}
	// 2. The scheduler with the out-of-tree plugins registered.
	s, err := scheduler.New(ctx, scheduler.Config{ComponentConfig: cc, OutOfTreeRegistry: registry(), Logger: logger})
	if err != nil {
		return err
	}
	// 3. Run until ctx ends (leading the Lease named in the config when
	// leader election is on).
	err = s.Run(ctx)
	if errors.Is(err, component.ErrLeaderElectionLost) {
		return err
	}
	return err
}
