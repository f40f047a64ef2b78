package devserver

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

const (
	// DefaultAddress is the gRPC address a server listens on when
	// Options.Address is empty: Temporal's usual local port.
	DefaultAddress = "127.0.0.1:7233"
	// DefaultNamespace is registered on every server.
	DefaultNamespace = "default"
	// DefaultReadyTimeout bounds how long Start waits for a server.
	DefaultReadyTimeout = 90 * time.Second
	// Headless as Options.UIPort starts the server without the web UI.
	Headless = -1
	// uiPortOffset is the CLI's rule for the UI port: gRPC port + 1000.
	uiPortOffset = 1000
)

// DefaultDynamicConfig holds the server settings this project relies on,
// passed to every server as --dynamic-config-value key=value. Values are JSON
// text given verbatim (true, 10, "text"). Every key was checked against the
// server v1.29.1 that CLI v1.5.1 embeds (see TestDefaultDynamicConfigKeysKnown
// and the start tests). Options.DynamicConfig is merged over this map.
var DefaultDynamicConfig = map[string]string{
	// SendMessage is an update; the client waits for the "accepted" stage and
	// Update-With-Start (ExecuteMultiOperation) starts a chat with its first turn.
	"frontend.enableUpdateWorkflowExecution":              "true",
	"frontend.enableUpdateWorkflowExecutionAsyncAccepted": "true",
	"frontend.enableExecuteMultiOperation":                "true",
	// Model calls may run eagerly on the worker that scheduled them.
	"system.enableActivityEagerExecution": "true",
	"system.enableEagerWorkflowStart":     "true",
	// Worker versioning for workflow-code changes (DESIGN: versioned workflows).
	"frontend.workerVersioningWorkflowAPIs": "true",
	"system.enableDeploymentVersions":       "true",
	// The durability rules assume the server's stock update limits: at most 10
	// in-flight updates per workflow (beyond that: resource exhausted) and
	// 2000 updates per run before continue-as-new must happen.
	"history.maxInFlightUpdates": "10",
	"history.maxTotalUpdates":    "2000",
	// Payload and history limits the chat must stay under (2 MB per payload,
	// 10 MB history warning), stated so tests see the production values.
	"limit.blobSize.error":   "2097152",
	"limit.historySize.warn": "10485760",
	// The dev server's single history shard reads its transfer queue at most 20 times
	// a second by default, so the workflow task after each activity waited up to 50 ms:
	// half of a turn's latency (measured by go run ./bench). A cluster's shards read
	// far more often.
	"history.transferProcessorMaxPollRPS": "1000",
}

// Options configure Start. The zero value starts an in-memory server on
// 127.0.0.1:7233 with the UI on 8233, output discarded.
type Options struct {
	// Address is the gRPC host:port to listen on; "" means DefaultAddress.
	// Port 0 ("127.0.0.1:0") picks a free port. "localhost" means 127.0.0.1,
	// since the server needs an IP.
	Address string
	// UIPort is the web UI's port. Zero means gRPC port + 1000, or a free
	// port when the gRPC port was picked because Address had port 0.
	// Headless (-1) starts no UI.
	UIPort int
	// DBFile is the SQLite file that keeps the server's state across
	// restarts; its folder is created. "" keeps everything in memory.
	DBFile string
	// Namespaces are registered at start (again on restart; existing ones are
	// kept). "default" is always included.
	Namespaces []string
	// DynamicConfig adds --dynamic-config-value key=value settings, merged
	// over DefaultDynamicConfig. Values are JSON text (true, 10, "x").
	DynamicConfig map[string]string
	// LogFile receives the server's stdout and stderr, appended; its folder
	// is created. "" discards them (a failed start then quotes no log lines
	// when detached).
	LogFile string
	// LogFormat is the server log format, "json" (default) or "text".
	LogFormat string
	// LogLevel is the server log level: debug, info, warn (default), error.
	LogLevel string
	// Detach starts the server in its own process group so that it outlives
	// this process, and writes PIDFile. Stop or StopDetached ends it.
	Detach bool
	// PIDFile receives the server's process id when Detach is set; "" means
	// DBFile + ".pid". Detach with neither set is an error.
	PIDFile string
	// Progress receives one-line progress messages; nil discards them.
	Progress io.Writer
	// ReadyTimeout bounds the wait for the server to answer; zero means
	// DefaultReadyTimeout (90s). A first start creates the SQLite schema.
	ReadyTimeout time.Duration
}

// plan is Options resolved into concrete values and ports.
type plan struct {
	host, port                    string
	uiPort, httpPort, metricsPort int
	namespaces                    []string
	dynamicConfig                 map[string]string
	dbFile, logFile, pidFile      string
	logFormat, logLevel           string
	detach                        bool
	progress                      io.Writer
	readyTimeout                  time.Duration
}

// resolve fills defaults and picks free ports.
func (o Options) resolve() (*plan, error) {
	p := &plan{
		dbFile: o.DBFile, logFile: o.LogFile, pidFile: o.PIDFile,
		logFormat: o.LogFormat, logLevel: o.LogLevel,
		detach: o.Detach, progress: o.Progress, readyTimeout: o.ReadyTimeout,
	}
	addr := o.Address
	if addr == "" {
		addr = DefaultAddress
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("devserver: address %q: %w", addr, err)
	}
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	p.host = host
	picked := port == "0"
	if picked {
		if port, err = freePort(host); err != nil {
			return nil, err
		}
	}
	p.port = port
	grpcPort, err := strconv.Atoi(port)
	if err != nil || grpcPort <= 0 || grpcPort > 65535 {
		return nil, fmt.Errorf("devserver: address %q: bad port", addr)
	}
	if err := p.resolveUIPort(o.UIPort, grpcPort, picked); err != nil {
		return nil, err
	}
	if p.httpPort, err = freePortInt(host); err != nil {
		return nil, err
	}
	if p.metricsPort, err = freePortInt(host); err != nil {
		return nil, err
	}
	p.namespaces = namespaceList(o.Namespaces)
	p.dynamicConfig = maps.Clone(DefaultDynamicConfig)
	maps.Copy(p.dynamicConfig, o.DynamicConfig)
	if p.logFormat == "" {
		p.logFormat = "json"
	}
	if p.logLevel == "" {
		p.logLevel = "warn"
	}
	if p.readyTimeout <= 0 {
		p.readyTimeout = DefaultReadyTimeout
	}
	if p.progress == nil {
		p.progress = io.Discard
	}
	return p, p.resolveDetach()
}

func (p *plan) resolveUIPort(uiPort, grpcPort int, picked bool) error {
	var err error
	switch {
	case uiPort == Headless:
		p.uiPort = 0
	case uiPort > 0 && uiPort <= 65535:
		p.uiPort = uiPort
	case uiPort == 0 && picked:
		p.uiPort, err = freePortInt(p.host)
	case uiPort == 0 && grpcPort+uiPortOffset <= 65535:
		p.uiPort = grpcPort + uiPortOffset
	default:
		err = fmt.Errorf("devserver: UI port %d: out of range (use -1 for no UI)", uiPort)
	}
	return err
}

func (p *plan) resolveDetach() error {
	if !p.detach {
		return nil
	}
	if !canDetach {
		return errors.New("devserver: Detach is not supported on this system")
	}
	if p.pidFile == "" && p.dbFile == "" {
		return errors.New("devserver: Detach needs PIDFile or DBFile (for DBFile.pid)")
	}
	if p.pidFile == "" {
		p.pidFile = p.dbFile + ".pid"
	}
	return nil
}

// namespaceList returns "default" followed by the other names, deduplicated.
func namespaceList(names []string) []string {
	out := []string{DefaultNamespace}
	for _, n := range names {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// address is the gRPC host:port clients dial.
func (p *plan) address() string { return net.JoinHostPort(p.host, p.port) }

// uiURL is the web UI's address, or "" when headless.
func (p *plan) uiURL() string {
	if p.uiPort == 0 {
		return ""
	}
	return "http://" + net.JoinHostPort(p.host, strconv.Itoa(p.uiPort))
}

// args is the command line after the CLI binary.
func (p *plan) args() []string {
	args := []string{"server", "start-dev",
		"--ip", p.host,
		"--port", p.port,
		"--http-port", strconv.Itoa(p.httpPort),
		"--metrics-port", strconv.Itoa(p.metricsPort),
		"--log-level", p.logLevel,
		"--log-format", p.logFormat,
	}
	if p.uiPort == 0 {
		args = append(args, "--headless")
	} else {
		args = append(args, "--ui-port", strconv.Itoa(p.uiPort))
	}
	if p.dbFile != "" {
		args = append(args, "--db-filename", p.dbFile)
	}
	for _, ns := range p.namespaces[1:] { // the CLI always adds "default"
		args = append(args, "--namespace", ns)
	}
	for _, k := range slices.Sorted(maps.Keys(p.dynamicConfig)) {
		args = append(args, "--dynamic-config-value", k+"="+p.dynamicConfig[k])
	}
	return args
}

// dataDescription says where the server keeps its state, for progress lines.
func (p *plan) dataDescription() string {
	if p.dbFile == "" {
		return "data in memory"
	}
	if abs, err := filepath.Abs(p.dbFile); err == nil {
		return "data file " + abs
	}
	return "data file " + p.dbFile
}
