package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiff-sh/skiff/pkg/containerd"
	"github.com/skiff-sh/skiff/pkg/image"
)

func newImage() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build images without a registry and load them into the containerd of a skiff up",
		Long: `Build images without a registry and load them into the containerd of a skiff up.

Nothing is pulled from a registry: images are built locally as docker-archive
tarballs (the format of docker save) and imported, as kind load image-archive
and k3s ctr images import do. For example, to run busybox pods:

  skiff image build-busybox -o busybox.tar
  skiff image import busybox.tar
  kubectl run bb --image=busybox:1.35.0 -- sleep 3600`,
	}
	cmd.AddCommand(newImageImport(), newImageList(), newImageBuildBusybox(), newImageBuildPause())
	return cmd
}

// containerdFlags are the flags naming the containerd to talk to.
type containerdFlags struct {
	dataDir, address string
}

func (c *containerdFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.dataDir, "data-dir", defaultDataDir(), "data directory of the skiff up whose containerd to use (its socket is <data-dir>/containerd/containerd.sock)")
	cmd.Flags().StringVar(&c.address, "address", "", "containerd socket to use instead of the data directory's")
}

// socket is the containerd socket, checked to answer.
func (c *containerdFlags) socket() (string, error) {
	sock := c.address
	hint := "is it running?"
	if sock == "" {
		sock = containerd.SocketOf(c.dataDir)
		hint = fmt.Sprintf("is `skiff up --data-dir %s` running with containerd?", c.dataDir)
	}
	conn, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		return "", fmt.Errorf("no containerd at %s: %s (%v)", sock, hint, err)
	}
	conn.Close()
	return sock, nil
}

func newImageImport() *cobra.Command {
	var flags containerdFlags
	cmd := &cobra.Command{
		Use:   "import [--data-dir DIR] FILE.tar...",
		Short: "Import image tarballs (docker-archive or OCI layout) into the containerd of a skiff up",
		Long: `Import image tarballs (docker-archive, as docker save and skiff image build-*
write, or OCI image layout) into the containerd of the skiff up using --data-dir,
in the containerd namespace k8s.io where the kubelet's pods find them. Uses
containerd's ctr.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sock, err := flags.socket()
			if err != nil {
				return err
			}
			for _, file := range args {
				names, err := containerd.ImportImage(cmd.Context(), sock, file)
				if err != nil {
					return err
				}
				if len(names) == 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: imported\n", file)
				}
				for _, n := range names {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: imported %s\n", file, n)
				}
			}
			return nil
		},
	}
	flags.add(cmd)
	return cmd
}

func newImageList() *cobra.Command {
	var flags containerdFlags
	var quiet bool
	cmd := &cobra.Command{
		Use:     "ls [--data-dir DIR]",
		Aliases: []string{"list"},
		Short:   "List the images of the containerd of a skiff up (as crictl images)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sock, err := flags.socket()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			images, err := containerd.ListImages(ctx, sock)
			if err != nil {
				return fmt.Errorf("listing the images of the containerd at %s: %w", sock, err)
			}
			printImages(cmd.OutOrStdout(), images, quiet)
			return nil
		},
	}
	flags.add(cmd)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "only print image IDs")
	return cmd
}

// printImages prints a table as `crictl images` does: one row per tag
// (REPOSITORY, TAG, IMAGE ID of 13 hex digits, SIZE in decimal units);
// an untagged image shows its repository digests' names with tag <none>.
func printImages(w io.Writer, images []containerd.Image, quiet bool) {
	if quiet {
		for _, im := range images {
			fmt.Fprintln(w, im.ID)
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "REPOSITORY\tTAG\tIMAGE ID\tSIZE")
	for _, im := range images {
		id := strings.TrimPrefix(im.ID, "sha256:")
		if len(id) > 13 {
			id = id[:13]
		}
		size := humanSize(im.Size)
		rows := 0
		for _, t := range im.RepoTags {
			repo, tag := t, "<none>"
			if i := strings.LastIndex(t, ":"); i > strings.LastIndex(t, "/") {
				repo, tag = t[:i], t[i+1:]
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", repo, tag, id, size)
			rows++
		}
		if rows == 0 {
			repo := "<none>"
			if len(im.RepoDigests) > 0 {
				repo, _, _ = strings.Cut(im.RepoDigests[0], "@")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", repo, "<none>", id, size)
		}
	}
	tw.Flush()
}

// humanSize writes a size as crictl does (decimal units, 3 significant
// digits): 221B, 1.1kB, 2.15MB.
func humanSize(n uint64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB"}
	f := float64(n)
	i := 0
	for f >= 1000 && i < len(units)-1 {
		f /= 1000
		i++
	}
	return fmt.Sprintf("%.3g%s", f, units[i])
}

func newImageBuildBusybox() *cobra.Command {
	var out, binary string
	var tags []string
	cmd := &cobra.Command{
		Use:   "build-busybox -o FILE.tar",
		Short: "Build a busybox image tarball from the host's static busybox (for tests and CI)",
		Long: `Build a busybox image tarball (docker-archive) from a static busybox binary of
this machine (default /bin/busybox, Debian's busybox-static): /bin/busybox, a
symlink /bin/<applet> for each of its applets (sh, sleep, wget, nc, httpd, ...),
/etc/passwd and /etc/group, /tmp; command sh. Tagged docker.io/library/busybox
:latest and :<busybox version> unless --tag is given. Load it with skiff image
import; pods naming busybox:latest need imagePullPolicy: IfNotPresent (nothing
can be pulled), the version tag needs nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			img, err := image.BusyboxImage(binary, tags)
			if err != nil {
				return err
			}
			if err := image.WriteDockerArchiveFile(out, img); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%s, %s)\n", out, strings.Join(img.Names, ", "), img.Arch)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "tarball to write")
	cmd.Flags().StringVar(&binary, "busybox", image.DefaultBusyboxPath, "static busybox binary to pack")
	cmd.Flags().StringArrayVarP(&tags, "tag", "t", nil, "image name (repeatable; default "+image.BusyboxRepository+":latest and :<version>)")
	cmd.MarkFlagRequired("output")
	return cmd
}

func newImageBuildPause() *cobra.Command {
	var out, arch string
	cmd := &cobra.Command{
		Use:   "build-pause -o FILE.tar",
		Short: "Build the pod sandbox image " + image.PauseImageName + " as a tarball",
		Long: `Build the pod sandbox image ` + image.PauseImageName + ` (docker-archive): one static
executable, /pause, generated by skiff (hand-assembled x86-64 code: it waits
for signals as PID 1, reaps exited children and exits 0 on SIGINT or SIGTERM).
Only amd64 exists.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			img, err := image.PauseImage(arch)
			if err != nil {
				return err
			}
			if err := image.WriteDockerArchiveFile(out, img); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%s, %s)\n", out, image.PauseImageName, arch)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "tarball to write")
	cmd.Flags().StringVar(&arch, "arch", runtime.GOARCH, "architecture (GOARCH) of the image")
	cmd.MarkFlagRequired("output")
	return cmd
}
