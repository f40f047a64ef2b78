// Command worker hosts agentchat: the AgentChat workflow and its activities, on one
// task queue of one Temporal namespace, until SIGINT or SIGTERM.
//
//	go run ./worker --offline            # every agent answered by the built-in offline model
//	go run ./worker --agents agents.yaml # real endpoints; keys from the environment
//
// Temporal is reached through its standard environment configuration
// (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TLS, profiles).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/chatmcp"
	"github.com/agentchat/agentchat/internal/logx"
	"github.com/agentchat/agentchat/internal/serve"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/wire"
)

func main() {
	if err := command().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func command() *cobra.Command {
	var (
		opts          serve.Options
		dial          agentchat.DialOptions
		verbose       bool
		listen        string
		logFormat     string
		metricsListen string
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run an agentchat worker: the AgentChat workflow and its model-call activities",
		Long: `Run an agentchat worker until interrupted (SIGINT/SIGTERM stop it gracefully:
running model calls get up to 30s to finish).

Agents come from --agents, else $AGENTCHAT_AGENTS, else the built-in example
(agents helper, writer, reviewer, clerk, moderator and editor). Real endpoints read their API key from the
variable the config names (OPENAI_API_KEY for the default endpoint); --offline
answers every agent with the built-in deterministic model instead.

Temporal: TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE (default
"default"), TEMPORAL_API_KEY, TEMPORAL_TLS_*, or a profile of the Temporal CLI's
config file; --address and --namespace override them.

OpenTelemetry is off unless its standard environment turns it on:
OTEL_TRACES_EXPORTER=otlp|console|none, OTEL_METRICS_EXPORTER=otlp|console|prometheus|none,
OTEL_EXPORTER_OTLP_ENDPOINT (OTLP for both), OTEL_SERVICE_NAME (default
agentchat-worker); OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true puts message
content into spans. --metrics-listen serves Prometheus metrics at /metrics.

--mcp-listen serves chats to MCP clients over streamable HTTP. Set
AGENTCHAT_MCP_TOKEN to a secret token and clients must send it as
Authorization: Bearer <token> (others get 401); without it the worker serves
loopback addresses only and refuses others.`,
		Example: `  go run ./worker --offline
  OPENAI_API_KEY=sk-... go run ./worker
  OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=llama3.2 go run ./worker
  AGENTCHAT_MCP_TOKEN=$(openssl rand -hex 32) go run ./worker --offline --mcp-listen :8765`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			level := slog.LevelInfo
			if verbose {
				level = slog.LevelDebug
			}
			logger, err := logx.New(os.Stderr, logFormat, level)
			if err != nil {
				return err
			}
			opts.Logger, dial.Logger, dial.CodecLogger = logger, logger, logger
			mcpOpts := chatmcp.ListenOptions{Token: os.Getenv(chatmcp.TokenEnv)}
			if listen != "" {
				if err := chatmcp.CheckListen(listen, mcpOpts); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return run(ctx, dial, opts, listen, mcpOpts, metricsListen, logger)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.AgentsPath, "agents", "", "agent config file (YAML or JSON); default $"+serve.AgentsEnv+", then the built-in example")
	f.BoolVar(&opts.Offline, "offline", false, "answer every agent with the built-in offline model (no API key needed)")
	f.StringVar(&opts.TaskQueue, "task-queue", wire.TaskQueue, "task queue to poll")
	f.StringVar(&dial.Address, "address", "", "Temporal frontend host:port (default $TEMPORAL_ADDRESS or localhost:7233)")
	f.StringVar(&dial.Namespace, "namespace", "", "Temporal namespace (default $TEMPORAL_NAMESPACE or \"default\")")
	f.StringToStringVar(&opts.Clusters, "cluster", nil, "another Temporal cluster chats may migrate to: name=host:port[/namespace] (repeatable)")
	f.StringVar(&opts.ClusterName, "cluster-name", "local", "what this worker calls its own cluster (recorded in exports)")
	f.StringVar(&opts.StoreDir, "store", "", "folder for exported documents too large to travel inline (default $AGENTCHAT_DATA_DIR/exports)")
	f.StringArrayVar(&opts.MessageStores, "message-store", nil, "message store URL for long chats' older messages (history pages) and large bodies: sqlite:///path.db or postgres://... (repeatable; the first is the default; default sqlite in $AGENTCHAT_DATA_DIR/messages.db)")
	f.DurationVar(&opts.UnknownAgentWait, "unknown-agent-wait", wire.DefaultUnknownAgentWait, "how long a chat tries this queue's other workers for an agent or a tool, selection or termination function this worker lacks (rolling deploys), before the call fails with UnknownAgent or UnknownFunction")
	f.StringVar(&opts.Identity, "identity", "", "worker identity the server lists among the task queue's pollers (default Temporal's, <pid>@<host>@)")
	f.StringVar(&dial.KeysPath, "keys", "", "key ring file that turns encryption at rest on (default $"+keyring.Env+"; none: off)")
	f.StringVar(&listen, "mcp-listen", "", "also serve chats as an MCP server (streamable HTTP) at HOST:PORT, path /mcp: tools start_chat, send_message, get_state, get_history, export_chat, approve_call, list_chats. With $"+chatmcp.TokenEnv+" set, every request must send Authorization: Bearer <that token>; without it only a loopback HOST (127.0.0.1, localhost) is allowed")
	f.BoolVarP(&verbose, "verbose", "v", false, "log at debug level")
	f.StringVar(&logFormat, "log-format", "text", "log lines as text or json (log/slog handlers)")
	f.StringVar(&metricsListen, "metrics-listen", "", "serve Prometheus metrics (Temporal SDK, gen_ai, turns) at http://ADDR/metrics, e.g. :9464")
	return cmd
}

func run(ctx context.Context, dial agentchat.DialOptions, opts serve.Options, listen string, mcpOpts chatmcp.ListenOptions, metricsListen string, logger *slog.Logger) error {
	tel, err := serve.SetupTelemetry(ctx, &dial, &opts, metricsListen)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(sctx); err != nil {
			logger.Warn("telemetry: flushing on stop", "error", err)
		}
	}()
	if tel.MetricsAddr != "" {
		logger.Info("metrics served", "url", "http://"+tel.MetricsAddr+"/metrics")
	}
	c, err := agentchat.Dial(ctx, dial)
	if err != nil {
		return err
	}
	defer c.Close()
	opts.Namespace = c.Namespace()
	opts.Keys = c.Keys()
	w, err := serve.Start(c.Temporal(), opts)
	if err != nil {
		return err
	}
	logger.Info("worker started", "namespace", c.Namespace(), "taskQueue", w.TaskQueue, "messageStores", w.MessageStoreURLs,
		"agents", w.Registry.IDs(), "config", w.AgentsSource, "model", w.ModelInfo, "encryption", encryption(c))
	if listen != "" {
		chats := agentchat.NewClient(c.Temporal(), agentchat.ClientOptions{TaskQueue: w.TaskQueue, Namespace: c.Namespace(), Keys: c.Keys(),
			MessageStores: w.MessageStores()}) // with the codec and ring of c
		addr, stopMCP, err := chatmcp.Listen(listen, chatmcp.NewServer(chats, "1"), mcpOpts, logger)
		if err != nil {
			w.Stop()
			return err
		}
		defer stopMCP()
		logger.Info("serving chats as an MCP server (streamable HTTP)", "url", "http://"+addr+chatmcp.Path,
			"bearerToken", mcpOpts.Token != "")
	}
	<-ctx.Done()
	logger.Info("stopping: letting running activities finish", "timeout", serve.StopTimeout)
	w.Stop()
	logger.Info("worker stopped")
	return nil
}

// encryption says whether payloads are encrypted, and with which current key.
func encryption(c *agentchat.Client) string {
	if c.Keys() == nil {
		return "off"
	}
	return "on, current key " + c.Keys().Current()
}
