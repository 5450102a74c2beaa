package controllermanager

import (
	"errors"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/skiff-sh/skiff/pkg/controller/certificates/approver"
	"github.com/skiff-sh/skiff/pkg/controller/certificates/cleaner"
	"github.com/skiff-sh/skiff/pkg/controller/certificates/signer"
	"github.com/skiff-sh/skiff/pkg/controller/clusterroleaggregation"
	"github.com/skiff-sh/skiff/pkg/controller/podautoscaler"
	"github.com/skiff-sh/skiff/pkg/controller/resourcequota"
)

// The InitFuncs of the certificate controllers (CSR approving, signing,
// cleaner), ClusterRole aggregation, ResourceQuota and the horizontal pod
// autoscaler, and their knobs.

// DefaultClusterSigningDuration is upstream's --cluster-signing-duration.
const DefaultClusterSigningDuration = signer.DefaultDuration

// CSRSigningConfig is upstream's --cluster-signing-* flags.
type CSRSigningConfig struct {
	// ClusterSigningCertFile and ClusterSigningKeyFile are the CA of every
	// kubernetes.io signer (--cluster-signing-cert-file,
	// --cluster-signing-key-file).
	ClusterSigningCertFile, ClusterSigningKeyFile string
	// Per signer (--cluster-signing-kubelet-serving-cert-file, ...): not
	// together with the cluster-wide pair; a signer without files is not
	// served when others have theirs.
	KubeletServingCertFile, KubeletServingKeyFile           string
	KubeletClientCertFile, KubeletClientKeyFile             string
	KubeAPIServerClientCertFile, KubeAPIServerClientKeyFile string
	// Duration is --cluster-signing-duration (0: 8760h).
	Duration time.Duration
}

func (c CSRSigningConfig) anySpecific() bool {
	return c.KubeletServingCertFile != "" || c.KubeletServingKeyFile != "" ||
		c.KubeletClientCertFile != "" || c.KubeletClientKeyFile != "" ||
		c.KubeAPIServerClientCertFile != "" || c.KubeAPIServerClientKeyFile != ""
}

func startCSRApprovingController(cc ControllerContext) (Controller, error) {
	return approver.New(approver.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}

func startCSRCleanerController(cc ControllerContext) (Controller, error) {
	return cleaner.New(cleaner.Config{Client: cc.Client, Informers: cc.Informers, Clock: cc.Clock, Logger: cc.Logger})
}

// startCSRSigningController starts the signer with the CAs of the flags,
// as upstream: nothing without any file; the cluster-wide pair for every
// signer; or the per-signer pairs given.
func startCSRSigningController(cc ControllerContext) (Controller, error) {
	s := cc.Config.CSRSigning
	missingCluster := s.ClusterSigningCertFile == "" || s.ClusterSigningKeyFile == ""
	if missingCluster && !s.anySpecific() {
		cc.Logger.Info("Skipping CSR signer controller because no csr cert/key was specified")
		return nil, nil
	}
	if !missingCluster && s.anySpecific() {
		return nil, errors.New("cannot specify default and per controller certs at the same time")
	}
	files := func(cert, key string) (string, string) {
		if cert == "" && key == "" {
			return s.ClusterSigningCertFile, s.ClusterSigningKeyFile
		}
		return cert, key
	}
	load := func(logSkips bool) (map[string]*signer.CA, error) {
		cas := map[string]*signer.CA{}
		for _, sg := range []struct{ name, cert, key string }{
			{certificatesv1.KubeletServingSignerName, s.KubeletServingCertFile, s.KubeletServingKeyFile},
			{certificatesv1.KubeAPIServerClientKubeletSignerName, s.KubeletClientCertFile, s.KubeletClientKeyFile},
			{certificatesv1.KubeAPIServerClientSignerName, s.KubeAPIServerClientCertFile, s.KubeAPIServerClientKeyFile},
		} {
			cert, key := files(sg.cert, sg.key)
			if cert == "" && key == "" {
				if logSkips {
					cc.Logger.Info("Skipping CSR signer because specific files were specified for other signers and not this one", "signerName", sg.name)
				}
				continue
			}
			ca, err := signer.LoadCA(cert, key)
			if err != nil {
				return nil, fmt.Errorf("failed to start %s signer: %w", sg.name, err)
			}
			cas[sg.name] = ca
		}
		return cas, nil
	}
	cas, err := load(true)
	if err != nil {
		return nil, err
	}
	return signer.New(signer.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
		CAs: cas, Duration: s.Duration,
		// The files are followed, as upstream's signer does.
		Reload: func() (map[string]*signer.CA, error) { return load(false) },
	})
}

func startClusterRoleAggregationController(cc ControllerContext) (Controller, error) {
	return clusterroleaggregation.New(clusterroleaggregation.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: 5, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}

// DefaultResourceQuotaSyncPeriod is upstream's --resource-quota-sync-period.
const DefaultResourceQuotaSyncPeriod = resourcequota.DefaultResyncPeriod

func startResourceQuotaController(cc ControllerContext) (Controller, error) {
	return resourcequota.New(resourcequota.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
		ResyncPeriod: cc.Config.ResourceQuotaSyncPeriod,
	})
}

// HPAConfig is upstream's --horizontal-pod-autoscaler-* flags (zero
// values: upstream's defaults).
type HPAConfig struct {
	SyncPeriod              time.Duration // 15s
	DownscaleStabilization  time.Duration // 5m
	Tolerance               float64       // 0.1
	CPUInitializationPeriod time.Duration // 5m
	InitialReadinessDelay   time.Duration // 30s
}

// Upstream's HPA defaults, for the flags.
const (
	DefaultHPASyncPeriod              = podautoscaler.DefaultSyncPeriod
	DefaultHPADownscaleStabilization  = podautoscaler.DefaultDownscaleStabilizationWindow
	DefaultHPATolerance               = podautoscaler.DefaultTolerance
	DefaultHPACPUInitializationPeriod = podautoscaler.DefaultCPUInitializationPeriod
	DefaultHPAInitialReadinessDelay   = podautoscaler.DefaultDelayOfInitialReadinessStatus
)

func startHPAController(cc ControllerContext) (Controller, error) {
	h := cc.Config.HorizontalPodAutoscaler
	return podautoscaler.New(podautoscaler.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
		SyncPeriod: h.SyncPeriod, DownscaleStabilizationWindow: h.DownscaleStabilization, Tolerance: h.Tolerance,
		CPUInitializationPeriod: h.CPUInitializationPeriod, DelayOfInitialReadinessStatus: h.InitialReadinessDelay,
	})
}
