package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiff-sh/skiff/pkg/bootstraptoken"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/cluster"
	"github.com/skiff-sh/skiff/pkg/kubeconfig"
)

// newToken is `skiff token`: bootstrap tokens for joining nodes, as
// `kubeadm token`.
func newToken() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage bootstrap tokens (nodes join with them: skiff kubelet --bootstrap-kubeconfig)",
	}
	cmd.AddCommand(newTokenCreate())
	return cmd
}

func newTokenCreate() *cobra.Command {
	var (
		kcPath, writeKubeconfig string
		o                       bootstraptoken.Options
	)
	cmd := &cobra.Command{
		Use:   "create [token]",
		Short: "Create a bootstrap token (the Secret kube-system/bootstrap-token-<id>) and print it",
		Long: "Create a bootstrap token on the server, as kubeadm token create: [token] is <id>.<secret> (6 and 16 characters of [a-z0-9]), generated when not given. " +
			"A kubelet given a kubeconfig with this token (--write-kubeconfig writes one) asks for its client certificate with it (TLS bootstrapping).",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Token = args[0]
			}
			if kcPath == "" {
				kcPath = defaultKubeconfig()
			}
			cc, err := client.LoadKubeconfig(kcPath, "")
			if err != nil {
				return err
			}
			cc.UserAgent = "skiff-token"
			c, err := client.New(cc)
			if err != nil {
				return err
			}
			var bootstrap *kubeconfig.Config
			if writeKubeconfig != "" {
				from, err := kubeconfig.Load(kcPath)
				if err != nil {
					return err
				}
				// Checked before the token exists.
				if _, err := bootstraptoken.Kubeconfig(from, filepath.Dir(kcPath), "x"); err != nil {
					return err
				}
				bootstrap = from
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			tok, err := bootstraptoken.Create(ctx, c, o, time.Now())
			if err != nil {
				return err
			}
			if bootstrap != nil {
				kc, err := bootstraptoken.Kubeconfig(bootstrap, filepath.Dir(kcPath), tok)
				if err != nil {
					return err
				}
				if err := kubeconfig.Write(writeKubeconfig, kc); err != nil {
					return err
				}
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kcPath, "kubeconfig", "", "The kubeconfig file to use when talking to the cluster (default: $KUBECONFIG, else ~/.kube/config, else skiff up's).")
	f.DurationVar(&o.TTL, "ttl", bootstraptoken.DefaultTTL, "The duration before the token expires (e.g. 1s, 2m, 3h); '0': never. An expired token is refused (skiff has no token cleaner yet: its Secret stays).")
	f.StringVar(&o.Description, "description", "", "A human friendly description of how this token is used.")
	f.StringSliceVar(&o.Usages, "usages", bootstraptoken.DefaultUsages, "Describes the ways in which this token can be used. You can pass --usages multiple times or provide a comma separated list of options. Valid options: [signing,authentication]")
	f.StringSliceVar(&o.Groups, "groups", []string{bootstraptoken.DefaultNodeGroup}, "Extra groups that this token will authenticate as when used for authentication. Must match \"\\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z\"")
	f.StringVar(&writeKubeconfig, "write-kubeconfig", "", "skiff: also write a bootstrap kubeconfig (this cluster's server and CA, the token as user) to this file, for skiff kubelet --bootstrap-kubeconfig on the joining node.")
	return cmd
}

// defaultKubeconfig is the first existing file of $KUBECONFIG, else
// ~/.kube/config when it exists, else skiff up's admin kubeconfig.
func defaultKubeconfig() string {
	for _, p := range filepath.SplitList(os.Getenv(client.KubeconfigEnv)) {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".kube", "config")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return cluster.KubeconfigPath(defaultDataDir())
}
