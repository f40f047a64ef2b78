package bench

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/PID/stat times: 100 on every
// architecture Go supports.
const clockTicks = 100

// pidCPU returns the CPU time (user and system) process pid has used so far, from
// /proc/PID/stat (proc(5): fields 14 utime and 15 stime, in clock ticks).
func pidCPU(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces: count fields
	// after its closing one, where field 3 (state) is the first.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[14-3], 10, 64)
	stime, err2 := strconv.ParseInt(fields[15-3], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, true
}

// loadAverage returns the 1-minute load average (/proc/loadavg), so that a table says
// whether other work shared the machine.
func loadAverage() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// localServerPID finds the process of a Temporal dev server on this machine that
// listens on address's port (`temporal server start-dev ... --port PORT`, as
// internal/devserver and the Temporal CLI start it); zero when there is none.
func localServerPID(address string) int {
	host, port, err := net.SplitHostPort(address)
	if err != nil || !isLocalHost(host) {
		return 0
	}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if slices.Contains(args, "start-dev") && slices.Contains(args, "server") && flagValue(args, "--port") == port {
			return pid
		}
	}
	return 0
}

// flagValue returns the value after name in args ("--port 7233" or "--port=7233").
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func isLocalHost(host string) bool {
	if host == "localhost" || host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}
