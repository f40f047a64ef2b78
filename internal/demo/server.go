package demo

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentchat/agentchat/internal/devserver"
	"github.com/agentchat/agentchat/internal/serve"
)

// Local is the Temporal server the demo and `starter server` use.
type Local struct {
	Address string
	UIURL   string // "" when unknown
	Started bool   // started by this call (detached; it outlives the process)
	PID     int
	DBFile  string
	LogFile string
	PIDFile string
}

// DataDir returns $AGENTCHAT_DATA_DIR, or the default data folder.
func DataDir() string { return serve.DataDir() }

// defaultAddress is where a server is looked for when neither the caller nor
// $TEMPORAL_ADDRESS names one: Temporal's usual local port.
const defaultAddress = "localhost:7233"

// ResolveAddress returns address, else $TEMPORAL_ADDRESS, else localhost:7233, with
// an empty host or "localhost" written 127.0.0.1, as the dev server listens on an IP.
// A value that is not host:port is returned as given (the dial reports it).
func ResolveAddress(address string) string {
	if address == "" {
		address = os.Getenv("TEMPORAL_ADDRESS")
	}
	if address == "" {
		address = defaultAddress
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return address
	}
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// ServerFiles returns the SQLite, log and pid file paths of the dev server at address
// (as ResolveAddress writes it) in dataDir: temporal-HOST-PORT.db, .log and .pid, so
// that servers at two addresses never share a file.
func ServerFiles(dataDir, address string) (db, log, pid string) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		host, port = address, ""
	}
	key := strings.NewReplacer(":", "_", "/", "_", "\\", "_", "%", "_").Replace(host) + "-" + port
	base := filepath.Join(dataDir, "temporal-"+key)
	return base + ".db", base + ".log", base + ".pid"
}

// legacyPIDFile is where starters before per-address files kept the one server's pid.
func legacyPIDFile(dataDir string) string { return filepath.Join(dataDir, "temporal.pid") }

// EnsureServer returns the Temporal server answering at address (ResolveAddress),
// or starts the dev server there (detached, its files in dataDir as ServerFiles
// names them) when none answers. Port 0 picks a free port first. Building the
// Temporal CLI on first use prints progress to progress.
func EnsureServer(ctx context.Context, address, dataDir string, progress io.Writer) (Local, error) {
	address = ResolveAddress(address)
	if host, port, err := net.SplitHostPort(address); err == nil && port == "0" {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return Local{}, fmt.Errorf("find a free port on %s: %w", host, err)
		}
		address = l.Addr().String()
		_ = l.Close()
	}
	if devserver.Reachable(ctx, address, 2*time.Second) {
		srv, _ := Find(dataDir, address)
		srv.Address, srv.UIURL = address, guessUI(address)
		return srv, nil
	}
	db, logf, pid := ServerFiles(dataDir, address)
	s, err := devserver.Start(ctx, devserver.Options{Address: address, DBFile: db, LogFile: logf,
		Detach: true, PIDFile: pid, Progress: progress, Namespaces: []string{"default", SecondNamespace}})
	if err != nil {
		return Local{}, fmt.Errorf("no Temporal server answers at %s and starting the dev server failed: %w", address, err)
	}
	return Local{Address: s.Address, UIURL: s.UIURL, Started: true, PID: s.PID, DBFile: db, LogFile: logf, PIDFile: pid}, nil
}

// Find returns the running dev server that starter started at address (as
// ResolveAddress writes it) with its files in dataDir: the one of its pid file, or
// one a starter before per-address files started there (temporal.pid). Started is
// false in the result. It returns an error wrapping devserver.ErrNotRunning that
// lists the servers running from dataDir when there is none at address.
func Find(dataDir, address string) (Local, error) {
	db, logf, pidFile := ServerFiles(dataDir, address)
	if pid, at, err := devserver.DetachedServer(pidFile); err == nil && (at == "" || at == address) {
		return Local{Address: address, PID: pid, DBFile: db, LogFile: logf, PIDFile: pidFile}, nil
	}
	legacy := legacyPIDFile(dataDir)
	if pid, at, err := devserver.DetachedServer(legacy); err == nil && at == address {
		return Local{Address: address, PID: pid, DBFile: filepath.Join(dataDir, "temporal.db"),
			LogFile: filepath.Join(dataDir, "temporal.log"), PIDFile: legacy}, nil
	}
	msg := fmt.Sprintf("no dev server started by starter runs at %s with its files in %s", address, dataDir)
	var others []string
	for _, o := range Running(dataDir) {
		others = append(others, fmt.Sprintf("%s (pid %d; stop it with --listen %s)", o.Address, o.PID, o.Address))
	}
	if len(others) > 0 {
		msg += "; running from there: " + strings.Join(others, ", ")
	}
	return Local{}, notRunning(msg)
}

// notRunning is an error that says msg and wraps devserver.ErrNotRunning.
type notRunning string

func (e notRunning) Error() string { return string(e) }
func (e notRunning) Unwrap() error { return devserver.ErrNotRunning }

// Running returns the dev servers that starter started with their files in dataDir
// and that still run, by address ("" when it cannot be read), Started false.
func Running(dataDir string) []Local {
	files, _ := filepath.Glob(filepath.Join(dataDir, "temporal-*.pid"))
	files = append(files, legacyPIDFile(dataDir))
	var out []Local
	for _, f := range files {
		pid, at, err := devserver.DetachedServer(f)
		if err != nil {
			continue
		}
		base := strings.TrimSuffix(f, ".pid")
		out = append(out, Local{Address: at, PID: pid, DBFile: base + ".db", LogFile: base + ".log", PIDFile: f})
	}
	return out
}

// StopCommand is the command that stops srv: --listen unless it serves Temporal's
// usual local port, --data when dataDir is not "" (named explicitly).
func (srv Local) StopCommand(dataDir string) string {
	cmd := "go run ./starter server stop"
	if srv.Address != ResolveAddress(defaultAddress) {
		cmd += " --listen " + srv.Address
	}
	if dataDir != "" {
		cmd += " --data " + dataDir
	}
	return cmd
}

// guessUI returns $TEMPORAL_UI_URL, or the dev server's UI address (gRPC port + 1000)
// for a local address; "" otherwise.
func guessUI(address string) string {
	if u := os.Getenv("TEMPORAL_UI_URL"); u != "" {
		return u
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return ""
	}
	p, err := strconv.Atoi(port)
	if err != nil || (host != "localhost" && host != "127.0.0.1" && host != "::1") {
		return ""
	}
	return fmt.Sprintf("http://%s:%d", host, p+1000)
}

// WorkflowURL returns the Temporal UI page of one workflow run.
func WorkflowURL(ui, namespace, workflowID, runID string) string {
	if ui == "" {
		return ""
	}
	return fmt.Sprintf("%s/namespaces/%s/workflows/%s/%s/history", ui, url.PathEscape(namespace),
		url.PathEscape(workflowID), url.PathEscape(runID))
}

// StopServer stops the detached dev server that starter started at address
// (ResolveAddress) with its files in dataDir, and returns it. Where none runs there,
// the error wraps devserver.ErrNotRunning and names the servers that run from
// dataDir; no other server is touched.
func StopServer(dataDir, address string) (Local, error) {
	srv, err := Find(dataDir, ResolveAddress(address))
	if err != nil {
		return Local{}, err
	}
	return srv, devserver.StopDetached(srv.PIDFile)
}

func stopServer(srv Local, out io.Writer) error {
	err := devserver.StopDetached(srv.PIDFile)
	if err == nil {
		fmt.Fprintf(out, "stopped the Temporal dev server (pid %d)\n", srv.PID)
	}
	return err
}
