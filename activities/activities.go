package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// Activities are the agentchat activities. Safe for concurrent use. They are the
// assembly of one part per concern, each built from its parts of Config and holding
// only what it needs: models (the agents' model calls and the strategies' asks),
// tools (Go functions and MCP servers), stores (message stores and pages), transfers
// (export, import, migration), and unknowns (this worker's UnknownAgent and
// UnknownFunction answers). Every exported method is an activity of one part.
type Activities struct {
	models    *models
	tools     *tools
	stores    *stores
	transfers *transfers
	unknowns  *unknowns
}

// ErrMissingAPIKey is returned by New when an endpoint on api.openai.com has no key.
var ErrMissingAPIKey = errors.New("API key not set")

// New builds the activities and a go-openai client per endpoint. It fails when the
// registry is missing, a tool of the agent config has no function, or an endpoint on
// api.openai.com has no key in its variable (unless Models.BaseURLOverride is set);
// endpoints elsewhere may go without a key (Ollama, vLLM), with a warning.
func New(cfg Config) (*Activities, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	rec, err := cfg.Telemetry.recorder(cfg.Keys != nil)
	if err != nil {
		return nil, err
	}
	cls := newClients(cfg.Transfer, cfg.Keys)
	u := &unknowns{identity: cfg.WorkerIdentity, wait: cfg.UnknownAgentWait, clients: cls}
	st := &stores{byName: sealStores(cfg.Stores.MessageStores, cfg.Keys), defaultStore: cfg.Stores.DefaultMessageStore}
	t := &tools{registry: cfg.Registry, functions: cfg.Functions.Tools, telemetry: rec, unknowns: u}
	m := &models{registry: cfg.Registry, telemetry: rec, selectors: cfg.Functions.Selectors, judges: cfg.Functions.Judges,
		runs: newRunCache(cfg.Stores.CachedRuns), clients: cls, stores: st, tools: t, unknowns: u}
	m.kinds = newKinds(m)
	a := &Activities{models: m, tools: t, stores: st, unknowns: u,
		transfers: &transfers{clients: cls, clusterName: cfg.Transfer.ClusterName, store: cfg.Transfer.Store,
			docs: cfg.Transfer.Documents, keys: cfg.Keys, stores: st}}
	agentsCfg := cfg.Registry.Config()
	if len(agentsCfg.MCPServers) > 0 {
		if t.mcp, err = connectMCP(context.Background(), agentsCfg, cfg.Getenv, cfg.Telemetry.Logger); err != nil {
			return nil, err
		}
	}
	cfg.Models.HTTPClient = cfg.Telemetry.traced(cfg.Models.HTTPClient)
	if m.endpoints, m.baseURLs, err = cfg.Models.clients(agentsCfg, cfg.Getenv, cfg.Telemetry.Logger); err != nil {
		_ = a.Close()
		return nil, err
	}
	return a, nil
}

// clients returns a go-openai client and the base URL of every endpoint of cfg, by
// name, the endpoints' keys read with getenv. An endpoint on api.openai.com without a
// key is an ErrMissingAPIKey error; one elsewhere is warned about on logger.
func (m ModelConfig) clients(cfg agents.Config, getenv func(string) string, logger *slog.Logger) (
	map[string]*openai.Client, map[string]string, error) {
	models, baseURLs := map[string]*openai.Client{}, map[string]string{}
	for name, e := range cfg.Endpoints {
		key := ""
		if e.APIKeyEnv != "" {
			key = getenv(e.APIKeyEnv)
			addSecret(key)
		}
		base := e.BaseURL
		if m.BaseURLOverride != "" {
			base = m.BaseURLOverride
			if key == "" || !m.SendKeysToOverride {
				key = "offline"
			}
		}
		if key == "" && e.APIKeyEnv != "" {
			if isOpenAI(base) {
				return nil, nil, fmt.Errorf("activities: endpoint %q (%s): %w: set %s, or run the worker with --offline",
					name, base, ErrMissingAPIKey, e.APIKeyEnv)
			}
			logger.Warn("endpoint has no API key; calling it without one", "endpoint", name, "baseURL", base, "variable", e.APIKeyEnv)
		}
		oc := openai.DefaultConfig(key)
		oc.BaseURL = base
		oc.HTTPClient = &doer{client: m.HTTPClient}
		models[name] = openai.NewClientWithConfig(oc)
		baseURLs[name] = base
	}
	return models, baseURLs, nil
}

// Close ends the sessions with the config's MCP servers, stopping the stdio servers'
// processes. Call it after the worker stopped.
func (a *Activities) Close() error { return a.tools.close() }

// InvokeAgent runs one reply of an agent, by its kind (agentKind). For
// chat_completion: one Chat Completions call with the agent's instructions and the
// history it is given, streamed when the endpoint streams. A streamed call heartbeats
// on every chunk, so a long answer is never cut while a silent one times out (the
// agent's heartbeatTimeout) and is retried; a non-streamed call heartbeats while it
// waits. For responses and assistant, see invokeResponses and invokeAssistant: they
// send only the messages the service has not seen and return the channel's new state.
// Reading the history (historyFor) and storing a reply over ReplyInlineLimit heartbeat
// while they wait too.
//
// Errors: UnknownAgent (not retried on this worker; see unknowns.here) when the agent
// is not in the registry; InvalidInput (not retried) when its kind is not one of
// wire.Kinds (see kindOf); ModelRequestRejected / ModelUnavailable from the provider
// (see providerError).
func (a *Activities) InvokeAgent(ctx context.Context, in wire.InvokeInput) (wire.InvokeResult, error) {
	return a.models.InvokeAgent(ctx, in)
}

// ResolveParticipants looks the chat's agent ids up in the registry. Unknown ids give
// a non-retryable error of type UnknownAgent that names them, with
// wire.UnknownAgentDetails (see unknowns.here).
func (a *Activities) ResolveParticipants(ctx context.Context, in wire.ResolveInput) (wire.ResolveResult, error) {
	return a.models.ResolveParticipants(ctx, in)
}

// SelectSpeaker asks the selector agent (llm) or a registered function who speaks
// next (a function not registered here is UnknownFunction, tried on other workers).
// The agent's answer is matched to a candidate by id or name, whole word, case
// insensitive; none matched gives AgentID "" and what it said.
func (a *Activities) SelectSpeaker(ctx context.Context, in wire.SelectInput) (wire.SelectResult, error) {
	return a.models.SelectSpeaker(ctx, in)
}

// JudgeTermination asks the judge agent (llm) or a registered function whether the
// chat is done (a function not registered here is UnknownFunction, tried on other
// workers). The agent's answer counts as yes when its first yes/no word is yes,
// true or done.
func (a *Activities) JudgeTermination(ctx context.Context, in wire.JudgeInput) (wire.JudgeResult, error) {
	return a.models.JudgeTermination(ctx, in)
}

// Summarize writes the summary of a summarizing reducer: the agent's own model folds
// the given messages into the previous summary.
func (a *Activities) Summarize(ctx context.Context, in wire.SummarizeInput) (wire.SummarizeResult, error) {
	return a.models.Summarize(ctx, in)
}

// CallTool runs one tool call with the Go function registered under its name, its
// context carrying the call and its idempotency key (CallOf), or, for a name
// "server__tool" of an MCP server of the config, as that server's tools/call (callMCP).
// Errors:
// the tool's own (retried by the tool's policy unless ToolError); a ToolError for a
// result over wire.ToolResultLimit encoded bytes (the model reads it); or a non-retryable
// error for a tool no function backs on this worker: UnknownFunction, with
// wire.UnknownAgentDetails, so that the chat runs the call on another worker of the
// queue (a rolling deploy that adds or removes the tool).
func (a *Activities) CallTool(ctx context.Context, in wire.CallToolInput) (wire.CallToolResult, error) {
	return a.tools.CallTool(ctx, in)
}

// StoreMessages puts message bodies into the named message store (or the worker's
// default one) and returns the store's name. Retried when the store is unreachable.
//
// A body is what a stub lacks: the message's id, role, agent and contents (author and
// time stay in the workflow's stub). So the same message stored by its model call, by a
// continue-as-new or by an import (a migration target under the same chat id, sharing
// the store) is one body, not a conflict.
func (a *Activities) StoreMessages(ctx context.Context, in wire.StoreMessagesInput) (wire.StoreMessagesResult, error) {
	return a.stores.StoreMessages(ctx, in)
}

// WritePages writes messages of a chat's history as level-0 pages of its message store
// (docs/design/paged-history.md, section 5; docs/chat-state-v1.md, "Message store
// pages") and returns their references, in order. Page k holds the next in.Cuts[k]
// messages, from absolute index in.First, numbered in.Seq+k in in.Lineage. A message
// whose encoded size passes wire.PageBodyBytes goes to its own body row first (Put, as
// StoreMessages), and its page holds the stub.
//
// Idempotent: the workflow fixes the lineage, numbers and cuts before it schedules the
// activity, and pages encode deterministically (sealed ones too), so an attempt retried
// after a worker died part-way writes the same rows (no-ops) and the rest.
//
// Errors: a store not configured, or one without pages (msgstore.PageStore), or cuts
// that do not add up, are InvalidInput; an unreachable store is StoreUnavailable
// (retried); a page or id the store holds otherwise is StoreConflict.
func (a *Activities) WritePages(ctx context.Context, in wire.WritePagesInput) (wire.WritePagesResult, error) {
	return a.stores.WritePages(ctx, in)
}

// LookupIDs returns where the ids of in are in the chat's pages (msgstore.PageStore's
// LookupIDs over in.Lineage), by message index; absent ids are not in the pages. The
// workflow runs it as a local activity when its filter of paged ids says an id may be
// there. Errors as WritePages'.
func (a *Activities) LookupIDs(ctx context.Context, in wire.LookupIDsInput) (wire.LookupIDsResult, error) {
	return a.stores.LookupIDs(ctx, in)
}

// DeleteLineage removes the pages and id rows of in.Lineage of the chat (an import
// that failed after it wrote pages: no index names them). A lineage the store lacks
// is a no-op, so a retry is too. Errors as WritePages'.
func (a *Activities) DeleteLineage(ctx context.Context, in wire.DeleteLineageInput) error {
	return a.stores.DeleteLineage(ctx, in)
}

// ReadTurn reads a paged turn, for the retry of a turn whose messages have gone to
// pages: the user message at in.User and the replies after it, from the level-0 pages
// under in.Pages (read and checked as every reader does, transfer.ReadPages), at most
// readTurnPages of them, up to the next user message or the end of those pages.
// Replies past wire.HistoryPageBytes come as references (no contents), as a turn's
// result does. Errors as ReadPages' and storeError's.
func (a *Activities) ReadTurn(ctx context.Context, in wire.ReadTurnInput) (wire.ReadTurnResult, error) {
	return a.stores.ReadTurn(ctx, in)
}

// ExportChat builds the document of the calling chat run from its ExportSnapshot and
// History queries (so the chat's messages never pass through an activity input) and
// writes it to the requested sink: inline (at most wire.InlineLimit bytes), the
// worker's document store, or a file path on the worker. Errors: InvalidInput for an
// inline document that is too large or a bad path.
func (a *Activities) ExportChat(ctx context.Context, in wire.ExportChatInput) (wire.ExportResult, error) {
	return a.transfers.ExportChat(ctx, in)
}

// ImportChat reads a document (inline or from the store), validates, repairs and
// upgrades it (chatstate.Decode), and returns the messages from in.Offset on, at most
// about wire.HistoryPageBytes of them (bounded as a History page is: well under
// the payload limit); the first page carries the header. Errors: InvalidDocument
// naming the field, or, on the first page, for a document a chat could not hold
// (wire.CheckDocumentSizes) or whose history ends with open calls of an agent not
// among in.Participants (chat.CheckOpenCalls), or whose strategy state of the chat's
// own type does not decode (wire.CheckStrategyStates), not retried: nothing is stored
// then. An
// unreadable store is retried.
func (a *Activities) ImportChat(ctx context.Context, in wire.ImportPageInput) (wire.ImportPage, error) {
	return a.transfers.ImportChat(ctx, in)
}

// StartMigrationTarget starts the target chat of a migration with its restore input
// (Update-With-Start of the Describe update, reusing a chat that a previous attempt
// started), waits until it has restored the document, and checks that its digest is
// the one exported. A target with another digest is refused (non-retryable): one that
// held the id before (ChatNotEmpty) is left alone; one this migration started
// (wire.MigrationMemo) is terminated, so that no second live chat is left there,
// and the migration is abandoned (MigrationFailed).
func (a *Activities) StartMigrationTarget(ctx context.Context, in wire.StartTargetInput) (wire.StartTargetResult, error) {
	return a.transfers.StartMigrationTarget(ctx, in)
}

// ForwardTurns signals turns to a migration's target (UserMessage signals; the target
// drops a messageId it already has).
func (a *Activities) ForwardTurns(ctx context.Context, in wire.ForwardTurnsInput) error {
	return a.transfers.ForwardTurns(ctx, in)
}
func isOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Hostname() == "api.openai.com"
}

// sealStores wraps each store so that its bodies are encrypted with keys
// (msgstore.Sealed); keys nil returns them as they are.
func sealStores(stores map[string]msgstore.Store, keys *keyring.Ring) map[string]msgstore.Store {
	if keys == nil {
		return stores
	}
	out := make(map[string]msgstore.Store, len(stores))
	for name, st := range stores {
		out[name] = msgstore.Sealed(st, keys)
	}
	return out
}
