package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profileFlags are kubectl's --profile and --profile-output, for every skiff
// command: the whole run of the process is profiled and written when the
// command returns (a signal ending `skiff up` or `skiff kubelet` returns it).
// `skiff bench kubelet --profile DIR` passes them to its children.
type profileFlags struct {
	name, output string
	cpuFile      *os.File
}

func (p *profileFlags) add(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&p.name, "profile", "none", "Name of profile to capture. One of (none|cpu|heap|goroutine|threadcreate|block|mutex|allocs)")
	f.StringVar(&p.output, "profile-output", "profile.pprof", "Name of the file to write the profile to")
}

func (p *profileFlags) start() error {
	switch p.name {
	case "none":
		return nil
	case "cpu":
		f, err := os.Create(p.output)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		p.cpuFile = f
	case "block":
		runtime.SetBlockProfileRate(1)
	case "mutex":
		runtime.SetMutexProfileFraction(1)
	default:
		if pprof.Lookup(p.name) == nil {
			return fmt.Errorf("unknown profile %q", p.name)
		}
	}
	return nil
}

func (p *profileFlags) stop() error {
	switch p.name {
	case "none":
		return nil
	case "cpu":
		if p.cpuFile == nil {
			return nil
		}
		pprof.StopCPUProfile()
		return p.cpuFile.Close()
	}
	f, err := os.Create(p.output)
	if err != nil {
		return err
	}
	if p.name == "heap" {
		runtime.GC()
	}
	if err := pprof.Lookup(p.name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
