package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/wire"
)

// ImportChat implements Activities.ImportChat.
func (tr *transfers) ImportChat(ctx context.Context, in wire.ImportPageInput) (wire.ImportPage, error) {
	defer heartbeatWhileWaiting(ctx)() // reading, decoding and storing bodies may each be slow
	if in.Paging != nil && !tr.stores.keepsPages(in.Store) {
		in.Paging = nil // a worker without a store of pages imports every message into the workflow
	}
	if in.Source.URI != "" {
		if page, ok, err := tr.importStreamed(ctx, in); ok {
			return page, err
		}
	}
	b := []byte(in.Source.Document)
	if in.Source.URI != "" {
		var err error
		if b, err = tr.store.Get(ctx, in.Source.URI); err != nil {
			return wire.ImportPage{}, err
		}
	}
	doc, report, raw, err := decodedDocs.decode(b, tr.docs)
	if err != nil {
		return wire.ImportPage{}, InvalidDocument(err)
	}
	page := wire.ImportPage{Total: len(doc.History)}
	if in.Offset == 0 { // the first page answers for the whole document; the others need not again
		recent := doc.History
		if in.Paging != nil {
			window, _ := in.Paging.Window.Effective()
			recent = recent[wire.ImportBoundary(recent, window):]
		}
		if err := tr.firstPage(ctx, in, &page, doc, report, recent); err != nil {
			return wire.ImportPage{}, err
		}
		if in.Paging != nil {
			if err := tr.importPages(ctx, in, doc.History, raw, &page); err != nil {
				return wire.ImportPage{}, tr.dropImportPages(ctx, in, err)
			}
			in.Offset = page.Base
		}
	}
	if err := tr.importMessages(ctx, in, &page, doc.History, 0, len(doc.History), len(b)); err != nil {
		if page.Base > 0 { // this call wrote the document's older messages as pages
			err = tr.dropImportPages(ctx, in, err)
		}
		return wire.ImportPage{}, err
	}
	if in.Offset+len(page.Messages) >= len(doc.History) {
		decodedDocs.forget(b) // the last page: the restore needs the document no more
	}
	return page, nil
}

// firstPage checks a document as the first call of an import does, before anything is
// stored, and puts its header (doc without its history) and repairs in page. recent is
// its history from wire.ImportBoundary on, all of it without paging: the messages
// the chat will hold (the others go to pages, which have no size limit) and the end of
// the history, which CheckOpenCalls reads back to its latest user message.
func (tr *transfers) firstPage(ctx context.Context, in wire.ImportPageInput, page *wire.ImportPage, doc chatstate.Document, report chatstate.Report, recent []chat.Message) error {
	if err := wire.CheckDocumentSizes(recent, doc.PendingTurns, 0); err != nil {
		return InvalidDocument(err)
	}
	if len(in.Participants) > 0 { // before any body is stored (the restore checks it again)
		if err := chat.CheckOpenCalls(recent, in.Participants); err != nil {
			return InvalidDocument(fmt.Errorf("import: %w", err))
		}
	}
	if err := wire.CheckStrategyStates(doc.Strategies, in.SelectionType, in.TerminationType); err != nil {
		return InvalidDocument(fmt.Errorf("import: %w", err))
	}
	header := doc
	header.History = nil
	page.Header, page.Repairs = &header, report.Repairs
	return tr.stubHeader(ctx, in.Store, page)
}

// importMessages puts in page the messages from in.Offset on, at most about
// wire.HistoryPageBytes of them, of a history of total messages whose messages
// [from, total) are msgs, in a document of docBytes bytes.
//
// A large document: the bodies of all but the latest messages go to the message
// store now, so the restored run holds stubs, not megabytes; a page is then sized by
// its stubs, and carries many more messages. A message over ReplyInlineLimit goes
// there wherever it is, as a live chat's reply would have.
func (tr *transfers) importMessages(ctx context.Context, in wire.ImportPageInput, page *wire.ImportPage, msgs []chat.Message, from, total, docBytes int) error {
	stubBelow := 0
	if docBytes > wire.ImportInlineBytes {
		stubBelow = total - importKeepInline
	}
	size := 0
	if page.Header != nil {
		size = wire.MessageBytes(chat.Message{}) + len(mustEncode(page.Header)) // the page carries it too
	}
	var stub []int // indexes in page.Messages of the messages to store
	for i := in.Offset; i < total && (size < wire.HistoryPageBytes || i == in.Offset); i++ {
		m := msgs[i-from]
		sent, stored := m, i < stubBelow || wire.MessageBytes(m) > wire.ReplyInlineLimit
		if stored {
			sent.Contents = nil
		}
		size += wire.MessageBytes(sent)
		if size > wire.HistoryPageBytes && i > in.Offset {
			break
		}
		if stored {
			stub = append(stub, len(page.Messages))
		}
		page.Messages = append(page.Messages, m)
	}
	if len(stub) == 0 {
		return nil
	}
	// Stored under the importing chat's id (the workflow calling), not the source's.
	chatID := activity.GetInfo(ctx).WorkflowExecution.ID
	return tr.stubPage(ctx, chatID, in.Store, page, stub)
}

// importKeepInline is how many of a document's latest messages keep their bodies
// inline when it is over wire.ImportInlineBytes.
const importKeepInline = 32

// stubPage stores the bodies of the page's messages at the indexes stub (ascending),
// in batches of about wire.HistoryPageBytes, and leaves stubs in their place.
func (tr *transfers) stubPage(ctx context.Context, chatID, store string, page *wire.ImportPage, stub []int) error {
	page.Messages = slices.Clone(page.Messages) // the cached document's messages stay whole
	for from := 0; from < len(stub); {
		to, size := from, 0
		var batch []chat.Message
		for to < len(stub) {
			n := wire.MessageBytes(page.Messages[stub[to]]) // once: it walks every content
			if to > from && size+n > wire.HistoryPageBytes {
				break
			}
			size += n
			batch = append(batch, page.Messages[stub[to]])
			to++
		}
		res, err := tr.stores.StoreMessages(ctx, wire.StoreMessagesInput{ChatID: chatID, Store: store, Messages: batch})
		if err != nil {
			return err
		}
		page.Store = res.Store
		for _, i := range stub[from:to] {
			page.CallIDs = page.CallIDs.AddCalls(page.Messages[i])
			page.Messages[i].Contents = nil
		}
		from = to
	}
	return nil
}

// decodedDocs keeps the documents ImportChat decoded lately, so that the pages of one
// import decode their document once rather than once per page (a 10,000-message
// document of 7 MB has 2 pages, and Decode takes 0.05 s on it).
var decodedDocs = &docCache{max: 4, seed: maphash.MakeSeed()}

// docCache maps a document's bytes to what chatstate.Decode returned for them, for at
// most max documents (the oldest goes first). Keyed by the bytes, it is right whatever
// the source: a file that changes between pages is decoded again. An entry is found by
// a hash of the bytes (maphash, with this process's random seed: a 7 MB document hashes
// in well under a millisecond, an import hashing it three times) and taken only when
// its bytes are the same.
type docCache struct {
	mu      sync.Mutex
	max     int
	seed    maphash.Seed
	entries []docEntry // oldest first
}

type docEntry struct {
	hash   uint64
	bytes  []byte // the document's, as read (not modified after: ImportChat's own)
	doc    chatstate.Document
	report chatstate.Report
	raw    [][]byte // the history's messages in canonical form, or nil (DecodeKeepingBytes)
}

// find returns the index of b's entry, or -1; c.mu must be held.
func (c *docCache) find(hash uint64, b []byte) int {
	return slices.IndexFunc(c.entries, func(e docEntry) bool { return e.hash == hash && bytes.Equal(e.bytes, b) })
}

// decode returns chatstate.DecodeKeepingBytes of the document b holds (an envelope
// opened with opts, or the document), from the cache when b was decoded lately.
// Callers must not modify the document returned, nor b, nor raw.
func (c *docCache) decode(b []byte, opts envelope.Options) (chatstate.Document, chatstate.Report, [][]byte, error) {
	hash := maphash.Bytes(c.seed, b)
	c.mu.Lock()
	if i := c.find(hash, b); i >= 0 {
		e := c.entries[i]
		c.mu.Unlock()
		return e.doc, e.report, e.raw, nil
	}
	c.mu.Unlock()
	plain, _, err := envelope.Open(b, opts)
	if err != nil {
		// The client opened it with its keys already (or never saw it: a store's): say
		// whose keys these are.
		return chatstate.Document{}, chatstate.Report{}, nil, fmt.Errorf("the worker could not open the document (its keys): %w", err)
	}
	doc, report, raw, err := chatstate.DecodeKeepingBytes(plain)
	if err != nil {
		return doc, report, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		c.entries = slices.Delete(c.entries, 0, len(c.entries)-c.max+1)
	}
	c.entries = append(c.entries, docEntry{hash: hash, bytes: b, doc: doc, report: report, raw: raw})
	return doc, report, raw, nil
}

// forget drops the document b from the cache.
func (c *docCache) forget(b []byte) {
	hash := maphash.Bytes(c.seed, b)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = slices.DeleteFunc(c.entries, func(e docEntry) bool { return e.hash == hash && bytes.Equal(e.bytes, b) })
}

// stubHeader stores the bodies of the header's pending turns when they would leave the
// first page too little room (over half of wire.HistoryPageBytes): the restored
// chat queues stubs, which its model calls fill from the store.
func (tr *transfers) stubHeader(ctx context.Context, store string, page *wire.ImportPage) error {
	h := page.Header
	if len(h.PendingTurns) == 0 || len(mustEncode(h)) <= wire.HistoryPageBytes/2 {
		return nil
	}
	chatID := activity.GetInfo(ctx).WorkflowExecution.ID
	res, err := tr.stores.StoreMessages(ctx, wire.StoreMessagesInput{ChatID: chatID, Store: store, Messages: h.PendingTurns})
	if err != nil {
		return err
	}
	page.Store = res.Store
	h.PendingTurns = slices.Clone(h.PendingTurns) // the cached document's turns stay whole
	for i := range h.PendingTurns {
		h.PendingTurns[i].Contents = nil
	}
	return nil
}

// mustEncode returns v's JSON, or nothing for what does not encode.
func mustEncode(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// InvalidDocument wraps a document error as the non-retryable InvalidDocument error.
func InvalidDocument(err error) error {
	var fe *chatstate.FieldError
	msg := err.Error()
	if errors.As(err, &fe) {
		msg = fe.Error()
	}
	return temporal.NewNonRetryableApplicationError(msg, wire.ErrTypeInvalidDocument, nil)
}
