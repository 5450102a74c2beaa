package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/component"
	"github.com/skiff-sh/skiff/pkg/scheduler"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
)

// newScheduler maps upstream's kube-scheduler flags onto scheduler.Config:
// --config is a KubeSchedulerConfiguration file; the flags upstream keeps
// beside it (--kubeconfig, --leader-elect*, --kube-api-*) override the
// file when given.
func newScheduler(logger func() *slog.Logger) *cobra.Command {
	var (
		configFile string
		kubeconfig string
		qps        float32
		burst      int32
		ctype      string
		le         = component.DefaultLeaderElectionConfig(component.SchedulerName)
		serving    = component.DefaultServingConfig(component.SchedulerSecurePort)
		writeTo    string
	)
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Run the scheduler (skiff's kube-scheduler) against an API server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var cc *config.KubeSchedulerConfiguration
			if configFile != "" {
				var err error
				if cc, err = config.Load(configFile); err != nil {
					return err
				}
			} else {
				cc = config.Default()
			}
			f := cmd.Flags()
			if f.Changed("kubeconfig") {
				cc.ClientConnection.Kubeconfig = kubeconfig
			}
			if f.Changed("kube-api-qps") {
				cc.ClientConnection.QPS = qps
			}
			if f.Changed("kube-api-burst") {
				cc.ClientConnection.Burst = burst
			}
			if f.Changed("kube-api-content-type") {
				cc.ClientConnection.ContentType = ctype
			}
			if f.Changed("leader-elect") {
				cc.LeaderElection.LeaderElect = &le.LeaderElect
			}
			if f.Changed("leader-elect-lease-duration") {
				cc.LeaderElection.LeaseDuration = metav1.Duration{Duration: le.LeaseDuration}
			}
			if f.Changed("leader-elect-renew-deadline") {
				cc.LeaderElection.RenewDeadline = metav1.Duration{Duration: le.RenewDeadline}
			}
			if f.Changed("leader-elect-retry-period") {
				cc.LeaderElection.RetryPeriod = metav1.Duration{Duration: le.RetryPeriod}
			}
			if f.Changed("leader-elect-resource-namespace") {
				cc.LeaderElection.ResourceNamespace = le.ResourceNamespace
			}
			if f.Changed("leader-elect-resource-name") {
				cc.LeaderElection.ResourceName = le.ResourceName
			}
			if err := config.Validate(cc); err != nil {
				return err
			}
			if writeTo != "" {
				data, err := config.Encode(cc)
				if err != nil {
					return err
				}
				return os.WriteFile(writeTo, data, 0o644)
			}
			if cc.ClientConnection.Kubeconfig == "" && kubeconfig == "" {
				return errors.New("--kubeconfig (or clientConnection.kubeconfig in --config) is required")
			}
			ctx, stop := signalContext()
			defer stop()
			s, err := scheduler.New(ctx, scheduler.Config{ComponentConfig: cc, Serving: serving, Logger: logger()})
			if err != nil {
				return err
			}
			err = s.Run(ctx)
			if errors.Is(err, component.ErrLeaderElectionLost) {
				return fmt.Errorf("%w (exiting, as upstream: restart to campaign again)", err)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&configFile, "config", "", "The path to the configuration file (a KubeSchedulerConfiguration, kubescheduler.config.k8s.io/v1).")
	f.StringVar(&writeTo, "write-config-to", "", "If set, write the configuration values to this file and exit.")
	f.StringVar(&kubeconfig, "kubeconfig", "", "path to kubeconfig file with authorization and master location information (overrides clientConnection.kubeconfig of --config)")
	f.Float32Var(&qps, "kube-api-qps", 50, "QPS to use while talking with kubernetes apiserver (overrides clientConnection.qps of --config)")
	f.Int32Var(&burst, "kube-api-burst", 100, "Burst to use while talking with kubernetes apiserver (overrides clientConnection.burst of --config)")
	f.StringVar(&ctype, "kube-api-content-type", "application/vnd.kubernetes.protobuf", "Content type of requests sent to apiserver (overrides clientConnection.contentType of --config)")
	component.AddLeaderElectionFlags(f, &le)
	component.AddServingFlags(f, &serving)
	return cmd
}
