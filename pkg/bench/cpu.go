package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// CPU is processor time used during a phase, in seconds: by the server
// process, by this (client) process, and by everything else on the machine
// (from /proc/stat; steal time included). On a few shared cores it shows
// which side a phase is bound by and whether other work competed.
type CPU struct {
	Server float64 `json:"server_s"`
	Client float64 `json:"client_s"`
	Other  float64 `json:"other_s"`
}

type cpuSnap struct {
	server, client, machine time.Duration
}

// machineBusy is the busy time of all CPUs (user, nice, system, irq,
// softirq, steal) from /proc/stat.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy uint64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
		n, _ := strconv.ParseUint(f[i], 10, 64)
		busy += n
	}
	return time.Duration(busy) * clockTick
}

// clockTick is USER_HZ, 100 on every Linux platform Go supports.
const clockTick = 10 * time.Millisecond

// procCPU is the user+system time of process pid from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	// Fields after the command: state is field 3, utime 14, stime 15.
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return time.Duration(u+st) * clockTick, nil
}

// procCPUWithChildren is procCPU plus the CPU time of the children pid
// waited for (cutime, cstime).
func procCPUWithChildren(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	var sum uint64
	for _, k := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		n, err := strconv.ParseUint(f[k], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
		}
		sum += n
	}
	return time.Duration(sum) * clockTick, nil
}

func (c *Client) cpuNow() cpuSnap {
	var s cpuSnap
	if c.serverPID > 0 {
		s.server, _ = procCPU(c.serverPID)
	}
	s.client = selfCPU()
	s.machine = machineBusy()
	return s
}

func (c *Client) cpuSince(start cpuSnap) CPU {
	now := c.cpuNow()
	srv, cli := now.server-start.server, now.client-start.client
	other := max(0, now.machine-start.machine-srv-cli)
	return CPU{Server: round(srv.Seconds(), 2), Client: round(cli.Seconds(), 2), Other: round(other.Seconds(), 2)}
}
