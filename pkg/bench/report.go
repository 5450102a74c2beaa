package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Report is everything Run measured.
type Report struct {
	Date    string  `json:"date"`
	Machine Machine `json:"machine"`
	// Storage is the backend of the server the create, list, watch and
	// memory phases ran against.
	Storage string `json:"storage"`
	// Pods is how many pods existed for the list and memory phases.
	Pods    int            `json:"pods"`
	Startup []StartResult  `json:"startup"`
	Create  []CreateResult `json:"create"`
	List    []ListResult   `json:"list"`
	Watch   *WatchResult   `json:"watch,omitempty"`
	Memory  *MemoryResult  `json:"memory,omitempty"`
	Targets []Target       `json:"targets"`
	Errors  []string       `json:"errors,omitempty"`
}

// Machine describes the host.
type Machine struct {
	CPUs      int     `json:"cpus"`
	CPUModel  string  `json:"cpu_model,omitempty"`
	MemoryGiB float64 `json:"memory_gib,omitempty"`
	OS        string  `json:"os"`
	Kernel    string  `json:"kernel,omitempty"`
	Go        string  `json:"go"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute load when Run began.
	LoadAvg string `json:"loadavg,omitempty"`
}

// StartResult is the cold start of one storage: spawn of `skiff up` on a
// fresh data directory until the first 200 from GET /readyz.
type StartResult struct {
	Storage string    `json:"storage"`
	Runs    []float64 `json:"runs_ms"`
	Median  float64   `json:"median_ms"`
}

// MemoryResult is the server process's resident memory (embedded etcd
// included), in MiB.
type MemoryResult struct {
	IdleRSS      float64 `json:"idle_rss_mib"`
	AfterPodsRSS float64 `json:"after_pods_rss_mib"`
	Pods         int     `json:"pods"`
	// BytesPerPod is (AfterPodsRSS - IdleRSS) / Pods, in bytes.
	BytesPerPod float64 `json:"bytes_per_pod"`
	// EndRSS is after the list and watch phases; PeakRSS is VmHWM.
	EndRSS  float64 `json:"end_rss_mib"`
	PeakRSS float64 `json:"peak_rss_mib"`
	Note    string  `json:"note,omitempty"`
}

// Target is one goal from docs/benchmarks.md compared with this run.
type Target struct {
	Name     string `json:"name"`
	Goal     string `json:"goal"`
	Upstream string `json:"upstream"`
	Measured string `json:"measured"`
	// Status is "met", "missed" or "n/a" (not measured in this
	// configuration).
	Status string `json:"status"`
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// evaluate compares r with the project's targets. The targets are stated
// for the default sizes (10000 pods, 64 clients, 100 watchers).
func evaluate(r *Report) []Target {
	var ts []Target
	for _, want := range []struct {
		storage string
		goal    float64
		up      string
	}{{"etcd", 1000, "2.3 s (kube-apiserver + fresh etcd)"}, {"memory", 100, "—"}} {
		t := Target{Name: "cold start to /readyz, " + want.storage, Goal: fmt.Sprintf("< %.0f ms", want.goal), Upstream: want.up, Status: "n/a"}
		for _, s := range r.Startup {
			if s.Storage == want.storage && len(s.Runs) > 0 {
				t.Measured = fmt.Sprintf("%.0f ms (median)", s.Median)
				t.Status = verdict(s.Median < want.goal)
			}
		}
		ts = append(ts, t)
	}
	t := Target{Name: "pod creates/s at 64 clients, embedded etcd", Goal: "≥ 3,000/s", Upstream: "~1,800/s, p99 85 ms", Status: "n/a"}
	for _, c := range r.Create {
		if c.Clients == 64 && (c.Identity == "" || c.Identity == "admin") {
			t.Measured = fmt.Sprintf("%.0f/s, p99 %.0f ms (%s)", c.PerSecond, c.Latency.P99, r.Storage)
			if r.Storage == "etcd" {
				t.Status = verdict(c.PerSecond >= 3000)
			}
		}
	}
	ts = append(ts, t)
	t = Target{Name: fmt.Sprintf("list %d pods from the watch cache, last byte", r.Pods), Goal: "< 100 ms", Upstream: "0.5–0.6 s (decode included)", Status: "n/a"}
	for _, l := range r.List {
		if l.Name == "cache (rv=0)" && l.Latency.Count > 0 {
			t.Measured = fmt.Sprintf("%.0f ms p50, %.0f ms p99", l.Latency.P50, l.Latency.P99)
			t.Status = verdict(l.Latency.P50 < 100)
		}
	}
	ts = append(ts, t)
	t = Target{Name: fmt.Sprintf("total RSS after %d pods", r.Pods), Goal: "< 250 MiB", Upstream: "650 MB apiserver + 215 MB etcd", Status: "n/a"}
	if r.Memory != nil && r.Memory.AfterPodsRSS > 0 {
		t.Measured = fmt.Sprintf("%.0f MiB (%s)", r.Memory.AfterPodsRSS, r.Storage)
		t.Status = verdict(r.Memory.AfterPodsRSS < 250)
	}
	ts = append(ts, t)
	t = Target{Name: "watch events/s delivered", Goal: "≥ 50,000/s", Upstream: "~16k/s to 100 watchers", Status: "n/a"}
	if r.Watch != nil && r.Watch.EventsPerSecond > 0 {
		t.Measured = fmt.Sprintf("%.0f/s to %d watchers", r.Watch.EventsPerSecond, r.Watch.Watchers)
		t.Status = verdict(r.Watch.EventsPerSecond >= 50000)
	}
	ts = append(ts, t)
	return ts
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "skiff bench apiserver — %s\n", r.Date)
	fmt.Fprintf(w, "machine: %d CPUs (%s), %.0f GiB, %s %s, %s, load %s\n\n", m.CPUs, m.CPUModel, m.MemoryGiB, m.OS, m.Kernel, m.Go, m.LoadAvg)

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	section := func(title string) {
		tw.Flush()
		fmt.Fprintln(w, title)
	}
	if len(r.Startup) > 0 {
		section("Cold start: spawn `skiff up` on a fresh data dir → first 200 from GET /readyz")
		fmt.Fprintln(tw, "storage\truns (ms)\tmedian (ms)\t")
		for _, s := range r.Startup {
			runs := make([]string, len(s.Runs))
			for i, v := range s.Runs {
				runs[i] = fmt.Sprintf("%.0f", v)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t\n", s.Storage, strings.Join(runs, " "), s.Median)
		}
	}
	if len(r.Create) > 0 {
		section(fmt.Sprintf("\nPod creates (POST /api/v1/namespaces/<ns>/pods, %s storage, ~%d-byte JSON bodies)", r.Storage, r.Create[0].BodyBytes))
		fmt.Fprintln(tw, "clients\tas\tpods\terrors\tseconds\tcreates/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\tCPU s: server\tclient\tother\t")
		for _, c := range r.Create {
			id := c.Identity
			if id == "" {
				id = "admin"
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.2f\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t\n",
				c.Clients, id, c.Created, c.Errors, c.Seconds, c.PerSecond, c.Latency.P50, c.Latency.P90, c.Latency.P99, c.Latency.Max,
				c.CPU.Server, c.CPU.Client, c.CPU.Other)
		}
	}
	if len(r.List) > 0 {
		section(fmt.Sprintf("\nList all %d pods (GET /api/v1/pods), request → last byte [+ decode into corev1.PodList]", r.Pods))
		fmt.Fprintln(tw, "variant\tMiB\tfirst ms\tp50 ms\tp90 ms\tp99 ms\tmax ms\truns\tCPU ms/req: server\tclient\tother\t")
		for _, l := range r.List {
			fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%.0f\t%.0f\t%.0f\t\n",
				l.Name, float64(l.Bytes)/(1<<20), l.First, l.Latency.P50, l.Latency.P90, l.Latency.P99, l.Latency.Max, l.Latency.Count,
				l.CPU.Server*1000, l.CPU.Client*1000, l.CPU.Other*1000)
		}
	}
	if wr := r.Watch; wr != nil {
		section("\nWatch fan-out (ConfigMap creates, one streaming JSON decoder per watcher)")
		fmt.Fprintln(tw, "watchers\twriters\tevents each\tdelivered\tseconds\tevents/s\twrites/s\tlag p50 ms\tlag p99 ms\tverified\tCPU s: server\tclient\tother\t")
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%.2f\t%.0f\t%.0f\t%.1f\t%.1f\t%v\t%.2f\t%.2f\t%.2f\t\n",
			wr.Watchers, wr.Writers, wr.EventsPerWatcher, wr.Delivered, wr.Seconds, wr.EventsPerSecond, wr.WritesPerSecond, wr.Lag.P50, wr.Lag.P99, wr.Verified,
			wr.CPU.Server, wr.CPU.Client, wr.CPU.Other)
	}
	if mr := r.Memory; mr != nil {
		section(fmt.Sprintf("\nServer memory (RSS of the `skiff up` process, %s storage in-process)", r.Storage))
		fmt.Fprintln(tw, "idle MiB\tafter pods MiB\tpods\tbytes/pod\tend MiB\tpeak MiB\t")
		fmt.Fprintf(tw, "%.1f\t%.1f\t%d\t%.0f\t%.1f\t%.1f\t\n", mr.IdleRSS, mr.AfterPodsRSS, mr.Pods, mr.BytesPerPod, mr.EndRSS, mr.PeakRSS)
		if mr.Note != "" {
			fmt.Fprintf(tw, "note: %s\n", mr.Note)
		}
	}
	tw.Flush()
	if notes := r.contention(); len(notes) > 0 {
		fmt.Fprintf(w, "\nOther processes used the CPU during: %s.\nThose phases measured a shared machine; their numbers are pessimistic.\n", strings.Join(notes, ", "))
	}
	if len(r.Targets) > 0 {
		fmt.Fprintln(w, "\nTargets (stated for the default sizes)")
		tt := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tt, "\tgoal\tmeasured\tupstream 1.34\tstatus")
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

// contention names the phases during which other processes used more than
// a tenth of the machine's CPU time.
func (r *Report) contention() []string {
	cpus := float64(max(1, r.Machine.CPUs))
	var out []string
	note := func(name string, other, seconds float64) {
		if seconds > 0 && other/(seconds*cpus) > 0.1 {
			out = append(out, fmt.Sprintf("%s (%.0f%%)", name, 100*other/(seconds*cpus)))
		}
	}
	for _, c := range r.Create {
		note(fmt.Sprintf("creates with %d clients %s", c.Clients, c.Identity), c.CPU.Other, c.Seconds)
	}
	for _, l := range r.List {
		note("list "+l.Name, l.CPU.Other, l.Latency.Mean/1000)
	}
	if r.Watch != nil {
		note("watch fan-out", r.Watch.CPU.Other, r.Watch.Seconds)
	}
	return out
}
