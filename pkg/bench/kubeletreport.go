package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// evaluateKubelet compares skiff's run with the targets (stated
// for the default sizes) and, when measured, kwok's run.
func evaluateKubelet(r *KubeletReport) []Target {
	var sk, kw *KubeletRun
	for i := range r.Runs {
		if r.Runs[i].Error != "" {
			continue
		}
		switch r.Runs[i].Agent {
		case "skiff":
			sk = &r.Runs[i]
		case "kwok":
			kw = &r.Runs[i]
		}
	}
	var ts []Target
	if r.Runtime == RuntimeContainerd {
		t := Target{Name: fmt.Sprintf("start-up latency p99, %d pods, containerd", r.Pods), Goal: "≤ 1.5 s", Upstream: "SLO ≤ 5 s", Status: "n/a"}
		if sk != nil {
			t.Measured = fmt.Sprintf("%.2f s (p50 %.2f s)", sk.StartupLatency.P99/1000, sk.StartupLatency.P50/1000)
			if r.Pods >= 100 {
				t.Status = verdict(sk.StartupLatency.P99 <= 1500)
			}
		}
		return append(ts, t)
	}
	t := Target{Name: fmt.Sprintf("%d pods Running on %d simulated nodes", r.Pods, r.Nodes), Goal: "10k on 1000 in < 30 s", Upstream: "—", Status: "n/a"}
	if sk != nil {
		t.Measured = fmt.Sprintf("%.1f s (%.0f pods/s)", sk.Seconds, sk.PodsPerSec)
		if r.Pods >= 10000 && r.Nodes >= 1000 {
			t.Status = verdict(sk.Seconds < 30)
		}
	}
	if kw != nil {
		t.Upstream = fmt.Sprintf("kwok %.1f s (%.0f pods/s)", kw.Seconds, kw.PodsPerSec)
	}
	ts = append(ts, t)
	t = Target{Name: "1000 pods Running (kwok's CI gate)", Goal: "≤ 120 s", Upstream: "—", Status: "n/a"}
	if sk != nil && sk.Running1000Seconds > 0 {
		t.Measured = fmt.Sprintf("%.1f s", sk.Running1000Seconds)
		t.Status = verdict(sk.Running1000Seconds <= 120)
	}
	if kw != nil && kw.Running1000Seconds > 0 {
		t.Upstream = fmt.Sprintf("kwok %.1f s", kw.Running1000Seconds)
	}
	ts = append(ts, t)
	if sk != nil && kw != nil && kw.PodsPerSec > 0 {
		ts = append(ts, Target{Name: "pods/s vs kwok", Goal: "(information)", Upstream: fmt.Sprintf("%.0f", kw.PodsPerSec),
			Measured: fmt.Sprintf("%.0f (%.2f×)", sk.PodsPerSec, sk.PodsPerSec/kw.PodsPerSec), Status: "info"})
		if kw.AgentPeakRSS > 0 {
			ts = append(ts, Target{Name: "node agent peak RSS vs kwok", Goal: "(information)", Upstream: fmt.Sprintf("%.1f MiB", kw.AgentPeakRSS),
				Measured: fmt.Sprintf("%.1f MiB (%.2f×)", sk.AgentPeakRSS, sk.AgentPeakRSS/kw.AgentPeakRSS), Status: "info"})
		}
	}
	return ts
}

// WriteText writes the report as a table, one column per node agent.
func (r *KubeletReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "skiff bench kubelet — %s\n", r.Date)
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs (%s), %.0f GiB, %s %s, %s, load %s\n", m.CPUs, m.CPUModel, m.MemoryGiB, m.OS, m.Kernel, m.Go, m.LoadAvg)
	work := fmt.Sprintf("%d bare pods", r.Pods)
	if r.Workload == WorkloadDeployments {
		work = fmt.Sprintf("%d pods as Deployments of %d replicas", r.Pods, r.Replicas)
	}
	nodes := fmt.Sprintf("%d simulated nodes (skiff kubelet --runtime=sim --record-events=false, one process)", r.Nodes)
	if r.Runtime == RuntimeContainerd {
		nodes = "1 node on containerd (skiff kubelet --container-runtime-endpoint, busybox pods)"
	}
	if r.CreateIntervalMS > 0 {
		work += fmt.Sprintf(" (one every %.0f ms)", r.CreateIntervalMS)
	} else {
		work += " (created at once)"
	}
	fmt.Fprintf(w, "workload: %s on %s; control plane: skiff up --storage=%s (components disabled) + skiff controller-manager + skiff scheduler, unthrottled clients\n",
		work, nodes, r.Storage)
	if r.Skipped != "" {
		fmt.Fprintf(w, "\nSKIPPED: %s\n", r.Skipped)
		return
	}
	if len(r.Runs) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		names := make([]string, len(r.Runs))
		for i, run := range r.Runs {
			names[i] = run.Agent
		}
		fmt.Fprintln(tw, "\t"+strings.Join(names, "\t")+"\t")
		row := func(label string, f func(r *KubeletRun) string) {
			cells := []string{label}
			for i := range r.Runs {
				if r.Runs[i].Error != "" && r.Runs[i].Seconds == 0 {
					cells = append(cells, "—")
					continue
				}
				cells = append(cells, f(&r.Runs[i]))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
		row("pods/s to Running (first create → last Running)", func(r *KubeletRun) string { return fmt.Sprintf("%.0f", r.PodsPerSec) })
		row("seconds to all Running", func(r *KubeletRun) string { return fmt.Sprintf("%.2f", r.Seconds) })
		row("seconds to 1000 Running", func(r *KubeletRun) string {
			if r.Running1000Seconds == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.2f", r.Running1000Seconds)
		})
		row("Running per second p50 / p90 / p99", func(r *KubeletRun) string {
			if r.Throughput.Samples == 0 {
				return "n/a (< 1 s)"
			}
			return fmt.Sprintf("%.0f / %.0f / %.0f", r.Throughput.P50, r.Throughput.P90, r.Throughput.P99)
		})
		row("start-up ms created → Running p50 / p90 / p99 / max", func(r *KubeletRun) string {
			l := r.StartupLatency
			return fmt.Sprintf("%.0f / %.0f / %.0f / %.0f", l.P50, l.P90, l.P99, l.Max)
		})
		row("of which created → bound p50 / p99", func(r *KubeletRun) string {
			return fmt.Sprintf("%.0f / %.0f", r.ScheduleLatency.P50, r.ScheduleLatency.P99)
		})
		row("creates took s", func(r *KubeletRun) string { return fmt.Sprintf("%.2f", r.CreateSeconds) })
		row("nodes Ready s / warm-up pod Running s", func(r *KubeletRun) string {
			return fmt.Sprintf("%.1f / %.2f", r.NodesReadySeconds, r.WarmupSeconds)
		})
		row("agent RSS MiB idle / end / peak", func(r *KubeletRun) string {
			return fmt.Sprintf("%.1f / %.1f / %.1f", r.AgentIdleRSS, r.AgentEndRSS, r.AgentPeakRSS)
		})
		if r.Runtime == RuntimeSim {
			row("agent idle KiB per node", func(r *KubeletRun) string { return fmt.Sprintf("%.0f", r.AgentBytesNode/1024) })
		}
		row("RSS MiB apiserver (peak) / ctrl-mgr / scheduler", func(r *KubeletRun) string {
			return fmt.Sprintf("%.1f (%.1f) / %.1f / %.1f", r.ServerRSS, r.ServerPeakRSS, r.ManagerRSS, r.SchedulerRSS)
		})
		if r.Runtime == RuntimeContainerd {
			row("containerd RSS MiB (shims not counted)", func(r *KubeletRun) string { return fmt.Sprintf("%.1f", r.ContainerdRSS) })
			row("CPU s containerd + shims (+ runc, CNI)", func(r *KubeletRun) string { return fmt.Sprintf("%.1f", r.RuntimeCPU) })
			row("teardown s (delete → pods gone)", func(r *KubeletRun) string { return fmt.Sprintf("%.1f", r.TeardownSeconds) })
		}
		row("CPU s agent / apiserver / ctrl-mgr / scheduler", func(r *KubeletRun) string {
			return fmt.Sprintf("%.1f / %.1f / %.1f / %.1f", r.AgentCPU, r.ServerCPU, r.ManagerCPU, r.SchedulerCPU)
		})
		row("CPU s bench / other processes", func(r *KubeletRun) string { return fmt.Sprintf("%.1f / %.1f", r.BenchCPU, r.OtherCPU) })
		tw.Flush()
		for _, run := range r.Runs {
			for _, n := range run.Notes {
				fmt.Fprintf(w, "%s: note: %s\n", run.Agent, n)
			}
		}
	}
	if len(r.Targets) > 0 {
		fmt.Fprintln(w, "\nTargets (stated for the default sizes)")
		tt := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tt, "\tgoal\tmeasured\tupstream\tstatus")
		for _, t := range r.Targets {
			measured := t.Measured
			if measured == "" {
				measured = "—"
			}
			fmt.Fprintf(tt, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.Goal, measured, t.Upstream, strings.ToUpper(t.Status))
		}
		tt.Flush()
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "\nERROR: %s\n", e)
	}
}
