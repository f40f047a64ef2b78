package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	// CLIModule is the Go package path of the Temporal CLI main package.
	CLIModule = "github.com/temporalio/cli/cmd/temporal"
	// CLIVersion is the CLI release this project builds and tests against. It
	// embeds Temporal server v1.29.1. Newer tags do not build with `go install`.
	CLIVersion = "v1.5.1"
	// CLIEnv names the environment variable that, when set, is the path of the
	// Temporal CLI binary to use instead of searching for one.
	CLIEnv = "AGENTCHAT_TEMPORAL_CLI"
	// cliName is the CLI's file name in PATH and in the Go bin folder.
	cliName = "temporal"
	// buildProgressEvery is how often EnsureCLI reports that the build goes on.
	buildProgressEvery = 15 * time.Second
	// stderrTailLines is how many lines of the go command's stderr an
	// EnsureCLI error quotes.
	stderrTailLines = 20
)

// FindCLI returns the path of a Temporal CLI binary. It looks, in order, at
// $AGENTCHAT_TEMPORAL_CLI (which must then name an executable file, or FindCLI
// fails without looking further), `temporal` in PATH, and `temporal` in the
// folder `go install` writes to ($(go env GOBIN), else $(go env GOPATH)/bin).
// It returns an error wrapping ErrCLINotFound when none exists. It does not
// check the binary's version.
func FindCLI() (string, error) {
	if p := os.Getenv(CLIEnv); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("devserver: $%s=%q: %w", CLIEnv, p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath(cliName); err == nil {
		return p, nil
	}
	if dir := goBinDir(); dir != "" {
		p := filepath.Join(dir, cliName)
		if checkExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w (set $%s, put %q in PATH, or run `go install %s@%s`)",
		ErrCLINotFound, CLIEnv, cliName, CLIModule, CLIVersion)
}

// checkExecutable returns nil when path is a regular file with an execute bit.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (mode %v)", fi.Mode())
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("not executable (mode %v)", fi.Mode().Perm())
	}
	return nil
}

// goBinDir returns where `go install` puts binaries, or "" when the go
// command is missing.
func goBinDir() string {
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 0 && strings.TrimSpace(lines[0]) != "" {
		return strings.TrimSpace(lines[0])
	}
	if len(lines) > 1 {
		// GOPATH may be a list; go install uses the first entry.
		first := filepath.SplitList(strings.TrimSpace(lines[1]))
		if len(first) > 0 && first[0] != "" {
			return filepath.Join(first[0], "bin")
		}
	}
	return ""
}

// EnsureCLI returns FindCLI's answer when it finds a binary. Otherwise it runs
// `go install CLIModule@CLIVersion` (environment inherited, GOFLAGS=-mod=mod)
// and returns the installed binary. While building it writes a line to w at
// the start and then every 15 seconds (w may be nil). Concurrent callers on
// one machine are serialized by a lock file, so the CLI is built once. A
// failed build returns an error quoting the tail of the go command's stderr.
func EnsureCLI(ctx context.Context, w io.Writer) (string, error) {
	if p, err := FindCLI(); err == nil || !errors.Is(err, ErrCLINotFound) {
		return p, err
	}
	if w == nil {
		w = io.Discard
	}
	unlock, err := lockBuild(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	// Another process may have built it while we waited for the lock.
	if p, err := FindCLI(); err == nil {
		return p, nil
	}
	if err := goInstallCLI(ctx, w); err != nil {
		return "", err
	}
	p, err := FindCLI()
	if err != nil {
		return "", fmt.Errorf("devserver: built the Temporal CLI but cannot find it: %w", err)
	}
	return p, nil
}

// goInstallCLI runs the go install command, reporting progress to w.
func goInstallCLI(ctx context.Context, w io.Writer) error {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("%w and the go command is not in PATH to build it: %v", ErrCLINotFound, err)
	}
	fmt.Fprintf(w, "agentchat: building the Temporal CLI %s from the Go module proxy (first time only, about 5 minutes on 2 cores)...\n", CLIVersion)
	cmd := exec.CommandContext(ctx, goCmd, "install", CLIModule+"@"+CLIVersion)
	// Outside any module or workspace so that neither can steer the build.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	cmd.Stdout = stderr

	start := time.Now()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(buildProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintf(w, "... still building, %s elapsed\n", time.Since(start).Truncate(time.Second))
			}
		}
	}()
	err = cmd.Run()
	close(done)
	if err != nil {
		return fmt.Errorf("devserver: go install %s@%s failed after %s: %w\n%s",
			CLIModule, CLIVersion, time.Since(start).Truncate(time.Second), err, stderr.lastLines(stderrTailLines))
	}
	fmt.Fprintf(w, "agentchat: built the Temporal CLI in %s\n", time.Since(start).Truncate(time.Second))
	return nil
}
