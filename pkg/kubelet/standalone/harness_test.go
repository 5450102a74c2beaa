package standalone

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/containerd"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// realRuntime is what the real-containerd tests share: an API server
// (testenv, the default service account made), a containerd supervised
// by pkg/containerd with the test images imported, and a CNI bridge with
// a subnet of its own, all removed when the test ends.
type realRuntime struct {
	base   string // the test's directory
	subnet string // the pods' (CNI bridge) subnet
	env    *testenv.Environment
	c      *client.Client
	sup    *containerd.Supervisor
	ctx    context.Context // ends when the test's cleanup runs
}

// bridges numbers the test bridges of this process (each its own subnet).
var bridges atomic.Int32

// newRealRuntime skips t without containerd, runc or ctr, without root,
// or with -short.
func newRealRuntime(t *testing.T, envCfg testenv.Config) *realRuntime {
	t.Helper()
	for _, bin := range []string{"containerd", "runc", "ctr"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (apt-get install containerd runc): this test runs a real containerd", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: containerd and runc need root here")
	}
	if testing.Short() {
		t.Skip("-short: this test runs a real containerd")
	}
	base, err := os.MkdirTemp("", "ctd")
	must(t, err)
	t.Cleanup(func() {
		if err := os.RemoveAll(base); err != nil {
			t.Errorf("removing %s: %v", base, err)
		}
	})
	env := testenv.StartT(t, envCfg)
	must(t, env.EnsureServiceAccount(context.Background(), "default", "default"))
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	must(t, err)

	// Pod networking: the standard bridge and host-local plugins.
	n := int(bridges.Add(1))
	bridge, subnet := fmt.Sprintf("skt%d-%d", os.Getpid()%10000, n), fmt.Sprintf("10.%d.%d.0/24", 240+n%10, os.Getpid()%250)
	network := containerd.BridgeNetwork{Name: "skiff-test", Bridge: bridge, Subnets: []string{subnet},
		IPAMDataDir: filepath.Join(base, "cni", "ipam")}
	must(t, network.Write(filepath.Join(base, "cni", "net.d", "10-test.conflist")))
	t.Cleanup(func() { exec.Command("ip", "link", "del", bridge).Run() })

	sup, err := containerd.New(containerd.Config{Dir: filepath.Join(base, "containerd"), RemovePodsOnStop: true})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	supDone := make(chan error, 1)
	go func() { supDone <- sup.Run(ctx) }()
	t.Cleanup(func() { // after the kubelet's (cleanups run last first)
		cancel()
		if err := <-supDone; err != nil {
			t.Errorf("containerd: %v", err)
		}
	})
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	must(t, sup.WaitReady(wctx))
	writeImages(t, filepath.Join(base, "images.tar"))
	_, err = containerd.ImportImage(ctx, sup.Socket(), filepath.Join(base, "images.tar"))
	must(t, err)
	return &realRuntime{base: base, subnet: subnet, env: env, c: c, sup: sup, ctx: ctx}
}

// runKubelet runs the kubelet (Run with cfg, its Client and Endpoint
// filled in) until the test ends, and fails the test if it fails.
func (r *realRuntime) runKubelet(t *testing.T, cfg Config) {
	t.Helper()
	cfg.Client, cfg.Endpoint = r.c, r.sup.Endpoint()
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("kubelet: %v", err)
		}
	})
}
