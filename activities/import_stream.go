package activities

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/idspill"
	"github.com/agentchat/agentchat/wire"
)

// streamDocumentBytes is wire.StreamDocumentBytes, lowered by tests.
var streamDocumentBytes int64 = wire.StreamDocumentBytes

// importStreamed is ImportChat for a document the worker's store can open in place
// (DocumentOpener) and that is not an envelope: it reads the document with a
// chatstate.Decoder, so that it holds the window (the messages from wire.ImportBoundary
// on) and one batch of older messages at a time, never the whole history. The first
// call reads the document twice: Header checks it whole and keeps the window as it
// reads (Decoder.Each; the first call's checks run on the window), a second pass
// writes the older messages as pages. Later calls answer from streamedDocs, or read it
// once again. ok is false when the document must be read whole (ImportChat's other
// path): the store cannot open it, it is an envelope, or signatures are required.
func (tr *transfers) importStreamed(ctx context.Context, in wire.ImportPageInput) (page wire.ImportPage, ok bool, err error) {
	opener, can := tr.store.(DocumentOpener)
	if !can || tr.docs.RequireSignature {
		return wire.ImportPage{}, false, nil
	}
	r, size, err := opener.Open(ctx, in.Source.URI)
	if err != nil {
		return wire.ImportPage{}, true, err
	}
	defer r.Close()
	if size <= streamDocumentBytes || !chatstate.StartsEncoded(r, size) {
		return wire.ImportPage{}, false, nil
	}
	window := 0
	if in.Paging != nil {
		window, _ = in.Paging.Window.Effective()
	}
	key := streamKey{uri: in.Source.URI, size: size, window: window}
	if st, can := r.(interface{ Stat() (os.FileInfo, error) }); can {
		if info, err := st.Stat(); err == nil {
			key.modTime, key.cached = info.ModTime(), true
		}
	}
	doc, dec, err := streamedDocs.get(key, r)
	if err != nil {
		return wire.ImportPage{}, true, err
	}
	if in.Offset > 0 && in.Offset < doc.base {
		return wire.ImportPage{}, false, nil // not a call the importing workflow makes: read it whole
	}
	page = wire.ImportPage{Total: doc.total}
	if in.Offset == 0 {
		activity.GetLogger(ctx).Info("import: reading the document in place", "uri", in.Source.URI, "bytes", size,
			"messages", doc.total, "paged", doc.base)
		if err := tr.firstPage(ctx, in, &page, doc.header, doc.report, doc.recent); err != nil {
			return wire.ImportPage{}, true, err
		}
		if doc.base > 0 {
			if dec == nil { // cached: read it again to write its pages
				if dec, err = reopen(r, size); err != nil {
					return wire.ImportPage{}, true, err
				}
			}
			if err := tr.importPagesStreamed(ctx, in, dec.History(), doc.base, &page); err != nil {
				return wire.ImportPage{}, true, tr.dropImportPages(ctx, in, err)
			}
			in.Offset = doc.base
		}
	}
	if err := tr.importMessages(ctx, in, &page, doc.recent, doc.base, doc.total, int(size)); err != nil {
		if page.Base > 0 { // this call wrote the document's older messages as pages
			err = tr.dropImportPages(ctx, in, err)
		}
		return wire.ImportPage{}, true, err
	}
	if in.Offset+len(page.Messages) >= doc.total {
		streamedDocs.forget(key)
	}
	return page, true, nil
}

// reopen returns a Decoder of r whose Header succeeded.
func reopen(r io.ReaderAt, size int64) (*chatstate.Decoder, error) {
	dec := chatstate.NewDecoder(r, size).SpillIDs(idspill.Opener(""))
	if _, _, err := dec.Header(); err != nil {
		return nil, documentError(err)
	}
	return dec, nil
}

// streamedDoc is what ImportChat keeps of a document it read in place: its header
// (history nil), Decode's report, its length, the import boundary for the window it
// was read with (0 without paging), and the messages from there on.
type streamedDoc struct {
	header chatstate.Document
	report chatstate.Report
	total  int
	base   int
	recent []chat.Message
}

// streamKey names a document read in place: its URI, size and modification time (when
// the reader tells it: otherwise it is not cached), and the window it was read for.
type streamKey struct {
	uri     string
	size    int64
	modTime time.Time
	cached  bool
	window  int
}

// streamedDocs keeps the documents ImportChat read in place lately, so that the later
// calls of one import answer from the window it kept rather than read the document
// twice again.
var streamedDocs = &streamCache{max: 4}

// streamCache maps a streamKey to its streamedDoc, for at most max documents (the
// oldest goes first).
type streamCache struct {
	mu      sync.Mutex
	max     int
	keys    []streamKey
	entries []*streamedDoc
}

// get returns the document r holds, from the cache or read from r (then with the
// Decoder that read it, its Header done). Errors: InvalidDocument for a document
// Decode refuses; r's errors as they are (retried).
func (c *streamCache) get(key streamKey, r io.ReaderAt) (*streamedDoc, *chatstate.Decoder, error) {
	if key.cached {
		c.mu.Lock()
		i := slices.Index(c.keys, key)
		var doc *streamedDoc
		if i >= 0 {
			doc = c.entries[i]
		}
		c.mu.Unlock()
		if doc != nil {
			return doc, nil, nil
		}
	}
	tail := wire.NewImportTail(key.window)
	dec := chatstate.NewDecoder(r, key.size).SpillIDs(idspill.Opener("")).Each(func(i int, m chat.Message) {
		if i == 0 { // Header started over
			tail = wire.NewImportTail(key.window)
		}
		tail.Add(m)
	})
	header, report, err := dec.Header() // one reading: the window comes from it
	if err != nil {
		return nil, nil, documentError(err)
	}
	doc := &streamedDoc{header: header, report: report}
	doc.total, doc.base, doc.recent = tail.Len(), tail.Base(), tail.Messages()
	if key.cached {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.keys) >= c.max {
			k := len(c.keys) - c.max + 1
			c.keys, c.entries = slices.Delete(c.keys, 0, k), slices.Delete(c.entries, 0, k)
		}
		c.keys, c.entries = append(c.keys, key), append(c.entries, doc)
	}
	return doc, dec, nil
}

// forget drops the document of key.
func (c *streamCache) forget(key streamKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := slices.Index(c.keys, key); i >= 0 {
		c.keys, c.entries = slices.Delete(c.keys, i, i+1), slices.Delete(c.entries, i, i+1)
	}
}

// documentError is InvalidDocument for what the Decoder refuses (a *FieldError), and
// the reader's error as it is.
func documentError(err error) error {
	var fe *chatstate.FieldError
	if errors.As(err, &fe) {
		return InvalidDocument(err)
	}
	return err
}

// importPagesStreamed writes the messages of history before base as pages of the
// importing chat's store, and records them in page as importPages does: pages of
// perPage messages (the last one shorter), given to WritePages about pageBatchBytes of
// messages at a time, so that the heap holds one batch and the store commits (an
// fsync each) once a batch rather than once a page. It reads history to its end, so
// that the Decoder checks the digest.
func (tr *transfers) importPagesStreamed(ctx context.Context, in wire.ImportPageInput, history chatstate.History, base int, page *wire.ImportPage) error {
	_, perPage := in.Paging.Window.Effective()
	fanout := in.Paging.Window.Fanout()
	chatID := activity.GetInfo(ctx).WorkflowExecution.ID
	var (
		rec    pagedRecord
		batch  []chat.Message
		cuts   []int
		size   int // the batch's messages, in chat.Message.Size bytes
		onPage int // messages of the batch's last page so far
		i      int
		seq    int64
	)
	flush := func() error {
		if onPage > 0 {
			cuts, onPage = append(cuts, onPage), 0
		}
		res, err := tr.stores.WritePages(ctx, wire.WritePagesInput{ChatID: chatID, Store: in.Store, Lineage: in.Paging.Lineage,
			Seq: seq, First: int64(i - len(batch)), Cuts: cuts, Messages: batch, Index: page.Pages, Fanout: fanout})
		if err != nil {
			return err
		}
		seq += int64(len(cuts))
		page.Pages, page.Store = res.Index, res.Store
		clear(batch)
		batch, cuts, size = batch[:0], cuts[:0], 0
		return nil
	}
	err := history(func(m chat.Message) error {
		if i >= base {
			return nil
		}
		rec.add(m)
		batch = append(batch, m)
		size += m.Size()
		i++
		if onPage++; onPage == perPage {
			cuts, onPage = append(cuts, perPage), 0
		}
		if i == base || (onPage == 0 && size >= pageBatchBytes) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return documentError(err)
	}
	page.Base = base
	rec.finish(page)
	return nil
}
