package devserver

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// helperEnv, when set, makes the test binary a helper process that starts a
// server, prints "<address> <pid>" and then either waits to be killed
// ("attached") or exits at once ("detached", with the PID file named by
// helperPIDEnv). helperLogEnv names the server's log file. Tests use it to see what happens when the process that
// started a server goes away.
const (
	helperEnv    = "AGENTCHAT_DEVSERVER_TEST_HELPER"
	helperPIDEnv = "AGENTCHAT_DEVSERVER_TEST_PIDFILE"
	helperLogEnv = "AGENTCHAT_DEVSERVER_TEST_LOGFILE"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode))
	}
	os.Exit(m.Run())
}

func helperMain(mode string) int {
	opts := Options{Address: "127.0.0.1:0", UIPort: Headless, Progress: os.Stderr, LogFile: os.Getenv(helperLogEnv)}
	if mode == "detached" {
		opts.Detach, opts.PIDFile = true, os.Getenv(helperPIDEnv)
	}
	s, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%s %d\n", s.Address, s.PID)
	if mode == "detached" {
		return 0 // leave without Stop: the server must outlive us
	}
	select {} // wait to be killed
}
