package chatstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"unicode"

	"github.com/agentchat/agentchat/chat"
)

// Decoder reads a chat-state document from an io.ReaderAt one history message at a
// time, so that a document of any length is read with a heap of one message, the
// document's other members, a 64 KiB window and the id sets Encoder keeps too: about
// 10 MB at its peak for 100,000 messages, where Decode of the file's bytes needs about
// 240 MB (BenchmarkDecoderHeap).
//
// Header reads the whole document once, checking it as Decode does, and returns every
// member but the history's messages; History then reads the messages again. A
// document not laid out exactly as Encode writes it (indented, members in another
// order, whitespace before it), of an older version, with a wrong digest, or one that
// Decode repairs, is read whole into memory and given to Decode: the Decoder then
// returns what Decode returns, with Decode's heap.
type Decoder struct {
	r    io.ReaderAt
	size int64

	head, tail []byte // the bytes before and after the history's messages
	digestAt   int    // where the digest member is in head
	histStart  int64  // where the first message starts
	histEnd    int64  // where the history's closing bracket is
	digest     string // the digest Header read and verified
	whole      []chat.Message
	streamed   bool // Header read the document without Decode (and refused it or not)
	read       bool
	err        error
	spill      SpillOpener
	each       func(i int, m chat.Message)
}

// NewDecoder returns a Decoder of the document held in bytes [0, size) of r (wrap r
// in io.NewSectionReader to read elsewhere). An *os.File and its size will do.
func NewDecoder(r io.ReaderAt, size int64) *Decoder { return &Decoder{r: r, size: size} }

// SpillIDs makes Header keep the hashes of the ids it checks past the first
// SpillAfter of a kind in the IDSpills that open opens (at most two, each closed before
// Header returns), so that its heap does not grow with the document's length; it
// returns d. An error of a spill fails Header with that error, wrapped. Call it before
// Header.
func (d *Decoder) SpillIDs(open SpillOpener) *Decoder {
	d.spill = open
	return d
}

// Each makes Header call f with each message of the history, in order, as it reads
// it (i from 0), so that a caller that needs the history once (the window at its end,
// say) has it from Header's reading rather than from a second one by History. When
// Header must start over (a document it reads whole: see Decoder), it calls f again
// from i = 0 with the messages Decode returns, so a caller keeps what the last run
// from 0 gave. When Header returns an error, what f was given is not a history. Call
// it before Header; it returns d.
func (d *Decoder) Each(f func(i int, m chat.Message)) *Decoder {
	d.each = f
	return d
}

// StartsEncoded reports whether the document in bytes [0, size) of r starts as Encode
// writes one ({"channels":), as a Decoder reads in place; an envelope (package
// envelope) starts {"envelope" and does not. Errors of r read as false.
func StartsEncoded(r io.ReaderAt, size int64) bool {
	const start = `{"channels":`
	b := make([]byte, min(size, int64(len(start))))
	n, _ := r.ReadAt(b, 0)
	return string(b[:n]) == start
}

// Header reads and checks the document as Decode does (see Decode: the version, the
// shape, the digest, the rules of chat-state-v1.md and the tool-call pairing rule) and
// returns it without its history (History nil), with Decode's report, or Decode's
// error (a *FieldError naming the field). Errors reading r are returned wrapped. Call
// it once, before History.
func (d *Decoder) Header() (Document, Report, error) {
	if d.read {
		return Document{}, Report{}, errors.New("chatstate: Decoder.Header called twice")
	}
	d.read = true
	doc, rep, err := d.header()
	d.err = err
	return doc, rep, err
}

func (d *Decoder) header() (Document, Report, error) {
	doc, ok, err := d.scan()
	d.streamed = ok
	if err != nil || ok {
		return doc, Report{}, err
	}
	b, err := io.ReadAll(io.NewSectionReader(d.r, 0, d.size))
	if err != nil {
		return Document{}, Report{}, fmt.Errorf("chatstate: reading the document: %w", err)
	}
	doc, rep, err := Decode(b)
	if err != nil {
		return Document{}, rep, err
	}
	if d.each != nil {
		for i, m := range doc.History {
			d.each(i, m)
		}
	}
	d.whole, doc.History = doc.History, nil
	return doc, rep, nil
}

// History returns the document's history as Decode returns it, one message at a time,
// after Header has returned no error. It reads the messages from r again and checks
// them against the digest Header verified: a document changed in between is refused
// at the end (a *FieldError naming digest), after the messages it yielded.
func (d *Decoder) History() History {
	return func(yield func(chat.Message) error) error {
		if !d.read || d.err != nil {
			return errors.New("chatstate: Decoder.History called without a Header that succeeded")
		}
		if !d.streamed {
			return SliceHistory(d.whole)(yield)
		}
		return d.reread(yield)
	}
}

// scan is Header's streaming path: ok is false when the document must be read by
// Decode instead; err is an error of r, or Decode's refusal of a document in canonical
// form.
func (d *Decoder) scan() (doc Document, ok bool, err error) {
	w := &window{r: d.r, size: d.size}
	ok, err = d.readHead(w)
	if !ok || err != nil {
		return Document{}, false, err
	}
	c := newDocumentCheck(d.spill)
	defer func() {
		if cerr := c.close(); cerr != nil && err == nil {
			doc, ok, err = Document{}, true, cerr
		}
	}()
	h := sha256.New()
	h.Write(d.head[:d.digestAt])
	h.Write(d.head[d.digestAt+digestMemberLen:])
	var e encoder
	ok, err = d.messages(w, h, func(i int, m chat.Message, raw []byte) bool {
		c.message(i, m)
		e.b = e.b[:0]
		if e.message("history", i, m) != nil || !bytes.Equal(e.b, raw) {
			return false
		}
		if d.each != nil {
			d.each(i, m)
		}
		return true
	})
	if !ok || err != nil {
		return Document{}, false, err
	}
	if d.tail, err = w.read(d.histEnd, d.size); err != nil {
		return Document{}, false, err
	}
	d.tail = bytes.Clone(bytes.TrimRightFunc(d.tail, unicode.IsSpace)) // as Decode trims it
	h.Write(d.tail)
	doc, ok = d.decodeMembers()
	var sum [sha256.Size]byte
	if !ok || doc.Digest != digestPrefix+hex.EncodeToString(h.Sum(sum[:0])) || doc.SchemaVersion != SchemaVersion {
		return Document{}, false, nil
	}
	d.digest = doc.Digest
	// The document is what Encode writes for doc and its history: Decode takes its fast
	// path, then validates and pairs.
	repairs, err := c.finish(doc)
	if err != nil {
		return Document{}, true, err
	}
	return doc, repairs == 0, nil
}

// readHead reads the members before the history: {"channels":[…],"chatId":…,
// "digest":…,"exportedAt":…,"history":[ and returns where the digest member is.
func (d *Decoder) readHead(w *window) (ok bool, err error) {
	p := int64(0)
	lit := func(s string) bool {
		b, err1 := w.read(p, min(p+int64(len(s)), d.size))
		if err1 != nil {
			err = err1
		}
		if string(b) != s {
			return false
		}
		p += int64(len(s))
		return true
	}
	value := func() bool {
		end, ok1, err1 := w.valueEnd(p)
		if err1 != nil {
			err = err1
		}
		p = end
		return ok1
	}
	if !lit(`{"channels":`) || !value() || !lit(`,"chatId":`) || !value() || !lit(",") {
		return false, err
	}
	d.digestAt = int(p)
	if !lit(`"digest":`) || !value() || !lit(`,"exportedAt":`) || !value() || !lit(`,"history":[`) {
		return false, err
	}
	d.histStart = p
	if d.head, err = w.read(0, p); err != nil {
		return false, err
	}
	d.head = bytes.Clone(d.head)
	return len(d.head) >= d.digestAt+digestMemberLen, nil
}

// messages reads the history's messages from d.histStart, hashing them with their
// commas into h, and gives each to f, which says whether it is laid out as Encode
// writes it. It sets d.histEnd.
func (d *Decoder) messages(w *window, h hash.Hash, f func(i int, m chat.Message, raw []byte) bool) (ok bool, err error) {
	p := d.histStart
	for i := 0; ; i++ {
		b, err := w.read(p, min(p+1, d.size))
		if err != nil || len(b) == 0 {
			return false, err
		}
		if b[0] == ']' {
			d.histEnd = p
			return true, nil
		}
		if i > 0 {
			if b[0] != ',' {
				return false, nil
			}
			h.Write(b)
			p++
		}
		end, ok, err := w.valueEnd(p)
		if !ok || err != nil {
			return false, err
		}
		raw, err := w.read(p, end)
		if err != nil {
			return false, err
		}
		m, err := readMessage(raw)
		if err != nil || !f(i, m, raw) {
			return false, nil
		}
		h.Write(raw)
		w.drop(end)
		p = end
	}
}

// decodeMembers reads the members other than the history's messages, and checks that
// Encode writes them as they are.
func (d *Decoder) decodeMembers() (Document, bool) {
	rest := append(bytes.Clone(d.head), d.tail...)
	var fast struct {
		Document
		PendingTurns canonicalMessages `json:"pendingTurns"`
	}
	if err := json.Unmarshal(rest, &fast); err != nil {
		return Document{}, false
	}
	doc := fast.Document
	doc.History, doc.PendingTurns = nil, fast.PendingTurns
	var e encoder
	digestAt := d.digestAt
	if e.head(doc) != nil || e.digestAt != digestAt ||
		!bytes.Equal(e.b[:digestAt], d.head[:digestAt]) || !bytes.Equal(e.b[digestAt+digestMemberLen:], d.head[digestAt+digestMemberLen:]) ||
		string(d.head[digestAt:digestAt+digestMemberLen]) != `"digest":"`+doc.Digest+`",` {
		return Document{}, false
	}
	e.b = e.b[:0]
	if e.tail(doc) != nil || !bytes.Equal(e.b, d.tail) {
		return Document{}, false
	}
	return doc, true
}

// reread is History's streaming path.
func (d *Decoder) reread(yield func(chat.Message) error) error {
	w := &window{r: d.r, size: d.size}
	h := sha256.New()
	h.Write(d.head[:d.digestAt])
	h.Write(d.head[d.digestAt+digestMemberLen:])
	var yerr error
	ok, err := d.messages(w, h, func(_ int, m chat.Message, _ []byte) bool {
		yerr = yield(m)
		return yerr == nil
	})
	switch {
	case yerr != nil:
		return yerr
	case err != nil:
		return err
	}
	h.Write(d.tail)
	var sum [sha256.Size]byte
	if computed := digestPrefix + hex.EncodeToString(h.Sum(sum[:0])); !ok || computed != d.digest {
		return fieldErr("digest", "the document changed while it was read: its history no longer hashes to "+d.digest)
	}
	return nil
}

// window holds bytes [off, off+len(buf)) of r.
type window struct {
	r    io.ReaderAt
	size int64
	off  int64
	buf  []byte
}

// windowRead is how many bytes the window reads at least.
const windowRead = 64 << 10

// read returns bytes [from, to) of r, to ≤ size; they are valid until the next call.
func (w *window) read(from, to int64) ([]byte, error) {
	if from < w.off || to > w.off+int64(len(w.buf)) {
		if err := w.fill(from, to); err != nil {
			return nil, err
		}
	}
	return w.buf[from-w.off : to-w.off], nil
}

// drop lets the window forget the bytes before p.
func (w *window) drop(p int64) {
	if k := p - w.off; k > int64(len(w.buf))/2 && k <= int64(len(w.buf)) {
		w.buf = w.buf[:copy(w.buf, w.buf[k:])]
		w.off = p
	}
}

// fill makes the window hold [from, to) and up to windowRead bytes after from.
func (w *window) fill(from, to int64) error {
	if from < w.off || from > w.off+int64(len(w.buf)) {
		w.off, w.buf = from, w.buf[:0]
	} else if from > w.off {
		w.buf = w.buf[:copy(w.buf, w.buf[from-w.off:])]
		w.off = from
	}
	end := min(max(to, w.off+int64(len(w.buf))+windowRead), w.size)
	have := w.off + int64(len(w.buf))
	if end <= have {
		return nil
	}
	n := int(end - have)
	w.buf = append(w.buf, make([]byte, n)...)
	k, err := w.r.ReadAt(w.buf[len(w.buf)-n:], have)
	if k < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("chatstate: reading the document at byte %d: %w", have+int64(k), err)
	}
	return nil
}

// valueEnd returns where the JSON value at p ends, matching brackets and skipping
// strings as fastread's skip does; ok is false when there is no such value.
func (w *window) valueEnd(p int64) (end int64, ok bool, err error) {
	depth, inString := 0, false
	for q := p; q < w.size; q++ {
		if q >= w.off+int64(len(w.buf)) {
			if err := w.fill(p, q+1); err != nil {
				return 0, false, err
			}
		}
		c := w.buf[q-w.off]
		switch {
		case inString:
			if c == '\\' {
				q++
			} else if c == '"' {
				inString = false
				if depth == 0 {
					return q + 1, true, nil
				}
			} else if c < 0x20 {
				return 0, false, nil
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			if depth--; depth <= 0 {
				return q + 1, depth == 0, nil
			}
		case depth == 0:
			return 0, false, nil // not a string, an array or an object
		}
	}
	return 0, false, nil
}
