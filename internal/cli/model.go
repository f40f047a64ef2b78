package cli

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/hosting"
	"github.com/agentchat/agentchat/offline"
)

// modelCmd serves the offline model on its own, for any OpenAI client to try.
func modelCmd(s Streams) *cobra.Command {
	var listen, agentsFile string
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Serve the offline OpenAI-compatible model on its own",
		Long: `Serve the built-in offline model (package offline) over HTTP until interrupted:
Chat Completions (with tools and streaming), Responses and Assistants, as strict as
OpenAI about its request rules, answering deterministically. Point any OpenAI client
at the base URL it prints. The scripted replies of the agents in --agents (default:
the example registry) answer requests that name the agent in the X-Agentchat-Agent
header; other requests get the default reply. Refused requests are logged.`,
		Example: `  go run ./starter model --listen 127.0.0.1:8000
  curl -s http://127.0.0.1:8000/v1/chat/completions -H 'Content-Type: application/json' \
    -d '{"model":"offline","messages":[{"role":"user","content":"Hello"}]}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			scripts, err := modelScripts(agentsFile)
			if err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(s.Err, nil))
			srv, err := offline.StartOn(listen, offline.Options{Scripts: scripts, Logger: log})
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "offline model serving at %s (OPENAI_BASE_URL); any API key is accepted. Stop with Ctrl-C.\n", srv.URL())
			<-cmd.Context().Done()
			return srv.Close()
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8000", "host:port to serve on")
	cmd.Flags().StringVar(&agentsFile, "agents", "", "agent registry whose offline scripts to answer with (default: the example registry)")
	return cmd
}

// modelScripts are the offline scripts of the registry in file, or of the example one.
func modelScripts(file string) (map[string][]offline.Reply, error) {
	var (
		cfg agents.Config
		err error
	)
	if file != "" {
		cfg, err = agents.LoadConfig(file)
	} else {
		cfg, err = agents.ParseConfig(agents.ExampleConfig)
	}
	if err != nil {
		return nil, err
	}
	return hosting.OfflineScripts(agents.NewRegistry(cfg))
}
