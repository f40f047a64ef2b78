package cli

import (
	"errors"
	"fmt"
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
` + devserver.CLIVersion + `, built with go install on first use). Each server starter starts
keeps its own SQLite file, log and pid file in --data ($AGENTCHAT_DATA_DIR, default
.agentchat), named by its address: temporal-HOST-PORT.db, .log and .pid. start, stop
and status act on the server at --listen, else --address, else $TEMPORAL_ADDRESS, else
localhost:7233.`,
	}
	cmd.PersistentFlags().StringVar(&dataDir, "data", "", "folder for the server's files (default $AGENTCHAT_DATA_DIR or .agentchat)")
	cmd.PersistentFlags().StringVar(&address, "listen", "", "host:port of the server (default --address, $TEMPORAL_ADDRESS or localhost:7233); port 0 picks a free one for start")
	dir := func() string {
		if dataDir != "" {
			return dataDir
		}
		return demo.DataDir()
	}
	listen := func() string { // --listen, else the global --address, else $TEMPORAL_ADDRESS or the default
		if address != "" {
			return demo.ResolveAddress(address)
		}
		return demo.ResolveAddress(g.dial.Address)
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
			fmt.Fprintf(s.Out, "Temporal dev server running at %s (pid %d)\n  UI:   %s\n  data: %s\n  log:  %s\nstop it with: %s\n",
				srv.Address, srv.PID, srv.UIURL, srv.DBFile, srv.LogFile, srv.StopCommand(dataDir))
			return nil
		},
	}
	stop := &cobra.Command{
		Use:   "stop",
		Short: "Stop the dev server that 'server start' or the demo started at the address",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			srv, err := demo.StopServer(dir(), listen())
			if err != nil {
				if errors.Is(err, devserver.ErrNotRunning) {
					return fmt.Errorf("nothing to stop: %w (see --listen and --data)", err)
				}
				return err
			}
			fmt.Fprintf(s.Out, "Temporal dev server at %s stopped (pid %d)\n", srv.Address, srv.PID)
			return nil
		},
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Say whether a Temporal server answers at the address, and whether starter started it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a := listen()
			srv, notOurs := demo.Find(dir(), a)
			if !devserver.Reachable(cmd.Context(), a, 3*time.Second) {
				if notOurs == nil {
					return fmt.Errorf("no Temporal server answers at %s, though the dev server starter started there runs (pid %d; log %s)", a, srv.PID, srv.LogFile)
				}
				return fmt.Errorf("no Temporal server answers at %s (start one there: go run ./starter server start --listen %s)", a, a)
			}
			fmt.Fprintf(s.Out, "a Temporal server answers at %s\n", a)
			if notOurs == nil {
				fmt.Fprintf(s.Out, "  started by starter (pid %d)\n  data: %s\n  log:  %s\n", srv.PID, srv.DBFile, srv.LogFile)
			}
			return nil
		},
	}
	cmd.AddCommand(start, stop, status)
	return cmd
}
