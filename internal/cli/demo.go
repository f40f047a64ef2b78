package cli

import (
	"github.com/spf13/cobra"

	"github.com/agentchat/agentchat/internal/demo"
)

func demoCmd(g *globals, s Streams) *cobra.Command {
	opts := demo.Options{Out: s.Out}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the demo on a real Temporal server: a thread, a temporary thread, a group chat, save and resume, migration",
		Long: `Run the demo chat end to end on embedded defaults.

If no Temporal server answers at --address ($TEMPORAL_ADDRESS, default
localhost:7233), the demo starts the official dev server there (temporal server
start-dev, its SQLite file in $AGENTCHAT_DATA_DIR or .agentchat/), building the
Temporal CLI with go install the first time (a few minutes, with progress). The
server keeps running afterwards so the printed UI links work; stop it with
"starter server stop", or pass --stop-server.

A worker runs in-process on the task queue "agentchat-demo". The model is the
built-in offline model unless OPENAI_API_KEY is set (OPENAI_BASE_URL and
OPENAI_MODEL select another OpenAI-compatible endpoint and model); the demo says
which one answers.`,
		Example: `  go run ./starter demo
  OPENAI_API_KEY=sk-... go run ./starter demo
  go run ./starter demo --offline --stop-server`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Dial = g.dial
			return demo.Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Offline, "offline", false, "use the offline model even if OPENAI_API_KEY is set")
	f.BoolVar(&opts.StopServer, "stop-server", false, "stop the dev server at the end if the demo started it")
	f.StringVar(&opts.DataDir, "data", "", "folder for the dev server's files (default $AGENTCHAT_DATA_DIR or .agentchat)")
	f.StringVar(&opts.AgentsPath, "agents", "", "agent config file (default: the built-in example)")
	return cmd
}
