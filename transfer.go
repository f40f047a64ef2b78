package agentchat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// Transfer types, re-exported.
type (
	Document        = chatstate.Document
	ChatLocation    = wire.ChatLocation
	MigrationResult = wire.MigrationResult
	DocumentSource  = wire.DocumentSource
)

// Export returns the chat's chat-state document in canonical bytes (chat-state-v1.md)
// with its digest. It reads the chat through its queries, so it works for chats of any
// size and for finished chats; a turn in progress is exported as a pending turn.
//
// A long chat keeps older message bodies in the worker's message store. The client
// fills them from ClientOptions.MessageStores when it has that store; otherwise it asks
// the chat's worker to export (the Export update) and reads the result, inline or from
// a file:// URI on this machine.
func (c *Client) Export(ctx context.Context, chatID string) ([]byte, string, error) {
	e, err := c.export(ctx, chatID)
	return e.plain, e.Digest, err
}

// ExportedDocument is a document exported for rest (ExportSealed).
type ExportedDocument struct {
	// Bytes are the envelope, or the document itself when ClientOptions.Documents
	// neither encrypt nor sign (SealDocument's result).
	Bytes []byte
	// Digest is the document's digest ("sha256:<hex>").
	Digest string
	// MessageCount counts its history; PendingTurns its pending turns.
	MessageCount, PendingTurns int
}

// ExportSealed is Export, then SealDocument: the chat's document wrapped for rest as
// ClientOptions.Documents say (what `starter export --out` writes). When the chat's
// worker wrote the document already wrapped that way (encrypted with this client's
// current key or not at all, signed by this client's signing key or not at all),
// its bytes are returned as they are once they open here (authentic, any signature
// verified): the document is decrypted once, not decrypted and sealed again.
// Errors: those of Export and SealDocument.
func (c *Client) ExportSealed(ctx context.Context, chatID string) (ExportedDocument, error) {
	e, err := c.export(ctx, chatID)
	if err != nil {
		return ExportedDocument{}, err
	}
	if e.Bytes == nil {
		if e.Bytes, err = c.SealDocument(e.plain, e.Digest); err != nil {
			return ExportedDocument{}, fmt.Errorf("agentchat: export chat %q: %w", chatID, err)
		}
	}
	return e.ExportedDocument, nil
}

// exported is an export's document in the clear, and wrapped when it came wrapped as
// the client wraps (else Bytes is nil).
type exported struct {
	ExportedDocument
	plain []byte
}

func (c *Client) export(ctx context.Context, chatID string) (exported, error) {
	// The document is read by many queries: first make sure a worker answers them.
	var st StateResult
	if err := c.queryAs(ctx, "export", "", chatID, wire.StateQuery, &st); errors.Is(err, ErrNoWorker) {
		return exported{}, err
	}
	var fill transfer.Filler
	if len(c.stores) > 0 {
		fill = func(ctx context.Context, msgs []chat.Message) ([]chat.Message, error) {
			// What the client's stores cannot fill (a body it cannot open or reach)
			// stays a stub, so the export goes through the worker, which has its store
			// and ring.
			if out, err := fillFrom(ctx, c.stores, "", chatID, msgs); err == nil {
				return out, nil
			}
			return msgs, nil
		}
	}
	var pages transfer.PageReader
	if len(c.stores) > 0 {
		pages = c.exportPages
	}
	doc, err := transfer.BuildDocument(ctx, c.tc, chatID, "", transfer.Source{Namespace: c.namespace, Cluster: c.cluster}, fill, pages)
	if errors.Is(err, transfer.ErrStoredMessages) {
		return c.exportThroughWorker(ctx, chatID)
	}
	if err != nil {
		return exported{}, c.chatError(ctx, "export", chatID, err)
	}
	b, digest, err := chatstate.Encode(doc)
	if err != nil {
		return exported{}, fmt.Errorf("agentchat: export chat %q: %w", chatID, err)
	}
	return exported{plain: b, ExportedDocument: ExportedDocument{Digest: digest,
		MessageCount: len(doc.History), PendingTurns: len(doc.PendingTurns)}}, nil
}

// exportThroughWorker runs the Export update and reads the document it wrote.
func (c *Client) exportThroughWorker(ctx context.Context, chatID string) (exported, error) {
	res, err := c.ExportTo(ctx, chatID, wire.ExportInput{Sink: wire.SinkAuto})
	if err != nil {
		return exported{}, err
	}
	b := []byte(res.Document)
	if len(b) == 0 {
		path, err := transfer.PathOf(res.URI)
		if err == nil {
			b, err = os.ReadFile(path)
		}
		if err != nil {
			return exported{}, fmt.Errorf("agentchat: export chat %q: the worker wrote it to %s, which this machine cannot read (%v); "+
				"give the client the message store (ClientOptions.MessageStores) or read it there", chatID, res.URI, err)
		}
	}
	e := exported{ExportedDocument: ExportedDocument{Digest: res.Digest, MessageCount: res.MessageCount, PendingTurns: len(res.PendingTurns)}}
	doc, info, err := envelope.Open(b, c.docs) // b itself is left as it is
	if err != nil {
		return exported{}, fmt.Errorf("agentchat: export chat %q: %w", chatID, err)
	}
	e.plain = doc
	if c.docs.Wraps(info) {
		e.Bytes = b
	}
	return e, nil
}

// SealDocument wraps a document for rest as ClientOptions.Documents say: encrypted
// with the key ring, signed with the signing key (package envelope; the document
// itself when neither is configured). digest is the document's (Export returns it).
func (c *Client) SealDocument(doc []byte, digest string) ([]byte, error) {
	return envelope.Seal(doc, digest, c.docs)
}

// OpenDocument returns the v1 document in b (an envelope or a plain document),
// decrypted and its signature verified as ClientOptions.Documents say. Errors: those
// of envelope.Open.
func (c *Client) OpenDocument(b []byte) ([]byte, envelope.Info, error) {
	return envelope.Open(b, c.docs)
}

// fillFrom fills the stubs of msgs from the client's store named store, or, when the
// client has no store of that name, from the first of its stores that has them. With
// no store that has them, msgs are returned as they are (stubs). A store's error other
// than msgstore.ErrNotFound (msgstore.ErrEncrypted without the key ring,
// msgstore.ErrUnavailable, a body that does not open) is returned, wrapped "read the
// stored bodies from store NAME: ...": the stubs are never passed off as the messages.
func fillFrom(ctx context.Context, stores map[string]msgstore.Store, store, chatID string, msgs []chat.Message) ([]chat.Message, error) {
	if st, ok := stores[store]; ok {
		out, err := transfer.FillStubs(ctx, st, chatID, msgs)
		if err != nil {
			return nil, fmt.Errorf("read the stored bodies from store %q: %w", store, err)
		}
		return out, nil
	}
	var failed error
	for name, st := range stores {
		out, err := transfer.FillStubs(ctx, st, chatID, msgs)
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, msgstore.ErrNotFound) && failed == nil {
			failed = fmt.Errorf("read the stored bodies from store %q: %w", name, err)
		}
	}
	if failed != nil {
		return nil, failed
	}
	return msgs, nil
}

// ImportOptions describe the chat a document is restored into.
type ImportOptions struct {
	// ChatID of the new chat; default "chat-<uuid>".
	ChatID string
	// Participants of the new chat (agent ids); default the document's participants.
	// Kinds the document has and these lack keep their channels (reduced); kinds these
	// add get new channels synchronized from the history (enhanced).
	Participants    []string
	Selection       SelectionStrategy
	Termination     TerminationStrategy
	MaxMessageBytes int
	// Document is the document's bytes; or give Path.
	Document []byte
	// Path is a document file. Documents over 1 MiB go to the worker by this path, so
	// the worker must be able to read it (same machine or a shared volume).
	Path string
	// History and HistoryBudget are StartOptions'. A document carries neither (nor the
	// window or page sizes of the chat it was exported from): the new chat has the
	// defaults unless they are set here, and its import writes the document's older
	// messages as pages of these sizes.
	HistoryBudget wire.HistoryBudget
	History       *wire.HistoryWindow
}

// Import restores a document into a new chat and returns its state once restored. The
// document is validated here first (chatstate.Decode): a bad version, digest or shape
// fails with an error naming the field and nothing is created. An unknown agent fails
// as in Start, leaving nothing running. Strategy state is taken over when the chat's
// strategy types match the document's.
func (c *Client) Import(ctx context.Context, opts ImportOptions) (StateResult, error) {
	doc, src, err := c.checkImport(opts.Document, opts.Path)
	if err != nil {
		return StateResult{}, err
	}
	if len(opts.Participants) == 0 {
		for _, p := range doc.Participants {
			opts.Participants = append(opts.Participants, p.ID)
		}
	}
	in, err := StartOptions{Participants: opts.Participants, Selection: opts.Selection,
		Termination: opts.Termination, MaxMessageBytes: opts.MaxMessageBytes,
		HistoryBudget: opts.HistoryBudget, History: opts.History}.input(false)
	if err != nil {
		return StateResult{}, err
	}
	in.Restore = &src
	id := opts.ChatID
	if id == "" {
		id = "chat-" + uuid.NewString()
	}
	var st StateResult
	err = c.updateWithStart(ctx, id, in, wire.DescribeUpdate, nil, &st)
	return st, err
}

// ImportInto restores a document into an existing, empty chat (the Import update). A
// chat that already has history or turns, was restored already or is importing now
// refuses with a ChatNotEmpty error that says which, and is unharmed.
func (c *Client) ImportInto(ctx context.Context, chatID string, document []byte, path string) (StateResult, error) {
	src, err := c.importIntoSource(chatID, document, path)
	if err != nil {
		return StateResult{}, err
	}
	var st StateResult
	if err := c.update(ctx, chatID, "import into", wire.ImportUpdate, wire.ImportInput{Source: src}, &st); err != nil {
		return StateResult{}, err
	}
	return st, nil
}

// checkImport reads the document to import and checks it as the worker will (Decode's
// checks, then wire.CheckDocumentSizes for the default window), and returns it without
// its history, and how to pass it to a worker. A plain document in a file over
// wire.InlineLimit is read in place (chatstate.Decoder), one message at a time, with a
// heap of about the window; an envelope is read whole, as envelope.Open needs its bytes
// to decrypt them and to verify its signature over the document, and so is a document
// when signatures are required.
func (c *Client) checkImport(document []byte, path string) (chatstate.Document, wire.DocumentSource, error) {
	if path != "" && len(document) == 0 && !c.docs.RequireSignature {
		if doc, src, ok, err := checkFileInPlace(path, c.importSpill); ok || err != nil {
			return doc, src, err
		}
	}
	b, src, err := readDocument(document, path)
	if err != nil {
		return chatstate.Document{}, wire.DocumentSource{}, err
	}
	if b, _, err = envelope.Open(b, c.docs); err != nil {
		return chatstate.Document{}, wire.DocumentSource{}, fmt.Errorf("agentchat: import: %w", err)
	}
	doc, _, err := chatstate.Decode(b)
	if err != nil {
		return chatstate.Document{}, wire.DocumentSource{}, fmt.Errorf("agentchat: import: %w", err)
	}
	if err := wire.CheckDocumentSizes(doc.History, doc.PendingTurns, wire.WindowMessages); err != nil {
		return chatstate.Document{}, wire.DocumentSource{}, fmt.Errorf("agentchat: import: %w", err)
	}
	doc.History = nil
	return doc, src, nil
}

// checkFileInPlace is checkImport for a plain document in a file over
// wire.InlineLimit; ok is false for any other file (checkImport reads it whole).
func checkFileInPlace(path string, spill chatstate.SpillOpener) (doc chatstate.Document, src wire.DocumentSource, ok bool, err error) {
	f, size, src, ok, err := openPlainFile(path)
	if !ok || err != nil {
		return chatstate.Document{}, wire.DocumentSource{}, ok, err
	}
	defer f.Close()
	fail := func(err error) (chatstate.Document, wire.DocumentSource, bool, error) {
		return chatstate.Document{}, wire.DocumentSource{}, true, fmt.Errorf("agentchat: import: %w", err)
	}
	tail := wire.NewImportTail(wire.WindowMessages)
	dec := chatstate.NewDecoder(f, size).SpillIDs(spill).Each(func(i int, m chat.Message) {
		if i == 0 { // Header started over
			tail = wire.NewImportTail(wire.WindowMessages)
		}
		tail.Add(m)
	})
	if doc, _, err = dec.Header(); err != nil { // one reading: the window comes from it
		return fail(err)
	}
	if err := wire.CheckDocumentSizes(tail.Messages(), doc.PendingTurns, 0); err != nil {
		return fail(err)
	}
	return doc, src, true, nil
}

// streamDocumentBytes is wire.StreamDocumentBytes, lowered by tests.
var streamDocumentBytes int64 = wire.StreamDocumentBytes

// openPlainFile opens the file at path when it holds a plain document (not an
// envelope) over wire.InlineLimit, which goes to the worker by URI, and returns it
// open, its size and that URI; ok is false, and nothing open, for any other file.
func openPlainFile(path string) (f *os.File, size int64, src wire.DocumentSource, ok bool, err error) {
	fail := func(err error) (*os.File, int64, wire.DocumentSource, bool, error) {
		if f != nil {
			_ = f.Close()
		}
		return nil, 0, wire.DocumentSource{}, true, fmt.Errorf("agentchat: import: %w", err)
	}
	if f, err = os.Open(path); err != nil {
		return fail(err)
	}
	info, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if info.Size() <= max(wire.InlineLimit, streamDocumentBytes) || !chatstate.StartsEncoded(f, info.Size()) {
		_ = f.Close()
		return nil, 0, wire.DocumentSource{}, false, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fail(err)
	}
	return f, info.Size(), wire.DocumentSource{URI: transfer.FileURI(abs)}, true, nil
}

// importIntoSource is how ImportInto passes the document to the worker, which checks
// it: a plain document in a file over wire.InlineLimit by its URI, not read here; any
// other is read, and an envelope opened with the client's keys first.
func (c *Client) importIntoSource(chatID string, document []byte, path string) (wire.DocumentSource, error) {
	if path != "" && len(document) == 0 && !c.docs.RequireSignature {
		f, _, src, ok, err := openPlainFile(path)
		if err != nil {
			return wire.DocumentSource{}, err
		}
		if ok {
			_ = f.Close()
			return src, nil
		}
	}
	b, src, err := readDocument(document, path)
	if err != nil {
		return wire.DocumentSource{}, err
	}
	if _, _, err = envelope.Open(b, c.docs); err != nil {
		return wire.DocumentSource{}, fmt.Errorf("agentchat: import into chat %q: %w", chatID, err)
	}
	return src, nil
}

// readDocument returns the bytes and how to pass them to a worker: inline up to
// wire.InlineLimit, else by the file's absolute path.
func readDocument(doc []byte, path string) ([]byte, wire.DocumentSource, error) {
	if (len(doc) == 0) == (path == "") {
		return nil, wire.DocumentSource{}, fmt.Errorf("agentchat: import: %w: give a document or a path, not both", ErrInvalidOptions)
	}
	if path != "" {
		var err error
		if doc, err = os.ReadFile(path); err != nil {
			return nil, wire.DocumentSource{}, fmt.Errorf("agentchat: import: %w", err)
		}
	}
	if len(doc) <= wire.InlineLimit {
		return doc, wire.DocumentSource{Document: json.RawMessage(doc)}, nil
	}
	if path == "" {
		return nil, wire.DocumentSource{}, fmt.Errorf("agentchat: import: %w: a document over %d bytes must be given by path", ErrInvalidOptions, wire.InlineLimit)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, wire.DocumentSource{}, err
	}
	return doc, wire.DocumentSource{URI: transfer.FileURI(abs)}, nil
}

// MigrateOptions name a migration's target. Give ToNamespace, ToCluster (a cluster name
// configured on the worker), or both; ToChatID defaults to the chat's id.
type MigrateOptions struct {
	ToNamespace string
	ToCluster   string
	// ToAddress names the target cluster by address; the worker must have a cluster
	// configured there.
	ToAddress string
	ToChatID  string
}

// Migrate moves a running chat to another namespace or cluster and returns where it
// lives now; keep talking to it there. Calling Migrate again for the same target (after
// a crash, or a timeout) joins or reports the same migration. Errors: ErrChatNotFound;
// a MigratedError when the chat has already moved elsewhere; Migrating when it is
// moving to another target; MigrationFailed (the chat goes on where it was).
func (c *Client) Migrate(ctx context.Context, chatID string, opts MigrateOptions) (MigrationResult, error) {
	in := wire.MigrateInput{ToNamespace: opts.ToNamespace, ToCluster: opts.ToCluster, ToAddress: opts.ToAddress, ToChatID: opts.ToChatID}
	var res MigrationResult
	err := c.update(ctx, chatID, "migrate", wire.MigrateUpdate, in, &res)
	var moved *MigratedError
	if errors.As(err, &moved) && sameTarget(moved.Target, in, chatID) {
		return MigrationResult{Target: moved.Target, Digest: moved.Digest, MessageCount: moved.MessageCount}, nil
	}
	return res, err
}

func sameTarget(l ChatLocation, in wire.MigrateInput, chatID string) bool {
	id := in.ToChatID
	if id == "" {
		id = chatID
	}
	return l.ChatID == id && l.Cluster == in.ToCluster && l.Address == in.ToAddress &&
		(in.ToNamespace == "" || l.Namespace == in.ToNamespace)
}

// AddParticipants adds agents to a running chat; an agent whose channel the chat kept
// from an import resumes it.
func (c *Client) AddParticipants(ctx context.Context, chatID string, agentIDs ...string) (StateResult, error) {
	var st StateResult
	err := c.update(ctx, chatID, "add participants to", wire.AddParticipantsUpdate,
		wire.AddParticipantsInput{AgentIDs: agentIDs}, &st)
	return st, err
}

// ExportTo asks the chat's worker to write the document to a sink (the Export update):
// "auto" (inline when small, else the worker's store), "inline", "store", or "file" with
// a path on the worker's machine.
func (c *Client) ExportTo(ctx context.Context, chatID string, in ExportInput) (ExportResult, error) {
	var res wire.ExportResult
	err := c.update(ctx, chatID, "export", wire.ExportUpdate, in, &res)
	return res, err
}

// update runs an update on a chat and waits for its result.
func (c *Client) update(ctx context.Context, chatID, verb, name string, arg, out any) error {
	if err := c.guardClearText(ctx, verb, chatID); err != nil {
		return err
	}
	opts := client.UpdateWorkflowOptions{UpdateID: uuid.NewString(), WorkflowID: chatID, UpdateName: name,
		Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted}
	err := retryBusy(ctx, func() error {
		return c.withWorker(ctx, chatID, opts.UpdateID, func(ctx context.Context) error {
			h, err := c.tc.UpdateWorkflow(ctx, opts)
			if err != nil {
				return err
			}
			return h.Get(ctx, out)
		})
	})
	if errors.Is(err, errNotTaken) {
		return c.chatNoWorker(ctx, verb, chatID, pendingUpdate(name, arg), err)
	}
	if km := c.keyMismatch(verb, chatID, err, tookUpdate(name, arg)); km != nil {
		return km
	}
	if err != nil {
		return c.chatError(ctx, verb, chatID, err)
	}
	c.answeredInClear(chatID)
	return nil
}

// pendingUpdate says what an update that no worker took may still do: the server
// keeps it for the chat, and a worker that comes back runs it.
func pendingUpdate(name string, arg any) string {
	if msg, ok := arg.(SendMessageInput); ok {
		return fmt.Sprintf("the turn (messageId %q) may still be taken once a worker is back: sending it again with that messageId does not take it twice", msg.MessageID)
	}
	return fmt.Sprintf("the %s update may still be applied once a worker is back", name)
}

// tookUpdate says what an update did whose answer does not open here: the chat took
// it.
func tookUpdate(name string, arg any) string {
	if msg, ok := arg.(SendMessageInput); ok {
		return fmt.Sprintf("the chat took it (messageId %q): its answer opens only with the workers' keys", msg.MessageID)
	}
	return fmt.Sprintf("the chat took the %s update: its answer opens only with the workers' keys", name)
}
