package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentchat/agentchat/internal/demo"
	"github.com/agentchat/agentchat/internal/devserver"
)

func serverCmd(g *globals, s Streams) *cobra.Command {
	var dataDir, address string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Start, stop or check the local Temporal dev server",
		Long: `Manage the local Temporal dev server (temporal server start-dev, official CLI
` + devserver.CLIVersion + `, built with go install on first use). Its SQLite file, log and pid
file live in --data ($AGENTCHAT_DATA_DIR, default .agentchat).`,
	}
	cmd.PersistentFlags().StringVar(&dataDir, "data", "", "folder for the server's files (default $AGENTCHAT_DATA_DIR or .agentchat)")
	cmd.PersistentFlags().StringVar(&address, "listen", "", "host:port to serve on (default --address, $TEMPORAL_ADDRESS or localhost:7233)")
	dir := func() string {
		if dataDir != "" {
			return dataDir
		}
		return demo.DataDir()
	}
	listen := func() string { // --listen, else the global --address
		if address != "" {
			return address
		}
		return g.dial.Address
	}
	start := &cobra.Command{
		Use:   "start",
		Short: "Start the dev server in the background unless one answers already",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := demo.EnsureServer(cmd.Context(), listen(), dir(), s.Err)
			if err != nil {
				return err
			}
			if !srv.Started {
				fmt.Fprintf(s.Out, "a Temporal server already answers at %s\n", srv.Address)
				return nil
			}
			fmt.Fprintf(s.Out, "Temporal dev server running at %s (pid %d)\n  UI:   %s\n  data: %s\n  log:  %s\nstop it with: go run ./starter server stop\n",
				srv.Address, srv.PID, srv.UIURL, srv.DBFile, srv.LogFile)
			return nil
		},
	}
	stop := &cobra.Command{
		Use:   "stop",
		Short: "Stop the dev server that 'server start' or the demo started",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := demo.StopServer(dir()); err != nil {
				if errors.Is(err, devserver.ErrNotRunning) {
					return fmt.Errorf("nothing to stop: no dev server started by starter is running with its files in %s (see --data)", dir())
				}
				return err
			}
			fmt.Fprintln(s.Out, "Temporal dev server stopped")
			return nil
		},
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Say whether a Temporal server answers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a := listen()
			if a == "" {
				a = os.Getenv("TEMPORAL_ADDRESS")
			}
			if a == "" {
				a = "localhost:7233"
			}
			if !devserver.Reachable(cmd.Context(), a, 3*time.Second) {
				return fmt.Errorf("no Temporal server answers at %s (start one: go run ./starter server start)", a)
			}
			fmt.Fprintf(s.Out, "a Temporal server answers at %s\n", a)
			return nil
		},
	}
	cmd.AddCommand(start, stop, status)
	return cmd
}
