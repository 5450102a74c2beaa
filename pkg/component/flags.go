package component

import (
	"github.com/spf13/pflag"
)

// AddServingFlags adds upstream's secure serving, delegated
// authentication/authorization and profiling flags to fs, bound to c,
// with c's current values as defaults (DefaultServingConfig(port) gives
// upstream's; a nil AuthorizationAlwaysAllowPaths shows
// DefaultAlwaysAllowPaths).
func AddServingFlags(fs *pflag.FlagSet, c *ServingConfig) {
	if c.AuthorizationAlwaysAllowPaths == nil {
		c.AuthorizationAlwaysAllowPaths = DefaultAlwaysAllowPaths()
	}
	fs.IntVar(&c.SecurePort, "secure-port", c.SecurePort, "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all")
	fs.StringVar(&c.BindAddress, "bind-address", c.BindAddress, "The IP address on which to listen for the --secure-port port")
	fs.StringVar(&c.TLSCertFile, "tls-cert-file", c.TLSCertFile, "File containing the default x509 Certificate for HTTPS (without it a self-signed certificate is generated)")
	fs.StringVar(&c.TLSKeyFile, "tls-private-key-file", c.TLSKeyFile, "File containing the default x509 private key matching --tls-cert-file")
	fs.StringVar(&c.CertDirectory, "cert-dir", c.CertDirectory, "The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored.")
	fs.StringVar(&c.AuthenticationKubeconfig, "authentication-kubeconfig", c.AuthenticationKubeconfig, "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create tokenreviews.authentication.k8s.io and to look up the client CA in kube-system/extension-apiserver-authentication (without it, client certificates and tokens are not accepted on --secure-port)")
	fs.StringVar(&c.AuthorizationKubeconfig, "authorization-kubeconfig", c.AuthorizationKubeconfig, "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create subjectaccessreviews.authorization.k8s.io (without it, only --authorization-always-allow-paths and system:masters are allowed)")
	fs.StringVar(&c.ClientCAFile, "client-ca-file", c.ClientCAFile, "If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate")
	fs.StringSliceVar(&c.AuthorizationAlwaysAllowPaths, "authorization-always-allow-paths", c.AuthorizationAlwaysAllowPaths, "A list of HTTP paths to skip during authorization")
	fs.BoolVar(&c.Profiling, "profiling", c.Profiling, "Enable profiling via web interface host:port/debug/pprof/")
}

// AddLeaderElectionFlags adds upstream's --leader-elect* flags to fs,
// bound to c, with c's current values as defaults
// (DefaultLeaderElectionConfig(name) gives upstream's).
func AddLeaderElectionFlags(fs *pflag.FlagSet, c *LeaderElectionConfig) {
	fs.BoolVar(&c.LeaderElect, "leader-elect", c.LeaderElect, "Start a leader election client and gain leadership before executing the main loop. Enable this when running replicated components for high availability")
	fs.DurationVar(&c.LeaseDuration, "leader-elect-lease-duration", c.LeaseDuration, "The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot")
	fs.DurationVar(&c.RenewDeadline, "leader-elect-renew-deadline", c.RenewDeadline, "The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than the lease duration")
	fs.DurationVar(&c.RetryPeriod, "leader-elect-retry-period", c.RetryPeriod, "The duration the clients should wait between attempting acquisition and renewal of a leadership")
	fs.StringVar(&c.ResourceLock, "leader-elect-resource-lock", c.ResourceLock, "The type of resource object that is used for locking during leader election (only 'leases')")
	fs.StringVar(&c.ResourceNamespace, "leader-elect-resource-namespace", c.ResourceNamespace, "The namespace of resource object that is used for locking during leader election")
	fs.StringVar(&c.ResourceName, "leader-elect-resource-name", c.ResourceName, "The name of resource object that is used for locking during leader election")
}
