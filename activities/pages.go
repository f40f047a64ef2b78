package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// stores keeps the bodies of older messages and the history pages of long chats in the
// worker's message stores (Config.Stores), sealed with Config.Keys: storing, writing,
// looking up, reading and deleting them. It owns the stores by name and the default
// one's name.
type stores struct {
	byName       map[string]msgstore.Store
	defaultStore string
}

// WritePages implements Activities.WritePages.
func (s *stores) WritePages(ctx context.Context, in wire.WritePagesInput) (wire.WritePagesResult, error) {
	return s.writePages(ctx, in, nil)
}

// writePages is WritePages given, when raw is not nil, the canonical form of each of
// in.Messages (raw[i], chatstate.DecodeKeepingBytes's promise): the pages copy those
// bytes rather than encode the messages again (msgstore.EncodePageBodyFrom).
func (s *stores) writePages(ctx context.Context, in wire.WritePagesInput, raw [][]byte) (wire.WritePagesResult, error) {
	if raw != nil && len(raw) != len(in.Messages) {
		raw = nil
	}
	st, err := s.messageStore(in.Store)
	if err != nil {
		return wire.WritePagesResult{}, err
	}
	ps, ok := st.(msgstore.PageStore)
	if !ok {
		return wire.WritePagesResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"message store %q keeps no history pages (it is not a msgstore.PageStore): the chat keeps its messages in the workflow", st.Name()),
			wire.ErrTypeInvalidInput, nil)
	}
	total := 0
	for _, n := range in.Cuts {
		if n < 1 {
			total = -1
			break
		}
		total += n
	}
	if total != len(in.Messages) {
		return wire.WritePagesResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"write pages of chat %q: cuts %v do not divide its %d messages", in.ChatID, in.Cuts, len(in.Messages)),
			wire.ErrTypeInvalidInput, nil)
	}
	msgs := make([]chat.Message, len(in.Messages))
	var large []chat.Message
	for i, m := range in.Messages {
		msgs[i] = m
		if m.Contents != nil && wire.MessageBytes(m) > wire.PageBodyBytes {
			large = append(large, chat.Message{MessageID: m.MessageID, Role: m.Role, AgentID: m.AgentID, Contents: m.Contents})
			msgs[i].Contents = nil
			if raw != nil { // a stub now: its page entry is not its canonical form
				raw = slices.Clone(raw)
				raw[i] = nil
			}
		}
	}
	if len(large) > 0 {
		if err := st.Put(ctx, in.ChatID, large); err != nil {
			return wire.WritePagesResult{}, storeError(err)
		}
	}
	res := wire.WritePagesResult{Store: st.Name(), Pages: make([]wire.PageRef, 0, len(in.Cuts))}
	batches, stop := make(chan pageBatch, 1), make(chan struct{})
	defer close(stop)
	go encodePages(in, msgs, raw, batches, stop) // the next batch is encoded while this one is written
	for b := range batches {
		if b.err != nil {
			return wire.WritePagesResult{}, b.err
		}
		digests, err := putPages(ctx, ps, in.ChatID, b.pages)
		if err != nil {
			return wire.WritePagesResult{}, storeError(err)
		}
		for i, p := range b.pages {
			res.Pages = append(res.Pages, wire.PageRef{Seq: p.Seq, First: p.First, Count: p.Count, Bytes: len(p.Body), Digest: digests[i]})
		}
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, len(res.Pages))
		}
	}
	index := append(slices.Clip(in.Index), res.Pages...)
	res.Index, err = wire.FoldIndex(index, orFanout(in.Fanout), func(level int, seq int64, refs []wire.PageRef) (wire.PageRef, error) {
		return writeIndexPage(ctx, ps, in.ChatID, in.Lineage, level, seq, refs)
	})
	if err != nil {
		return wire.WritePagesResult{}, err
	}
	return res, nil
}

// pageBatchBytes is how many bytes of page bodies WritePages gives a
// msgstore.PageBatchStore to write in one transaction: a few commits for the pages of
// an import of thousands of messages, with a bounded heap and write lock, and the
// encoding of the next batch alongside. Lowered by tests.
var pageBatchBytes = 2 << 20

// pageBatch is pages WritePages encoded, or why it could not.
type pageBatch struct {
	pages []msgstore.Page
	err   error
}

// encodePages encodes the pages of in, whose messages are msgs (stubs for bodies of
// their own) and, when raw is not nil, their canonical forms where raw has them, and
// sends them to out in batches of about pageBatchBytes, then closes it; a page that
// does not encode ends it with an InvalidInput error. It stops when stop is closed.
func encodePages(in wire.WritePagesInput, msgs []chat.Message, raw [][]byte, out chan<- pageBatch, stop <-chan struct{}) {
	defer close(out)
	send := func(b pageBatch) bool {
		select {
		case out <- b:
			return true
		case <-stop:
			return false
		}
	}
	var batch []msgstore.Page
	size, from := 0, 0
	for k, n := range in.Cuts {
		p := msgstore.Page{Lineage: in.Lineage, Seq: in.Seq + int64(k), First: in.First + int64(from), Count: int64(n)}
		var pageRaw [][]byte
		if raw != nil {
			pageRaw = raw[from : from+n]
		}
		body, err := msgstore.EncodePageBodyFrom(msgstore.PageBody{ChatID: in.ChatID, Lineage: p.Lineage, Seq: p.Seq, First: p.First, Messages: msgs[from : from+n]}, pageRaw)
		if err != nil {
			send(pageBatch{err: temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("write pages of chat %q: %v", in.ChatID, err), wire.ErrTypeInvalidInput, nil)})
			return
		}
		p.Body = body
		for i, m := range msgs[from : from+n] {
			p.IDs = append(p.IDs, msgstore.PageID{Kind: msgstore.IDMessage, ID: m.MessageID, Index: p.First + int64(i), Role: m.Role})
		}
		batch, size = append(batch, p), size+len(body)
		if size >= pageBatchBytes {
			if !send(pageBatch{pages: batch}) {
				return
			}
			batch, size = nil, 0
		}
		from += n
	}
	if len(batch) > 0 {
		send(pageBatch{pages: batch})
	}
}

// putPages writes pages in one transaction when ps is a msgstore.PageBatchStore, and
// one at a time otherwise, and returns their digests in order.
func putPages(ctx context.Context, ps msgstore.PageStore, chatID string, pages []msgstore.Page) ([]string, error) {
	if bs, ok := ps.(msgstore.PageBatchStore); ok {
		return bs.PutPages(ctx, chatID, pages)
	}
	digests := make([]string, len(pages))
	for i, p := range pages {
		d, err := ps.PutPage(ctx, chatID, p)
		if err != nil {
			return nil, err
		}
		digests[i] = d
	}
	return digests, nil
}

// readTurnPages is the most level-0 pages ReadTurn reads: a turn's replies past them
// come from the window or not at all (wire.ReadTurnResult.Ended false).
const readTurnPages = 4

// orFanout is fanout, or wire.IndexFanout for 0.
func orFanout(fanout int) int {
	if fanout > 0 {
		return fanout
	}
	return wire.IndexFanout
}

// writeIndexPage writes the index page of level and seq that lists refs (consecutive
// pages of the level below, of lineage) and returns its reference. Deterministic, as
// level-0 pages are: written again, it is the same row (a no-op). Errors as
// WritePages'.
func writeIndexPage(ctx context.Context, ps msgstore.PageStore, chatID, lineage string, level int, seq int64, refs []wire.PageRef) (wire.PageRef, error) {
	b := msgstore.IndexBody{ChatID: chatID, Lineage: lineage, Level: level, Seq: seq, First: refs[0].First,
		Refs: make([]msgstore.IndexEntry, len(refs))}
	for i, r := range refs {
		b.Refs[i] = msgstore.IndexEntry{Level: r.Level, Seq: r.Seq, First: r.First, Count: r.Count, Bytes: r.Bytes, Digest: r.Digest}
	}
	body, err := msgstore.EncodeIndexBody(b)
	if err != nil {
		return wire.PageRef{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("write pages of chat %q: %v", chatID, err), wire.ErrTypeInvalidInput, nil)
	}
	p := msgstore.Page{Lineage: lineage, Level: level, Seq: seq, First: b.First, Count: b.Count(), Body: body}
	digest, err := ps.PutPage(ctx, chatID, p)
	if err != nil {
		return wire.PageRef{}, storeError(err)
	}
	return wire.PageRef{Level: level, Seq: seq, First: p.First, Count: p.Count, Bytes: len(body), Digest: digest}, nil
}

// DeleteLineage implements Activities.DeleteLineage.
func (s *stores) DeleteLineage(ctx context.Context, in wire.DeleteLineageInput) error {
	st, err := s.messageStore(in.Store)
	if err != nil {
		return err
	}
	ps, ok := st.(msgstore.PageStore)
	if !ok {
		return nil // a store without pages holds none of the lineage
	}
	if err := ps.DeleteLineage(ctx, in.ChatID, in.Lineage); err != nil {
		return storeError(err)
	}
	return nil
}

// dropImportPages deletes the pages the first ImportChat call of in wrote before it
// failed with err (its lineage, in.Paging.Lineage: no index names them) and returns
// err; a deletion that fails is logged (the pages stay, named by nothing). A retry of the
// call writes them again.
func (tr *transfers) dropImportPages(ctx context.Context, in wire.ImportPageInput, err error) error {
	if in.Paging == nil {
		return err
	}
	del := tr.stores.DeleteLineage(ctx, wire.DeleteLineageInput{ChatID: activity.GetInfo(ctx).WorkflowExecution.ID, Store: in.Store, Lineage: in.Paging.Lineage})
	if del != nil {
		activity.GetLogger(ctx).Warn("the pages of a failed import were not deleted", "lineage", in.Paging.Lineage, "error", del)
	}
	return err
}

// LookupIDs implements Activities.LookupIDs.
func (s *stores) LookupIDs(ctx context.Context, in wire.LookupIDsInput) (wire.LookupIDsResult, error) {
	st, err := s.messageStore(in.Store)
	if err != nil {
		return wire.LookupIDsResult{}, err
	}
	ps, ok := st.(msgstore.PageStore)
	if !ok {
		return wire.LookupIDsResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"message store %q keeps no history pages (it is not a msgstore.PageStore)", st.Name()), wire.ErrTypeInvalidInput, nil)
	}
	found, err := ps.LookupIDs(ctx, in.ChatID, msgstore.IDMessage, in.IDs, []msgstore.LineageRange{{Lineage: in.Lineage}})
	if err != nil {
		return wire.LookupIDsResult{}, storeError(err)
	}
	res := wire.LookupIDsResult{}
	for id, loc := range found {
		if res.Found == nil {
			res.Found = map[string]wire.PagedID{}
		}
		res.Found[id] = wire.PagedID{Index: loc.Index, Role: loc.Role}
	}
	return res, nil
}

// importPages writes the messages of history before wire.ImportBoundary as pages of
// the importing chat's store, under in.Paging's lineage, and records them in page:
// their references, a filter of their message ids, their answered turns, and Base,
// where the messages page returns begin. A document too short for pages writes none.
// Retried, it writes the same pages (no-ops): the lineage is the importing run's. raw,
// when not nil, is the canonical form of each message of history (DecodeKeepingBytes),
// which the pages copy.
func (tr *transfers) importPages(ctx context.Context, in wire.ImportPageInput, history []chat.Message, raw [][]byte, page *wire.ImportPage) error {
	window, perPage := in.Paging.Window.Effective()
	base := wire.ImportBoundary(history, window)
	if base == 0 {
		return nil
	}
	paged := history[:base]
	var cuts []int
	for n := len(paged); n > 0; n -= min(n, perPage) {
		cuts = append(cuts, min(n, perPage))
	}
	if raw != nil {
		raw = raw[:base]
	}
	res, err := tr.stores.writePages(ctx, wire.WritePagesInput{ChatID: activity.GetInfo(ctx).WorkflowExecution.ID, Store: in.Store,
		Lineage: in.Paging.Lineage, Cuts: cuts, Messages: paged, Fanout: in.Paging.Window.Fanout()}, raw)
	if err != nil {
		return err
	}
	page.Base, page.Pages, page.Store = base, res.Index, res.Store
	var rec pagedRecord
	for _, m := range paged {
		rec.add(m)
	}
	rec.finish(page)
	return nil
}

// pagedRecord gathers, over the paged messages of an import given one at a time,
// what its first page says of them: a filter of their message ids, their call ids,
// and how many of their turns were answered (a turn, from a user message to the next,
// is answered unless it ends with a failed tool round, wire.FailedAfterTools).
type pagedRecord struct {
	ids, calls wire.CallIDFilter
	turns      int
	open       bool // a turn has begun
	alone      bool // its user message is its only message so far
	failed     bool // its last message failed after tools
}

func (r *pagedRecord) add(m chat.Message) {
	r.ids = r.ids.Add(m.MessageID)
	r.calls = r.calls.AddCalls(m)
	if m.Role == chat.RoleUser {
		r.closeTurn()
		r.open, r.alone, r.failed = true, true, false
		return
	}
	if r.open {
		r.alone, r.failed = false, wire.FailedAfterTools(m)
	}
}

func (r *pagedRecord) closeTurn() {
	if r.open && (r.alone || !r.failed) {
		r.turns++
	}
	r.open = false
}

// finish closes the last turn and records what r gathered in page.
func (r *pagedRecord) finish(page *wire.ImportPage) {
	r.closeTurn()
	page.PagedIDs, page.CallIDs, page.PagedTurns = r.ids, page.CallIDs.Union(r.calls), r.turns
}

// keepsPages reports whether the store named name is configured and keeps pages.
func (s *stores) keepsPages(name string) bool {
	st, err := s.messageStore(name)
	if err != nil {
		return false
	}
	_, ok := st.(msgstore.PageStore)
	return ok
}

// readPages is the transfer.PageReader of this worker: it reads the history pages of a
// History answer from the worker's message stores (store "" is the default one),
// checked and with their stubs filled (transfer.ReadPages). A page missing or not
// matching its index is returned as ReadPages makes it (HistoryPageUnreadable, not
// retried); the store's errors as storeError makes them (StoreUnavailable retried; the
// rest, a store this worker lacks among them, not).
func (s *stores) readPages(ctx context.Context, chatID, store string, refs []wire.PageRef, from int64, pages int) ([]chat.Message, error) {
	if store == "" {
		store = s.defaultStore
	}
	msgs, err := transfer.ReadPages(ctx, s.byName, store, chatID, refs, from, pages)
	var app *temporal.ApplicationError
	if err != nil && !errors.As(err, &app) {
		return nil, storeError(err)
	}
	return msgs, err
}

// ReadTurn implements Activities.ReadTurn.
func (s *stores) ReadTurn(ctx context.Context, in wire.ReadTurnInput) (wire.ReadTurnResult, error) {
	if last := len(in.Pages) - 1; last < 0 || in.User < in.Pages[0].First || in.User >= in.Pages[last].First+in.Pages[last].Count {
		return wire.ReadTurnResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"read turn of chat %q: the pages given do not hold message %d", in.ChatID, in.User), wire.ErrTypeInvalidInput, nil)
	}
	msgs, err := s.readPages(ctx, in.ChatID, in.Store, in.Pages, in.User, readTurnPages)
	if err != nil {
		return wire.ReadTurnResult{}, err
	}
	res := wire.ReadTurnResult{User: msgs[0]}
	size := 0
	for _, m := range msgs[1:] {
		if m.Role == chat.RoleUser {
			res.Ended = true
			break
		}
		if size += wire.MessageBytes(m); size > wire.HistoryPageBytes && len(res.Replies) > 0 {
			m.Contents = nil
		}
		res.Replies = append(res.Replies, m)
	}
	return res, nil
}
