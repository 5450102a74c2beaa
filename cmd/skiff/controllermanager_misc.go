package main

import (
	"github.com/spf13/pflag"

	"github.com/skiff-sh/skiff/pkg/controllermanager"
)

// addMiscControllerFlags adds the flags of the certificate, ResourceQuota
// and horizontal pod autoscaler controllers (upstream's names).
func addMiscControllerFlags(f *pflag.FlagSet, cfg *controllermanager.Config) {
	s := &cfg.CSRSigning
	f.StringVar(&s.ClusterSigningCertFile, "cluster-signing-cert-file", "", "Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates.  If specified, no more specific --cluster-signing-* flag may be specified.")
	f.StringVar(&s.ClusterSigningKeyFile, "cluster-signing-key-file", "", "Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates.  If specified, no more specific --cluster-signing-* flag may be specified.")
	f.StringVar(&s.KubeletServingCertFile, "cluster-signing-kubelet-serving-cert-file", "", "Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the kubernetes.io/kubelet-serving signer.  If specified, --cluster-signing-{cert,key}-file must not be set.")
	f.StringVar(&s.KubeletServingKeyFile, "cluster-signing-kubelet-serving-key-file", "", "Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the kubernetes.io/kubelet-serving signer.  If specified, --cluster-signing-{cert,key}-file must not be set.")
	f.StringVar(&s.KubeletClientCertFile, "cluster-signing-kubelet-client-cert-file", "", "Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the kubernetes.io/kube-apiserver-client-kubelet signer.  If specified, --cluster-signing-{cert,key}-file must not be set.")
	f.StringVar(&s.KubeletClientKeyFile, "cluster-signing-kubelet-client-key-file", "", "Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the kubernetes.io/kube-apiserver-client-kubelet signer.  If specified, --cluster-signing-{cert,key}-file must not be set.")
	f.StringVar(&s.KubeAPIServerClientCertFile, "cluster-signing-kube-apiserver-client-cert-file", "", "Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the kubernetes.io/kube-apiserver-client signer.  If specified, --cluster-signing-{cert,key}-file must not be set.")
	f.StringVar(&s.KubeAPIServerClientKeyFile, "cluster-signing-kube-apiserver-client-key-file", "", "Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the kubernetes.io/kube-apiserver-client signer.  If specified, --cluster-signing-{cert,key}-file must not be set.")
	f.DurationVar(&s.Duration, "cluster-signing-duration", controllermanager.DefaultClusterSigningDuration, "The max length of duration signed certificates will be given.  Individual CSRs may request shorter certs by setting spec.expirationSeconds.")
	f.DurationVar(&cfg.ResourceQuotaSyncPeriod, "resource-quota-sync-period", controllermanager.DefaultResourceQuotaSyncPeriod, "The period for syncing quota usage status in the system")
	h := &cfg.HorizontalPodAutoscaler
	f.DurationVar(&h.SyncPeriod, "horizontal-pod-autoscaler-sync-period", controllermanager.DefaultHPASyncPeriod, "The period for syncing the number of pods in horizontal pod autoscaler.")
	f.DurationVar(&h.DownscaleStabilization, "horizontal-pod-autoscaler-downscale-stabilization", controllermanager.DefaultHPADownscaleStabilization, "The period for which autoscaler will look backwards and not scale down below any recommendation it made during that period.")
	f.Float64Var(&h.Tolerance, "horizontal-pod-autoscaler-tolerance", controllermanager.DefaultHPATolerance, "The minimum change (from 1.0) in the desired-to-actual metrics ratio for the horizontal pod autoscaler to consider scaling.")
	f.DurationVar(&h.CPUInitializationPeriod, "horizontal-pod-autoscaler-cpu-initialization-period", controllermanager.DefaultHPACPUInitializationPeriod, "The period after pod start when CPU samples might be skipped.")
	f.DurationVar(&h.InitialReadinessDelay, "horizontal-pod-autoscaler-initial-readiness-delay", controllermanager.DefaultHPAInitialReadinessDelay, "The period after pod start during which readiness changes will be treated as initial readiness.")
}
