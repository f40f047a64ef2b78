package agentchat

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/codec"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/internal/logx"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// Client drives chats on one Temporal namespace. Safe for concurrent use.
type Client struct {
	tc        client.Client
	taskQueue string
	namespace string
	cluster   string
	stores    map[string]msgstore.Store
	owned     bool
	// workerWait is ClientOptions.WorkerWait, defaulted.
	workerWait time.Duration
	// keys is ClientOptions.Keys: the ring of tc's codec.
	keys *keyring.Ring
	// docs is ClientOptions.Documents, its Ring defaulted to keys.
	docs envelope.Options
	// importSpill is ClientOptions.ImportSpill.
	importSpill chatstate.SpillOpener
	// clearChats are the chats (by id) a keyless client found not encrypted
	// (guardClearText).
	clearChats sync.Map
	// index is what the client found out about the namespace's search attributes
	// (indexed): ok, at when.
	index struct {
		sync.Mutex
		ok bool
		at time.Time
	}
	// keyedChats are the chats (by id) whose workers and this client, with a key
	// ring, opened each other's payloads (guardKeys).
	keyedChats sync.Map
}

// ClientOptions tune a Client; zero values take the defaults on each field.
type ClientOptions struct {
	// TaskQueue that new chats run on; default wire.TaskQueue ("agentchat").
	TaskQueue string
	// Namespace the Temporal client is bound to, for error messages and links;
	// default "default".
	Namespace string
	// Cluster is the name exports record as their source cluster; default "local".
	Cluster string
	// MessageStores, by name ("sqlite", "postgres"), let the client read the bodies
	// that long chats keep in the worker's message store (History stubs, exports).
	MessageStores map[string]msgstore.Store
	// WorkerWait is how long CheckWorker waits for a worker to poll before it reports
	// ErrNoWorker; zero means WorkerWait (20 s).
	WorkerWait time.Duration
	// Keys is the key ring tc's codec uses (codec.Apply), if any; the client seals
	// and opens document envelopes with it. Nil: encryption off.
	Keys *keyring.Ring
	// Documents say how SealDocument seals documents and how Import opens and
	// verifies them (package envelope); a nil Ring defaults to Keys.
	Documents envelope.Options
	// ImportSpill is where Import's check of a document it reads in place (a plain
	// file over wire.StreamDocumentBytes, 32 MiB) keeps the hashes of the document's
	// message and call ids past chatstate.SpillAfter of each, so that the check's heap
	// stays flat however long the document. Nil keeps them all in memory: about 100
	// bytes a message (100 MB for 1,000,000 messages). The client package links no
	// database driver; the CLI spills to a temporary SQLite file, as workers do.
	ImportSpill chatstate.SpillOpener
}

// NewClient wraps an existing Temporal client; Close does not close it.
func NewClient(tc client.Client, opts ClientOptions) *Client {
	if opts.TaskQueue == "" {
		opts.TaskQueue = wire.TaskQueue
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if opts.Cluster == "" {
		opts.Cluster = "local"
	}
	if opts.WorkerWait <= 0 {
		opts.WorkerWait = WorkerWait
	}
	stores := opts.MessageStores
	if opts.Keys != nil {
		stores = make(map[string]msgstore.Store, len(opts.MessageStores))
		for name, st := range opts.MessageStores {
			stores[name] = msgstore.Sealed(st, opts.Keys)
		}
	}
	c := &Client{tc: tc, taskQueue: opts.TaskQueue, namespace: opts.Namespace, cluster: opts.Cluster, stores: stores,
		workerWait: opts.WorkerWait, keys: opts.Keys, docs: opts.Documents, importSpill: opts.ImportSpill}
	if c.docs.Ring == nil {
		c.docs.Ring = opts.Keys
	}
	return c
}

// DialOptions say how to reach Temporal. Unset fields come from Temporal's standard
// environment configuration (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
// TEMPORAL_TLS*, TEMPORAL_PROFILE and the config file they name), then the defaults
// (localhost:7233, namespace "default").
type DialOptions struct {
	Address   string // host:port of the frontend
	Namespace string
	TaskQueue string
	Logger    *slog.Logger // nil: warnings and errors to slog.Default()
	// WorkerWait is ClientOptions.WorkerWait: how long CheckWorker waits for a worker
	// to poll; zero means WorkerWait (20 s).
	WorkerWait time.Duration
	// Keys turns encryption at rest on: every payload is sealed with the ring's
	// current key (package codec). Nil: the ring at KeysPath, else at
	// $AGENTCHAT_KEYS; with neither, encryption is off.
	Keys *keyring.Ring
	// KeysPath is a key ring file (keyring.Parse), overriding $AGENTCHAT_KEYS.
	KeysPath string
	// CodecLogger, when set, receives a warning for each payload the key ring cannot
	// open, naming its key id (codec.Codec.Logger). Workers set it: the client whose
	// payload a worker could not open learns it from the failure, the worker's
	// operator only from this log. Nil: no such warning.
	CodecLogger *slog.Logger
	// Documents are ClientOptions.Documents; nil: from the environment
	// (envelope.FromEnv: AGENTCHAT_SIGNING_KEY, AGENTCHAT_VERIFY_KEYS,
	// AGENTCHAT_REQUIRE_SIGNATURE) with the key ring.
	Documents *envelope.Options
	// Interceptors are added to the Temporal client's (client.Options.Interceptors), for
	// example OpenTelemetry's tracing interceptor (package telemetry); a worker built on
	// the client runs those that are worker interceptors too.
	Interceptors []interceptor.ClientInterceptor
	// MetricsHandler receives the Temporal SDK's metrics (client.Options.MetricsHandler);
	// nil means none.
	MetricsHandler client.MetricsHandler
	// MessageStores are ClientOptions.MessageStores: where the client reads a long
	// chat's history pages and stored bodies. The caller closes them.
	MessageStores map[string]msgstore.Store
	// ImportSpill is ClientOptions.ImportSpill; nil keeps the ids of a document an
	// Import checks in memory.
	ImportSpill chatstate.SpillOpener
}

// keys returns the ring the options name, loading it if needed; nil: encryption off.
func (o DialOptions) keys() (*keyring.Ring, error) {
	if o.Keys != nil {
		return o.Keys, nil
	}
	r, err := keyring.FromEnv(o.KeysPath)
	if err != nil {
		return nil, fmt.Errorf("agentchat: %w", err) // keyring's errors name the ring and its file
	}
	return r, nil
}

// documents returns the document options the options name, loading them if needed.
func (o DialOptions) documents(ring *keyring.Ring) (envelope.Options, error) {
	if o.Documents != nil {
		return *o.Documents, nil
	}
	d, err := envelope.FromEnv(ring)
	if err != nil {
		return envelope.Options{}, fmt.Errorf("agentchat: %w", err)
	}
	return d, nil
}

// Documents returns how the client seals and opens documents.
func (c *Client) Documents() envelope.Options { return c.docs }

// LoadClientOptions resolves Temporal client options as Dial does, the codec of
// the key ring included.
func LoadClientOptions(opts DialOptions) (client.Options, error) {
	ring, err := opts.keys()
	if err != nil {
		return client.Options{}, err
	}
	co, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		return client.Options{}, fmt.Errorf("agentchat: Temporal environment configuration: %w", err)
	}
	if opts.Address != "" {
		co.HostPort = opts.Address
	}
	if opts.Namespace != "" {
		co.Namespace = opts.Namespace
	}
	if co.HostPort == "" {
		co.HostPort = client.DefaultHostPort
	}
	if co.Namespace == "" {
		co.Namespace = client.DefaultNamespace
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(logx.MinLevel(slog.Default().Handler(), slog.LevelWarn))
	}
	co.Logger = tlog.NewStructuredLogger(logger)
	codec.ApplyLogged(&co, ring, opts.CodecLogger)
	co.Interceptors = append(co.Interceptors, opts.Interceptors...)
	if opts.MetricsHandler != nil {
		co.MetricsHandler = opts.MetricsHandler
	}
	return co, nil
}

// dialError is Dial's error when no connection to the Temporal frontend at addr could be
// made: for a server that does not answer (connection refused, no such host, no
// answer in time), what was seen in a few words and how to start one at that address;
// otherwise the SDK's error. It wraps err either way (errors.As finds the gRPC status).
func dialError(addr, namespace string, err error) error {
	msg := err.Error()
	var why string
	for _, w := range [][2]string{{"connection refused", ""}, {"no such host", "its host name does not resolve"},
		{"no children to pick from", "its host name does not resolve"}, {"i/o timeout", "no answer in time"},
		{"deadline exceeded", "no answer in time"}, {"network is unreachable", ""}} {
		if strings.Contains(msg, w[0]) {
			why = cmp.Or(w[1], w[0])
			break
		}
	}
	if why == "" {
		return fmt.Errorf("agentchat: connect to Temporal at %s (namespace %q): %w", addr, namespace, err)
	}
	start := fmt.Sprintf("start one there (go run ./starter server start --listen %s), or ", addr)
	if strings.Contains(why, "resolve") {
		start = ""
	}
	return &wrapped{msg: fmt.Sprintf("agentchat: no Temporal server answers at %s (%s): %sgive the address of yours (--address or TEMPORAL_ADDRESS)",
		addr, why, start), err: err}
}

// wrapped is an error whose message is msg, in place of err's, and that unwraps to err.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// Dial connects to Temporal and returns a Client that owns the connection.
func Dial(ctx context.Context, opts DialOptions) (*Client, error) {
	ring, err := opts.keys()
	if err != nil {
		return nil, err
	}
	opts.Keys = ring
	co, err := LoadClientOptions(opts)
	if err != nil {
		return nil, err
	}
	tc, err := client.DialContext(ctx, co)
	if ended := endedBy(ctx, err); err != nil && ended != nil {
		return nil, fmt.Errorf("agentchat: connect to Temporal at %s: %w", co.HostPort, ended) // the caller's deadline, not the server
	}
	if err != nil {
		return nil, dialError(co.HostPort, co.Namespace, err)
	}
	docs, err := opts.documents(ring)
	if err != nil {
		tc.Close()
		return nil, err
	}
	c := NewClient(tc, ClientOptions{TaskQueue: opts.TaskQueue, Namespace: co.Namespace, WorkerWait: opts.WorkerWait, Keys: ring,
		Documents: docs, MessageStores: opts.MessageStores, ImportSpill: opts.ImportSpill})
	c.owned = true
	return c, nil
}

// Temporal returns the underlying Temporal client.
func (c *Client) Temporal() client.Client { return c.tc }

// Keys returns the key ring of the client's codec; nil when encryption is off.
func (c *Client) Keys() *keyring.Ring { return c.keys }

// Namespace returns the namespace the client works in.
func (c *Client) Namespace() string { return c.namespace }

// Close closes the connection if Dial made it.
func (c *Client) Close() {
	if c.owned {
		c.tc.Close()
	}
}

// StartOptions describe a new chat.
type StartOptions struct {
	// ChatID is the workflow id; default "chat-<uuid>".
	ChatID string
	// Participants are agent ids of the worker's registry, in speaking order; required.
	Participants []string
	Selection    SelectionStrategy
	Termination  TerminationStrategy
	// MaxMessageBytes caps one user message, in encoded bytes; zero means 256 KiB
	// (wire.DefaultMaxMessageBytes), more than wire.MaxMessageBytesLimit (1 MiB)
	// is ErrInvalidOptions.
	MaxMessageBytes int
	// Store names the message store for older message bodies ("" = in the workflow,
	// moving to the worker's default store when the chat outgrows it).
	Store string
	// HistoryBudget bounds one run's event history before it continues as new.
	HistoryBudget wire.HistoryBudget
	// History sets the window of latest messages the workflow keeps (at least 8;
	// default 256) and the messages per page of older ones in the message store (4 to
	// 256; default 256); nil: the defaults. Out of range is ErrInvalidOptions. For tests
	// and tuning: see the README's Limits.
	History *wire.HistoryWindow
}

func (o StartOptions) input(temporary bool) (wire.AgentChatInput, error) {
	in := wire.AgentChatInput{Version: wire.InputVersion, Participants: o.Participants,
		Selection: o.Selection, Termination: o.Termination, Temporary: temporary, MaxMessageBytes: o.MaxMessageBytes,
		Store: o.Store, HistoryBudget: o.HistoryBudget, History: o.History}
	if err := in.Validate(); err != nil {
		return in, fmt.Errorf("agentchat: %w: %w", ErrInvalidOptions, err)
	}
	return in, nil
}

// startOperation starts chat id. A finished chat's id is not reused (reuse policy
// REJECT_DUPLICATE): a new chat under the id of one that moved elsewhere or completed
// would silently take its place. overFailed allows the id of a chat whose workflow
// failed (startAgain checks that it never took a turn).
func (c *Client) startOperation(ctx context.Context, id string, in wire.AgentChatInput, overFailed bool) client.WithStartWorkflowOperation {
	reuse := enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	if overFailed {
		reuse = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY
	}
	return c.tc.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                c.taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    reuse,
		TypedSearchAttributes:    c.startAttributes(ctx, in),
	}, wire.WorkflowType, in)
}

// Start starts a chat and returns its state once the worker has resolved its
// participants (one Update-With-Start round trip). A ChatID whose chat failed at start
// (it never took a turn) is used again. Errors: ErrInvalidOptions before anything is
// sent; ErrChatExists if ChatID is taken by any other chat, running or closed (the
// message says which); an
// UnknownAgent application error naming the ids the worker does not know, in which
// case the chat's workflow has already failed and nothing is left running.
func (c *Client) Start(ctx context.Context, opts StartOptions) (StateResult, error) {
	in, err := opts.input(false)
	if err != nil {
		return StateResult{}, err
	}
	id := opts.ChatID
	if id == "" {
		id = "chat-" + uuid.NewString()
	}
	var st StateResult
	err = c.updateWithStart(ctx, id, in, wire.DescribeUpdate, nil, &st)
	return st, err
}

// RunOptions describe a one-turn chat on a temporary thread.
type RunOptions struct {
	// ChatID is the workflow id; default "run-<uuid>".
	ChatID string
	// Agents answer the turn; usually one.
	Agents      []string
	Selection   SelectionStrategy
	Termination TerminationStrategy
}

// Run answers one message on a temporary thread (the seed's agent.RunAsync without a
// thread): a chat that takes this one turn and then completes its workflow.
func (c *Client) Run(ctx context.Context, opts RunOptions, msg SendMessageInput) (TurnResult, error) {
	in, err := StartOptions{Participants: opts.Agents, Selection: opts.Selection, Termination: opts.Termination}.input(true)
	if err != nil {
		return TurnResult{}, err
	}
	id := opts.ChatID
	if id == "" {
		id = "run-" + uuid.NewString()
	}
	if msg.MessageID == "" {
		msg.MessageID = uuid.NewString()
	}
	if _, err := msg.Message(in.EffectiveMaxMessageBytes()); err != nil { // before the chat exists
		return TurnResult{}, refused("start", id, err)
	}
	var res TurnResult
	err = c.updateWithStart(ctx, id, in, wire.SendMessageUpdate, []any{msg}, &res)
	return res, err
}

// deadlineSlack is how close to ctx's deadline a call's cancellation or timeout counts
// as that deadline's: gRPC and the server give up on a call at the deadline it was sent
// with, which can be a moment before ctx's own timer fires.
const deadlineSlack = 250 * time.Millisecond

// endedBy returns the error that ended ctx: ctx.Err(), or context.DeadlineExceeded when
// err is a cancellation or timeout of the call (cutShort) within deadlineSlack of ctx's
// deadline while ctx.Err() is still nil; nil when ctx goes on (a server's own timeout
// of a long poll, with ctx's deadline far off, is not ctx's end).
func endedBy(ctx context.Context, err error) error {
	if e := ctx.Err(); e != nil {
		return e
	}
	if d, ok := ctx.Deadline(); ok && err != nil && time.Until(d) <= deadlineSlack && cutShort(ctx, err) {
		return context.DeadlineExceeded
	}
	return nil
}

// cutShort reports whether err ended a call because the caller's ctx ended: ctx is
// done, or err is the deadline or cancellation of ctx as gRPC or the SDK words it
// (its timer may fire a moment before ctx's own, so ctx.Err() can still be nil).
func cutShort(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var upd *client.WorkflowUpdateServiceTimeoutOrCanceledError
	if _, ok := ctx.Deadline(); ok && errors.As(err, &upd) {
		return true
	}
	return cutOff(err)
}

// updateWithStart starts chat id with the update. When the id is taken by a chat that
// failed at start (its workflow failed before it took any turn: nothing of it is
// lost), it starts the chat again under the id; any other holder of the id gives
// ErrChatExists, saying what holds it.
func (c *Client) updateWithStart(ctx context.Context, id string, in wire.AgentChatInput, update string, args []any, out any) error {
	err := c.tryUpdateWithStart(ctx, id, in, update, args, out, false)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		why := c.idTaken(ctx, id)
		if why == "" {
			err = c.tryUpdateWithStart(ctx, id, in, update, args, out, true)
		}
		if errors.As(err, &started) {
			if why == "" {
				why = "another chat took it meanwhile"
			}
			return fmt.Errorf("agentchat: start chat %q: %w: %s", id, ErrChatExists, why)
		}
	}
	if errors.Is(err, ErrNoKeyRing) || errors.Is(err, ErrNoWorker) || errors.Is(err, ErrKeyMismatch) {
		return err // says which chat already
	}
	if err != nil && cutShort(ctx, err) { // cut short by the caller: the server may have created it
		return fmt.Errorf("agentchat: start chat %q: %w (the chat may have been created and may take its first turn: "+
			"read it with State; the call cannot say)", id, cmp.Or(ctx.Err(), context.DeadlineExceeded))
	}
	if err != nil {
		if ce := asChatError("start", id, err); ce != nil {
			return ce
		}
		return fmt.Errorf("agentchat: start chat %q: %w", id, err)
	}
	c.answeredInClear(id)
	return nil
}

func (c *Client) tryUpdateWithStart(ctx context.Context, id string, in wire.AgentChatInput, update string, args []any, out any, overFailed bool) error {
	op, began := c.startOperation(ctx, id, in, overFailed), time.Now()
	updateID := uuid.NewString()
	err := c.withWorker(ctx, id, updateID, func(ctx context.Context) error {
		h, err := c.tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: op,
			UpdateOptions: client.UpdateWorkflowOptions{
				UpdateID: updateID, UpdateName: update, Args: args, WaitForStage: client.WorkflowUpdateStageCompleted,
			},
		})
		if err == nil {
			err = h.Get(ctx, out)
		}
		return err
	})
	if errors.Is(err, errNotTaken) {
		return c.startNoWorker(ctx, id, op, began)
	}
	return c.discardFailedStart(ctx, id, op, began, c.discardIfClearText(ctx, id, op, began, err))
}

// refusedAtStart are the error types of a chat that failed at start, before it did
// anything (AgentChat's errors): its run is of no use to anybody.
var refusedAtStart = []string{wire.ErrTypeUnknownAgent, wire.ErrTypeInvalidInput, wire.ErrTypeNotAcceptingTurns}

// discardFailedStart handles err of a start through op, made at began, that the chat
// refused at start (refusedAtStart): once the run it created has closed (within
// startCloseWait) holding nothing but its start and failure (didNothing), it is
// deleted, and the *Error says that nothing is left; the id is free for a corrected
// start either way (updateWithStart starts over a chat that failed at start). Any other
// err, or a run that did more, is returned as it is.
func (c *Client) discardFailedStart(ctx context.Context, id string, op client.WithStartWorkflowOperation, began time.Time, err error) error {
	var app *temporal.ApplicationError
	if err == nil || !errors.As(err, &app) || !slices.Contains(refusedAtStart, app.Type()) {
		return err
	}
	ce := asChatError("start", id, err)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	run, rerr := c.createdRun(dctx, id, op, began)
	if rerr != nil || run == "" {
		return ce
	}
	wctx, wcancel := context.WithTimeout(dctx, startCloseWait)
	_ = c.tc.GetWorkflow(wctx, id, run).Get(wctx, nil) // the run fails right after it answered
	wcancel()
	if !c.failedBeforeATurn(dctx, id, run) {
		return ce
	}
	if derr := c.deleteRun(dctx, id, run); derr != nil {
		return ce
	}
	out := *ce
	out.Message += "; nothing is left: the chat it created was deleted (its id is free at once; list may show it for a minute, until the server has removed it)"
	return &out
}

// failedBeforeATurn reports whether run run of chat id (its current run) has failed
// before it took any turn: its history holds nothing but its start and failure
// (didNothing), or its State says status failed with no turn and no message.
func (c *Client) failedBeforeATurn(ctx context.Context, id, run string) bool {
	if c.didNothing(ctx, id, run) {
		return true
	}
	st, err := c.State(ctx, id)
	return err == nil && st.Status == wire.StatusFailed && st.TurnCount == 0 && st.MessageCount == 0
}

// startCloseWait bounds discardFailedStart's wait for a refused run to close.
const startCloseWait = 5 * time.Second

// discardIfClearText handles err of a start through op, made at began: when this
// client has no key ring and the answer was encrypted (the chat's workers encrypt at
// rest), the chat it created holds its input in the clear in the event history. That
// run is deleted (DeleteWorkflowExecution, which terminates a running one first; a
// closed one, such as Run's temporary thread, goes when the server runs the deletion
// task), so no clear text stays on the server and the id is free again; the error is
// ErrNoKeyRing. A client with a key ring goes to discardIfKeysDiffer. Any other err
// is returned as it is.
func (c *Client) discardIfClearText(ctx context.Context, id string, op client.WithStartWorkflowOperation, began time.Time, err error) error {
	if err != nil && c.keys != nil {
		return c.discardIfKeysDiffer(ctx, id, op, began, err)
	}
	if err == nil || c.keys != nil || !encryptedAnswer(err) {
		return err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second) // also when ctx ended
	defer cancel()
	run, serr := op.Get(dctx)
	if serr != nil {
		return fmt.Errorf("agentchat: start chat %q: %w: %w", id, ErrNoKeyRing, err)
	}
	derr := c.deleteRun(dctx, id, run.GetRunID())
	if derr != nil {
		return fmt.Errorf("agentchat: start chat %q: %w; its input went in the clear, and deleting the chat failed (%v): delete it with: temporal workflow delete --workflow-id %s",
			id, ErrNoKeyRing, derr, id)
	}
	return fmt.Errorf("agentchat: start chat %q: %w; what it sent went in the clear, so the chat was deleted (%s)", id, ErrNoKeyRing, deletionNote)
}

// guardClearText returns ErrNoKeyRing, before anything is written, when this client
// has no key ring and chat chatID is encrypted at rest: what it would send (a turn's
// text, an approval's reason) would reach the chat's history in the clear. A chat
// that already answered this client in the clear (its start, a turn, State, History
// or any other query: answeredInClear) is written to at once; any other is asked its
// State once (a query: no history). A client with a ring, or a query that fails
// otherwise (no worker yet, no such chat), lets the write go on, which then reports
// what it meets. verb names the operation ("send to").
func (c *Client) guardClearText(ctx context.Context, verb, chatID string) error {
	if c.sealedFromUs(ctx, chatID) {
		return fmt.Errorf("agentchat: %s chat %q: %w; nothing was sent", verb, chatID, ErrNoKeyRing)
	}
	return nil
}

// sealedFromUs reports whether this client has no key ring and chat chatID answers
// encrypted (one State query, bounded by guardWait, unless the chat answered in the
// clear before); false when the query fails otherwise.
func (c *Client) sealedFromUs(ctx context.Context, chatID string) bool {
	if c.keys != nil {
		return false
	}
	if _, ok := c.clearChats.Load(chatID); ok {
		return false
	}
	qctx, cancel := context.WithTimeout(ctx, guardWait)
	defer cancel()
	var st StateResult
	return encryptedAnswer(c.query(qctx, chatID, wire.StateQuery, &st))
}

// guardWait bounds guardClearText's query: a chat whose worker is away still takes a
// signal, which waits in its history for the worker.
const guardWait = 3 * time.Second

// encryptedAnswer reports whether err is the SDK's failure to decode a payload this
// package's codec encrypted (codec.EncodingEncrypted) for want of a key ring, or
// chatError's ErrNoKeyRing made of one.
func encryptedAnswer(err error) bool {
	return errors.Is(err, ErrNoKeyRing) || errors.Is(err, converter.ErrEncodingIsNotSupported) && strings.Contains(err.Error(), codec.EncodingEncrypted)
}

// idTaken says why id cannot be used for a new chat, or "" when the chat that has it
// failed at start and never took a turn (State: status failed, no turns, no messages;
// or, when its State cannot be read, a history of nothing but its start, workflow
// tasks and its failure).
func (c *Client) idTaken(ctx context.Context, id string) string {
	const notReused = "ids are not reused, even after a chat completed or moved; choose another id"
	d, err := c.tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return notReused
	}
	status := d.GetWorkflowExecutionInfo().GetStatus()
	switch status {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return "a chat with this id is running (send to it, or choose another id)"
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
	default:
		return fmt.Sprintf("the chat with this id has %s; %s", closedAs(status), notReused)
	}
	st, err := c.State(ctx, id)
	switch {
	case err != nil && c.didNothing(ctx, id, d.GetWorkflowExecutionInfo().GetExecution().GetRunId()):
		return "" // it failed in its first task (its workers could not open its input, say)
	case err != nil:
		return fmt.Sprintf("the chat with this id failed, and its state could not be read to check that it never ran (%v); %s", err, notReused)
	case st.Status == wire.StatusFailed && st.TurnCount == 0 && st.MessageCount == 0:
		return ""
	default:
		return fmt.Sprintf("the chat with this id failed after it had %d turn(s) (status %s); %s", st.TurnCount, st.Status, notReused)
	}
}

// closedAs names a closed workflow's status for a person: "completed", "terminated", ...
func closedAs(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "completed (or moved)"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "been cancelled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "been terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "continued as new"
	}
	return "closed (" + s.String() + ")"
}

// Send sends a user turn (the SendMessage update) and returns the agents' replies. An
// empty MessageID gets a new UUID; give your own to make retries across processes safe:
// a messageId the chat has answered returns that answer without calling a model again.
// Turns queue in the chat; Send waits for its own. When Temporal refuses the update
// because too many are in flight on the chat, Send retries with backoff until ctx ends.
//
// Errors: ErrChatNotFound, ErrChatClosed; application errors (*Error) from the chat of
// type InvalidMessage, NotAcceptingTurns, TurnFailed (with the provider's message) or
// StoreUnavailable (the message store could not be reached). A failed turn left nothing
// in the chat (send it again with the same MessageID), unless the wire.TurnError in
// the error's details says Kept: a turn resumed after an approval keeps the results of
// its calls that ran, is refused with TurnFailed if sent again, and a new message goes
// on. A message over
// wire.MaxMessageBytesLimit, which no chat accepts, is refused here with the same
// InvalidMessage error, and nothing is sent.
//
// A turn's messages past wire.HistoryPageBytes come as references (no contents);
// History returns them whole.
func (c *Client) Send(ctx context.Context, chatID string, msg SendMessageInput) (TurnResult, error) {
	if msg.MessageID == "" {
		msg.MessageID = uuid.NewString()
	}
	if err := msg.Validate(); err != nil {
		return TurnResult{}, refused("send to", chatID, err)
	}
	var res TurnResult
	if err := c.update(ctx, chatID, "send to", wire.SendMessageUpdate, msg, &res); err != nil {
		return TurnResult{}, err
	}
	return res, nil
}

// Approve decides a tool call the chat waits for (the Approve update): approved, the
// call runs; rejected, the model reads an error result "rejected by a person: <Reason>".
// By names who decided, for the record. A turn that needs approvals returns them in
// TurnResult.AwaitingApproval (State lists them in PendingApprovals).
//
// When in decides the last call the suspended turn waits for, the turn resumes and
// Approve returns what it then produced: its messages from the tool results on,
// IsComplete, and AwaitingApproval again if an agent asked for another such call.
// While other calls of the turn still wait, the decision is applied at once (an
// approved call runs) and Approve returns the call's result, the turn's MessageID and
// the calls still awaited.
//
// A call's first decision stands. The same decision again (a retry) changes nothing
// and returns at once what the call's turn did from its result on, with
// TurnResult.AlreadyDecided set to the earlier decision; a different decision is
// refused (below).
//
// Errors: ErrInvalidOptions for an empty CallID, before anything is sent;
// ErrChatNotFound, ErrChatClosed; an InvalidInput application error when the chat
// waits for no approval of in.CallID (an unknown call, or a chat that waits for none;
// its message lists the calls awaited) or the call is decided already the other way
// (its message says "already decided: " and the earlier decision); TurnFailed (with the
// provider's or store's message, details Kept: the calls' results stay, send a new
// message to go on) when the resumed turn fails; ContinuingAsNew or Migrating
// (retry) while the chat hands over to a new run or migrates, Migrated once it moved.
func (c *Client) Approve(ctx context.Context, chatID string, in ApproveInput) (TurnResult, error) {
	if in.CallID == "" {
		return TurnResult{}, fmt.Errorf("agentchat: approve in chat %q: %w: no callId", chatID, ErrInvalidOptions)
	}
	var res TurnResult
	if err := c.update(ctx, chatID, "approve in", wire.ApproveUpdate, in, &res); err != nil {
		return TurnResult{}, err
	}
	return res, nil
}

// Post sends a user turn as the UserMessage signal and returns at once with its
// messageId (a new UUID when empty). A malformed message, or one over
// wire.MaxMessageBytesLimit, is refused here with an InvalidMessage error and
// nothing is sent; a turn the chat refuses (over its own maxMessageBytes, say) is
// reported in State's lastError, never dropped silently.
func (c *Client) Post(ctx context.Context, chatID string, msg SendMessageInput) (string, error) {
	if msg.MessageID == "" {
		msg.MessageID = uuid.NewString()
	}
	if err := msg.Validate(); err != nil {
		return "", refused("post to", chatID, err)
	}
	if err := c.underChatLimit(ctx, chatID, msg); err != nil { // first: its State answer spares guardClearText's
		return "", err
	}
	if err := c.guardClearText(ctx, "post to", chatID); err != nil {
		return "", err
	}
	if err := c.guardKeys(ctx, "post to", chatID); err != nil {
		return "", err
	}
	if err := c.tc.SignalWorkflow(ctx, chatID, "", wire.UserMessageSignal, msg); err != nil {
		return "", c.chatError(ctx, "post to", chatID, err)
	}
	return msg.MessageID, nil
}

// underChatLimit refuses msg, before it is posted, when it is over the chat's own
// limit (State's MaxMessageBytes): a signal cannot be refused to its sender, and the
// chat would only record the refusal. A message within DefaultMaxMessageBytes fits every
// chat and is not asked about; when State cannot be read, the post goes on (the chat
// still refuses it, in its lastError). An answer in the clear is remembered
// (answeredInClear), so guardClearText asks no second time; an encrypted one to a
// client without a key ring is ErrNoKeyRing.
func (c *Client) underChatLimit(ctx context.Context, chatID string, msg SendMessageInput) error {
	if _, err := msg.Message(wire.DefaultMaxMessageBytes); err == nil {
		return nil
	}
	qctx, cancel := context.WithTimeout(ctx, guardWait)
	defer cancel()
	var st StateResult
	err := c.query(qctx, chatID, wire.StateQuery, &st)
	if c.keys == nil && encryptedAnswer(err) {
		return fmt.Errorf("agentchat: post to chat %q: %w; nothing was sent", chatID, ErrNoKeyRing)
	}
	if err != nil || st.MaxMessageBytes == 0 {
		return nil
	}
	if _, err := msg.Message(st.MaxMessageBytes); err != nil {
		return refused("post to", chatID, fmt.Errorf("%w; nothing was sent", err))
	}
	return nil
}

// State returns the chat's summary (the State query); it answers for finished chats too.
func (c *Client) State(ctx context.Context, chatID string) (StateResult, error) {
	var st StateResult
	if err := c.query(ctx, chatID, wire.StateQuery, &st); err != nil {
		return StateResult{}, err
	}
	return st, nil
}

// History returns the chat's messages from page.Offset, oldest first (the History
// query): at most page.Limit of them, or with Limit zero every one from there on. It
// reads as many History pages as that takes, each under wire.HistoryPageBytes (or
// page.MaxBytes, when set: then it returns the one page). Bodies a long chat keeps in
// its message store (HistoryResult.Store) are filled from ClientOptions.MessageStores;
// without that store they come as stubs (no contents). Its older messages, in history
// pages of that store (HistoryResult.Pages), are read from there and checked against
// their index: without the store the error is ErrStoredMessages naming the first page,
// and a page missing or altered is the HistoryPageUnreadable application error. A store
// that has them but cannot give them is an error, never stubs: msgstore.ErrEncrypted
// (sealed bodies and no ClientOptions.Keys), msgstore.ErrUnavailable, keyring errors.
func (c *Client) History(ctx context.Context, chatID string, page HistoryInput) (HistoryResult, error) {
	var h HistoryResult
	if err := c.query(ctx, chatID, wire.HistoryQuery, &h, page); err != nil {
		return HistoryResult{}, err
	}
	h, err := c.followPages(ctx, chatID, h, page.Limit)
	if err != nil {
		return HistoryResult{}, err
	}
	for page.MaxBytes == 0 && len(h.Messages) > 0 && h.Offset+len(h.Messages) < h.Total &&
		(page.Limit == 0 || len(h.Messages) < page.Limit) {
		next := HistoryInput{Offset: h.Offset + len(h.Messages)}
		if page.Limit > 0 {
			next.Limit = page.Limit - len(h.Messages)
		}
		var more HistoryResult
		if err := c.query(ctx, chatID, wire.HistoryQuery, &more, next); err != nil {
			return HistoryResult{}, err
		}
		if more, err = c.followPages(ctx, chatID, more, next.Limit); err != nil {
			return HistoryResult{}, err
		}
		if len(more.Messages) == 0 {
			break
		}
		h.Messages, h.Total = append(h.Messages, more.Messages...), more.Total
		h.Store = orStore(h.Store, more.Store)
	}
	if h.Store != "" && len(c.stores) > 0 {
		filled, err := fillFrom(ctx, c.stores, h.Store, chatID, h.Messages)
		if err != nil {
			return HistoryResult{}, fmt.Errorf("agentchat: history of chat %q: %w", chatID, err)
		}
		h.Messages = filled
	}
	return h, nil
}

// pollerWindow is how recently a worker must have polled to count as present; a live
// worker always has a long poll (about a minute) outstanding.
const pollerWindow = 2 * time.Minute

// WorkerWait is how long CheckWorker waits, by default, for a worker to poll the task
// queue. A worker that has just started polls within a second or two, but a server
// that has just restarted lists no pollers until the workers' next polls reach it:
// the SDK retries a failed poll with backoff of up to 10 s, and after three restarts
// in a row pollers were listed 1.3 s, 5.3 s and 8.5 s after the server was back
// (the same measurement as activities.TargetWorkerWait's). So a few seconds are not
// enough, and a command run right after a restart would say "no worker" falsely.
const WorkerWait = 20 * time.Second

// CheckWorker returns ErrNoWorker, with what to do, when no worker has polled the task
// queue (default: the client's) for workflow tasks recently, nor does within the
// client's WorkerWait (ClientOptions; default 20 s) or until ctx ends. Commands call
// it before they start something that would otherwise wait silently for a worker.
func (c *Client) CheckWorker(ctx context.Context, taskQueue string) error {
	if taskQueue == "" {
		taskQueue = c.taskQueue
	}
	if err := c.waitForPoller(ctx, taskQueue); err != nil {
		return fmt.Errorf("agentchat: %w", err)
	}
	return nil
}

// waitForPoller is CheckWorker's wait for task queue taskQueue; its ErrNoWorker says
// nothing was sent (CheckWorker runs before anything is).
func (c *Client) waitForPoller(ctx context.Context, taskQueue string) error {
	// A worker that has just started, or a server that has just restarted, may not
	// list the worker yet: look again until the wait has passed.
	for deadline := time.Now().Add(c.workerWait); ; {
		resp, err := c.tc.DescribeTaskQueue(ctx, taskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if ns := c.noNamespace(fmt.Sprintf("look for a worker of task queue %q", taskQueue), err); ns != nil {
			return &wrapped{msg: strings.TrimPrefix(ns.Error(), "agentchat: "), err: ns} // the callers say "agentchat: "
		}
		if err != nil {
			return fmt.Errorf("describe task queue %q: %w", taskQueue, err)
		}
		for _, p := range resp.GetPollers() {
			if time.Since(p.GetLastAccessTime().AsTime()) < pollerWindow {
				return nil
			}
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for a worker to poll task queue %q: %w", taskQueue, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	return c.noWorker(taskQueue, fmt.Sprintf("none polled it within %s", c.workerWait), "nothing was sent")
}

// CheckChatWorker is CheckWorker for the task queue of a chat. Finished chats need a
// worker too: Temporal answers their queries by replaying them on one. Its ErrNoWorker
// names the chat and says that nothing was sent to it.
func (c *Client) CheckChatWorker(ctx context.Context, chatID string) error {
	d, err := c.tc.DescribeWorkflowExecution(ctx, chatID, "")
	if err != nil {
		return c.chatError(ctx, "find", chatID, err)
	}
	tq := d.GetWorkflowExecutionInfo().GetTaskQueue()
	if err := c.waitForPoller(ctx, tq); err != nil {
		return fmt.Errorf("agentchat: chat %q: %w", chatID, err)
	}
	return nil
}

// RunID returns the run id of the chat's current (or last) workflow run, for links.
func (c *Client) RunID(ctx context.Context, chatID string) (string, error) {
	d, err := c.tc.DescribeWorkflowExecution(ctx, chatID, "")
	if err != nil {
		return "", c.chatError(ctx, "find", chatID, err)
	}
	return d.GetWorkflowExecutionInfo().GetExecution().GetRunId(), nil
}

func (c *Client) query(ctx context.Context, chatID, name string, out any, args ...any) error {
	return c.queryAs(ctx, "query", "", chatID, name, out, args...)
}

// queryAs runs query name on the chat for a call that verb names ("send to"); a query
// no worker answers within the client's WorkerWait is ErrNoWorker, with left, what
// the call left behind ("" for nothing worth saying).
func (c *Client) queryAs(ctx context.Context, verb, left, chatID, name string, out any, args ...any) error {
	err := c.answeredInTime(ctx, func(ctx context.Context) error {
		v, err := c.tc.QueryWorkflow(ctx, chatID, "", name, args...)
		if err == nil {
			err = v.Get(out)
		}
		return err
	})
	if errors.Is(err, errNotTaken) || noPollerSeen(err) {
		return c.chatNoWorker(ctx, verb, chatID, left, err)
	}
	if err != nil {
		err = c.chatError(ctx, verb, chatID, err)
		if left != "" && errors.Is(err, ErrKeyMismatch) {
			err = &wrapped{msg: err.Error() + "; " + left, err: err}
		}
		return err
	}
	c.answeredInClear(chatID)
	return nil
}

// answeredInClear records that chat chatID answered this keyless client with a
// payload it could read: its workers do not encrypt, so guardClearText need not ask.
func (c *Client) answeredInClear(chatID string) {
	if c.keys == nil {
		c.clearChats.Store(chatID, struct{}{})
	}
}

// chatError names the chat and turns "not found" into ErrChatNotFound or, when the
// workflow exists but has finished, ErrChatClosed; an encrypted answer to a client
// without a key ring into ErrNoKeyRing, and one it cannot open into ErrKeyMismatch.
func (c *Client) chatError(ctx context.Context, verb, chatID string, err error) error {
	if c.keys == nil && encryptedAnswer(err) {
		return fmt.Errorf("agentchat: %s chat %q: %w", verb, chatID, ErrNoKeyRing)
	}
	if km := c.keyMismatch(verb, chatID, err, ""); km != nil {
		return km
	}
	if ce := asChatError(verb, chatID, err); ce != nil {
		if ce.Type == wire.ErrTypeMigrated {
			var app *temporal.ApplicationError
			var loc wire.ChatLocation
			if errors.As(err, &app) && app.Details(&loc) == nil {
				return &MigratedError{ChatID: chatID, Target: loc}
			}
		}
		return ce
	}
	var qf *serviceerror.QueryFailed
	if errors.As(err, &qf) && strings.Contains(qf.Message, "unknown queryType") {
		// The handlers are set by the run's first workflow task, which never completed.
		why := "its first workflow task has not run yet"
		if d, derr := c.tc.DescribeWorkflowExecution(ctx, chatID, ""); derr == nil {
			st := d.GetWorkflowExecutionInfo().GetStatus()
			switch {
			case st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
				why = fmt.Sprintf("its workflow ended (%s) before its first workflow task completed", runStatus(st))
			case d.GetPendingWorkflowTask().GetAttempt() > 1:
				why = fmt.Sprintf("its workers failed its first workflow task %d times: see their log", d.GetPendingWorkflowTask().GetAttempt()-1)
			}
		}
		return fmt.Errorf("agentchat: %s chat %q: the chat has not started: %s, so it answers no query "+
			"(temporal workflow show --workflow-id %s says why)", verb, chatID, why, chatID)
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		d, derr := c.tc.DescribeWorkflowExecution(ctx, chatID, "")
		if derr == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			if moved := c.migratedTo(ctx, chatID); moved != nil {
				return moved
			}
			return fmt.Errorf("agentchat: %s chat %q: %w (workflow %s)", verb, chatID, ErrChatClosed,
				d.GetWorkflowExecutionInfo().GetStatus())
		}
		return fmt.Errorf("agentchat: %s chat %q: %w in namespace %q", verb, chatID, ErrChatNotFound, c.namespace)
	}
	if ns := c.noNamespace(fmt.Sprintf("%s chat %q", verb, chatID), err); ns != nil {
		return ns
	}
	return fmt.Errorf("agentchat: %s chat %q: %w", verb, chatID, err)
}

// noNamespace is the error of a call (what, as `list chats`) that failed because the
// server has no namespace of this client's name: what to check and how to create it;
// nil for any other err.
func (c *Client) noNamespace(what string, err error) error {
	var nsf *serviceerror.NamespaceNotFound
	if !errors.As(err, &nsf) {
		return nil
	}
	return &wrapped{msg: fmt.Sprintf("agentchat: %s: the server has no namespace %q: check --namespace (TEMPORAL_NAMESPACE), "+
		"or create it: temporal operator namespace create --namespace %s", what, c.namespace, c.namespace), err: err}
}

// migratedTo returns a *MigratedError if the closed chat's workflow result says it moved.
func (c *Client) migratedTo(ctx context.Context, chatID string) *MigratedError {
	var res wire.AgentChatResult
	if err := c.tc.GetWorkflow(ctx, chatID, "").Get(ctx, &res); err != nil || res.Migration == nil {
		return nil
	}
	m := res.Migration
	return &MigratedError{ChatID: chatID, Target: m.Target, Digest: m.Digest, MessageCount: m.MessageCount}
}

// retryBusy runs f until it succeeds, fails with an error other than Temporal's
// resource-exhausted (at most 10 in-flight updates per workflow by default), the chat's
// ContinuingAsNew refusal (the turn belongs in the next run) or its QueueFull refusal
// (the turns waiting hold QueuedTurnsLimit), or ctx ends. An update the server aborted
// because the workflow task that carried it failed (WorkflowNotReady, "unexpected
// workflow task failure": the task's completion was refused, as with UnhandledCommand
// when an event arrived while the run continued as new) was not applied and is sent
// again, for up to notReadyPatience; the chat's messageId idempotency makes that safe.
func retryBusy(ctx context.Context, f func() error) error {
	delay := 20 * time.Millisecond
	var notReadySince time.Time
	for {
		err := f()
		var busy *serviceerror.ResourceExhausted
		var notReady *serviceerror.WorkflowNotReady
		var app *temporal.ApplicationError
		switch {
		case errors.As(err, &notReady):
			if notReadySince.IsZero() {
				notReadySince = time.Now()
			} else if time.Since(notReadySince) > notReadyPatience {
				return err
			}
		case !errors.As(err, &busy) && !(errors.As(err, &app) && (app.Type() == wire.ErrTypeContinuingAsNew || app.Type() == wire.ErrTypeQueueFull)):
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (gave up retrying: %w)", err, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Second)
	}
}

// notReadyPatience bounds how long retryBusy sends again an update that failed
// workflow tasks abort: a task that fails for longer is a fault of the workflow, which
// the error then shows.
var notReadyPatience = 30 * time.Second

func orStore(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// refused is the InvalidMessage error of a message the client does not send, as the
// chat's validator would have answered it.
func refused(op, chatID string, err error) error {
	return asChatError(op, chatID, temporal.NewApplicationError(err.Error(), wire.ErrTypeInvalidMessage))
}
