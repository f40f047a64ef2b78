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

// ServerFiles returns the SQLite, log and pid file paths in dataDir.
func ServerFiles(dataDir string) (db, log, pid string) {
	return filepath.Join(dataDir, "temporal.db"), filepath.Join(dataDir, "temporal.log"), filepath.Join(dataDir, "temporal.pid")
}

// EnsureServer returns the Temporal server answering at address, or starts the dev
// server there (detached, its SQLite file, log and pid file in dataDir) when none
// answers. Building the Temporal CLI on first use prints progress to progress.
func EnsureServer(ctx context.Context, address, dataDir string, progress io.Writer) (Local, error) {
	if address == "" {
		address = os.Getenv("TEMPORAL_ADDRESS")
	}
	if address == "" {
		address = "localhost:7233"
	}
	if devserver.Reachable(ctx, address, 2*time.Second) {
		return Local{Address: address, UIURL: guessUI(address)}, nil
	}
	db, logf, pid := ServerFiles(dataDir)
	s, err := devserver.Start(ctx, devserver.Options{Address: address, DBFile: db, LogFile: logf,
		Detach: true, PIDFile: pid, Progress: progress, Namespaces: []string{"default", SecondNamespace}})
	if err != nil {
		return Local{}, fmt.Errorf("no Temporal server answers at %s and starting the dev server failed: %w", address, err)
	}
	return Local{Address: s.Address, UIURL: s.UIURL, Started: true, PID: s.PID, DBFile: db, LogFile: logf, PIDFile: pid}, nil
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

// StopServer stops the detached dev server whose pid file is in dataDir.
func StopServer(dataDir string) error {
	_, _, pid := ServerFiles(dataDir)
	return devserver.StopDetached(pid)
}

func stopServer(srv Local, out io.Writer) error {
	err := devserver.StopDetached(srv.PIDFile)
	if err == nil {
		fmt.Fprintf(out, "stopped the Temporal dev server (pid %d)\n", srv.PID)
	}
	return err
}
