package transfer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// PageReader reads the messages of the pages a History answer gives (HistoryResult.Pages,
// in the message store HistoryResult.Store names), from message from on, out of at
// most pages level-0 pages (0: all), checked and with their stubs filled, as ReadPages
// does. The History readers of this package call it when an answer has Pages;
// PagesFrom makes one over a reader's stores.
type PageReader func(ctx context.Context, chatID, store string, refs []wire.PageRef, from int64, pages int) ([]chat.Message, error)

// PagesFrom returns the PageReader of ReadPages over stores (by name, as
// HistoryResult.Store names them; nil: the reader has none).
func PagesFrom(stores map[string]msgstore.Store) PageReader {
	return func(ctx context.Context, chatID, store string, refs []wire.PageRef, from int64, pages int) ([]chat.Message, error) {
		return ReadPages(ctx, stores, store, chatID, refs, from, pages)
	}
}

// ReadPages returns the messages of chat chatID from index from on, out of at most
// pages level-0 history pages (0: all of them), read from stores[store], one row at a
// time. refs are as a History answer gives them: consecutive, each with its Lineage,
// the first holding message from. An index page (level n ≥ 1) is read and checked as a
// page is, and its references (level n-1 pages of the same lineage) are followed in
// its place, only as far as from and pages reach: a reader never reads more than the
// path down to the pages it returns. Each page is checked against its reference, and
// none is ever skipped:
//
//   - the row exists (else msgstore.ErrPageMissing);
//   - its msgstore.PageDigest, of the row as stored (sealed or not), equals ref.Digest;
//   - its body decodes (msgstore.DecodePageBody, msgstore.DecodeIndexBody), and its chat
//     id, lineage, level, seq, first index and number of messages covered equal the
//     chat's and the ref's (else, as for the digest or a sealed row that does not open,
//     msgstore.ErrPageMismatch).
//
// A page that fails a check is a non-retryable *temporal.ApplicationError of type
// wire.ErrTypeHistoryPageUnreadable wrapping that error, whose message names the chat,
// the page and its lineage, and for a digest both digests:
//
//	chat "support-42": history page 17 (messages 4352 to 4607, lineage 9c1e…) does not
//	match its index: stored sha256:ab12…, indexed sha256:77f0…
//
// Then the stubs of bodies over wire.PageBodyBytes are filled from the same store
// (FillStubs: one Get). A store the reader lacks, or one that keeps no pages, is
// ErrStoredMessages naming the first page; the store's other errors
// (msgstore.ErrUnavailable, msgstore.ErrEncrypted without the key ring, keyring errors)
// are returned wrapped, naming the page. No refs give no messages; refs that are not
// consecutive, or do not hold from, are an error.
func ReadPages(ctx context.Context, stores map[string]msgstore.Store, store, chatID string, refs []wire.PageRef, from int64, pages int) ([]chat.Message, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	st, err := pageStore(stores, store, chatID, refs[0])
	if err != nil {
		return nil, err
	}
	for i, ref := range refs {
		if i > 0 && ref.First != refs[i-1].First+refs[i-1].Count {
			return nil, fmt.Errorf("chat %q: %s does not follow %s: the pages of a History answer are consecutive", chatID, ref, refs[i-1])
		}
	}
	if last := refs[len(refs)-1]; from < refs[0].First || from >= last.First+last.Count {
		return nil, fmt.Errorf("chat %q: message %d is not in the pages given (messages %d to %d)", chatID, from, refs[0].First, last.First+last.Count-1)
	}
	leaves, err := leafPages(ctx, st, store, chatID, refs, from, pages)
	if err != nil {
		return nil, err
	}
	var msgs []chat.Message
	for _, ref := range leaves {
		page, err := readPage(ctx, st, store, chatID, ref)
		if err != nil {
			return nil, err
		}
		if len(msgs) == 0 {
			page = page[from-ref.First:]
			msgs = make([]chat.Message, 0, int(leaves[len(leaves)-1].First+leaves[len(leaves)-1].Count-from))
		}
		msgs = append(msgs, page...)
	}
	filled, err := FillStubs(ctx, st, chatID, msgs)
	if err != nil {
		return nil, fmt.Errorf("chat %q: the bodies of %s to %s from message store %q: %w", chatID, pageName(leaves[0]), pageName(leaves[len(leaves)-1]), store, err)
	}
	return filled, nil
}

// leafPages returns the level-0 references under refs (consecutive, each with its
// lineage) from the one holding message from on, at most pages of them (0: all),
// reading the index pages on the way, each checked (see ReadPages).
func leafPages(ctx context.Context, st msgstore.PageStore, store, chatID string, refs []wire.PageRef, from int64, pages int) ([]wire.PageRef, error) {
	var out []wire.PageRef
	var walk func(refs []wire.PageRef) error
	walk = func(refs []wire.PageRef) error {
		for _, ref := range refs {
			if pages > 0 && len(out) == pages {
				return nil
			}
			if ref.First+ref.Count <= from {
				continue
			}
			if ref.Level == 0 {
				out = append(out, ref)
				continue
			}
			children, err := readIndexPage(ctx, st, store, chatID, ref)
			if err != nil {
				return err
			}
			if err := walk(children); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(refs); err != nil {
		return nil, err
	}
	return out, nil
}

// readIndexPage reads and checks the index page ref names, and returns the references
// it lists, with its lineage.
func readIndexPage(ctx context.Context, st msgstore.PageStore, store, chatID string, ref wire.PageRef) ([]wire.PageRef, error) {
	body, err := readRow(ctx, st, store, chatID, ref)
	if err != nil {
		return nil, err
	}
	b, err := msgstore.DecodeIndexBody(body)
	if err != nil {
		detail := strings.TrimPrefix(strings.TrimPrefix(err.Error(), msgstore.ErrPageMismatch.Error()), ": ")
		return nil, mismatch(chatID, ref, "%s", detail)
	}
	if b.ChatID != chatID || b.Lineage != ref.Lineage || b.Level != ref.Level || b.Seq != ref.Seq ||
		b.First != ref.First || b.Count() != ref.Count {
		return nil, mismatch(chatID, ref, "its body is chat %q, lineage %s, level %d, seq %d, %d messages from %d",
			b.ChatID, b.Lineage, b.Level, b.Seq, b.Count(), b.First)
	}
	out := make([]wire.PageRef, len(b.Refs))
	for i, r := range b.Refs {
		out[i] = wire.PageRef{Level: r.Level, Seq: r.Seq, First: r.First, Count: r.Count, Bytes: r.Bytes, Digest: r.Digest, Lineage: ref.Lineage}
	}
	return out, nil
}

// pageStore returns stores[store] as a PageStore, or ErrStoredMessages naming first.
func pageStore(stores map[string]msgstore.Store, store, chatID string, first wire.PageRef) (msgstore.PageStore, error) {
	st, ok := stores[store]
	if !ok || st == nil {
		return nil, fmt.Errorf("chat %q: %s is in message store %q, which this reader does not have: %w; give the reader the store the worker writes to (the worker's --message-store URL): starter --message-store URL (its default is the SQLite file in $AGENTCHAT_DATA_DIR, when that holds the worker's), ClientOptions.MessageStores in Go; an export reads through the worker without it",
			chatID, pageName(first), store, ErrStoredMessages)
	}
	ps, ok := st.(msgstore.PageStore)
	if !ok {
		return nil, fmt.Errorf("chat %q: %s is in message store %q, which keeps no history pages here: %w", chatID, pageName(first), store, ErrStoredMessages)
	}
	return ps, nil
}

// readPage reads and checks the level-0 page ref names; see ReadPages.
func readPage(ctx context.Context, st msgstore.PageStore, store, chatID string, ref wire.PageRef) ([]chat.Message, error) {
	raw, err := readRow(ctx, st, store, chatID, ref)
	if err != nil {
		return nil, err
	}
	body, err := msgstore.DecodePageBody(raw)
	if err != nil {
		detail := strings.TrimPrefix(strings.TrimPrefix(err.Error(), msgstore.ErrPageMismatch.Error()), ": ")
		return nil, mismatch(chatID, ref, "%s", detail)
	}
	if body.ChatID != chatID || body.Lineage != ref.Lineage || body.Level != ref.Level || body.Seq != ref.Seq ||
		body.First != ref.First || int64(len(body.Messages)) != ref.Count {
		return nil, mismatch(chatID, ref, "its body is chat %q, lineage %s, level %d, seq %d, %d messages from %d",
			body.ChatID, body.Lineage, body.Level, body.Seq, len(body.Messages), body.First)
	}
	return body.Messages, nil
}

// readRow reads the row of the page ref names, checks its digest, and returns its
// plaintext body; see ReadPages.
func readRow(ctx context.Context, st msgstore.PageStore, store, chatID string, ref wire.PageRef) ([]byte, error) {
	row, err := st.GetPageRow(ctx, chatID, msgstore.PageKey{Lineage: ref.Lineage, Level: ref.Level, Seq: ref.Seq})
	if errors.Is(err, msgstore.ErrPageMissing) {
		msg := fmt.Sprintf("chat %q: %s is missing from message store %q", chatID, pageName(ref), store)
		return nil, temporal.NewNonRetryableApplicationError(msg, wire.ErrTypeHistoryPageUnreadable, msgstore.ErrPageMissing)
	}
	// A row that was read is checked against its digest first, even when it does not open.
	if row.Stored != nil {
		if got := msgstore.PageDigest(row.Stored); got != ref.Digest {
			return nil, mismatch(chatID, ref, "stored %s, indexed %s", got, ref.Digest)
		}
	}
	switch {
	case errors.Is(err, keyring.ErrNotAuthentic):
		return nil, mismatch(chatID, ref, "the sealed row does not open (moved from another page): %v", err)
	case err != nil:
		return nil, fmt.Errorf("chat %q: read %s from message store %q: %w", chatID, pageName(ref), store, err)
	}
	return row.Body, nil
}

// mismatch is ReadPages' HistoryPageUnreadable error for a page ref names that does
// not match its index, the rest of the message (what differs) formatted from format
// and args; it wraps msgstore.ErrPageMismatch.
func mismatch(chatID string, ref wire.PageRef, format string, args ...any) error {
	msg := fmt.Sprintf("chat %q: %s does not match its index: ", chatID, pageName(ref)) + fmt.Sprintf(format, args...)
	return temporal.NewNonRetryableApplicationError(msg, wire.ErrTypeHistoryPageUnreadable, msgstore.ErrPageMismatch)
}

// pageName is ref.String with the lineage: history page 7 (messages 1792 to 2047,
// lineage L).
func pageName(ref wire.PageRef) string {
	return strings.TrimSuffix(ref.String(), ")") + ", lineage " + ref.Lineage + ")"
}

// FollowPages returns the History answer h with the messages of its Pages in Messages
// and Pages cleared: those from h.Offset on, out of at most wire.HistoryAnswerPages
// level-0 pages, at most limit of them when limit > 0, read by read (nil: a reader
// without stores, so ErrStoredMessages naming the first page). An answer without Pages
// is returned as it is. The next query asks from h.Offset + len(Messages). Pages that
// do not cover h.Offset are an error; read's errors are returned as they are.
func FollowPages(ctx context.Context, read PageReader, chatID string, h wire.HistoryResult, limit int) (wire.HistoryResult, error) {
	if len(h.Pages) == 0 {
		return h, nil
	}
	if read == nil {
		read = PagesFrom(nil)
	}
	first, last := h.Pages[0], h.Pages[len(h.Pages)-1]
	if int64(h.Offset) < first.First || int64(h.Offset) >= last.First+last.Count {
		return wire.HistoryResult{}, fmt.Errorf("chat %q: the History answer from message %d gives pages of messages %d to %d",
			chatID, h.Offset, first.First, last.First+last.Count-1)
	}
	msgs, err := read(ctx, chatID, h.Store, h.Pages, int64(h.Offset), wire.HistoryAnswerPages)
	if err != nil {
		return wire.HistoryResult{}, err
	}
	if len(msgs) == 0 || int64(h.Offset+len(msgs)) > last.First+last.Count {
		return wire.HistoryResult{}, fmt.Errorf("chat %q: %d messages read from message %d out of pages of messages %d to %d",
			chatID, len(msgs), h.Offset, first.First, last.First+last.Count-1)
	}
	if limit > 0 && len(msgs) > limit {
		msgs = msgs[:limit]
	}
	h.Messages, h.Pages = msgs, nil
	return h, nil
}
