package chatstate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/agentchat/agentchat/chat"
)

// History yields the messages of a document's history, oldest first. It calls yield
// once per message and stops at the first error yield returns, which it returns (or an
// error of its own, such as a page it cannot read). It must not call yield after it has
// returned, nor from two goroutines.
type History func(yield func(chat.Message) error) error

// SliceHistory returns the History of the messages ms.
func SliceHistory(ms []chat.Message) History {
	return func(yield func(chat.Message) error) error {
		for _, m := range ms {
			if err := yield(m); err != nil {
				return err
			}
		}
		return nil
	}
}

// streamFlushSize is how many bytes the Encoder gathers before it writes them.
const streamFlushSize = 64 << 10

// Encoder writes chat-state documents whose history is read one message at a time, so
// that a document of any length is written with a heap of one message, the document's
// other members, a 64 KiB buffer and the sets of 128-bit hashes of its message and call
// ids that check they are unique: about 50 bytes an id, up to SpillAfter ids of each
// kind, and no more with SpillIDs (the others go to the spill); without it, about 100
// bytes a message at the peak (10 MB for 100,000 messages, where Encode with its
// history in memory needs about 110 MB; BenchmarkEncoderHeap).
type Encoder struct {
	w     io.WriterAt
	spill SpillOpener
}

// NewEncoder returns an Encoder that writes each document at offsets [0, n) of w
// (wrap w in io.NewOffsetWriter to write elsewhere). w is an io.WriterAt because the
// digest member comes before the history in RFC 8785's member order: the Encoder
// writes the document in one pass, leaving the digest member's room
// (`"digest":"sha256:<64 hex>",`, 83 bytes) blank, and fills it in with one WriteAt at
// the end. An *os.File not opened with O_APPEND will do.
func NewEncoder(w io.WriterAt) *Encoder { return &Encoder{w: w} }

// SpillIDs makes Encode keep the hashes of the ids it checks past the first SpillAfter
// of a kind in the IDSpills that open opens (at most two a document, each closed
// before Encode returns), so that its heap does not grow with the history's length;
// it returns enc. An error of a spill fails Encode with that error, wrapped.
func (enc *Encoder) SpillIDs(open SpillOpener) *Encoder {
	enc.spill = open
	return enc
}

// Encode writes d, with the messages of history as its history, exactly as Encode
// writes the document holding them (chat-state-v1.md: canonical JSON and the digest),
// and returns the number of bytes written and the digest. d.History must be empty;
// d.Digest is ignored.
//
// It refuses what Encode refuses, with the same *FieldError: on refusal or any other
// error the bytes written are not a document. A message that breaks a rule of
// Validate stops history at once (through yield's error); other refusals (the
// tool-call pairing rule, a state RFC 8785 cannot keep) depend on what comes later, so
// the Encoder reads the history to its end first, writing nothing more. Errors of w and
// of history are returned wrapped, not as a *FieldError.
func (enc *Encoder) Encode(d Document, history History) (n int64, digest string, err error) {
	if len(d.History) > 0 {
		return 0, "", errors.New("chatstate: Encoder.Encode: the history is given by history; d.History must be empty")
	}
	if err := d.validateHead(); err != nil {
		return 0, "", err
	}
	s := &streamEncoder{w: enc.w, h: sha256.New(), check: newDocumentCheck(enc.spill)}
	defer func() {
		if cerr := s.check.close(); cerr != nil && err == nil {
			digest, err = "", cerr
		}
	}()
	s.e.b = make([]byte, 0, 2*streamFlushSize)
	s.start(d)
	herr := history(s.message)
	if s.err != nil {
		return s.off, "", s.err
	}
	if herr != nil {
		return s.off, "", fmt.Errorf("chatstate: reading the history: %w", herr)
	}
	if err := s.finish(d); err != nil {
		return s.off, "", err
	}
	return s.off, s.digest, nil
}

// streamEncoder is one run of Encoder.Encode. Encode's refusals come in an order
// (Validate's, then the pairing rule's, then the repaired document's Validate, then
// the encoder's, each in document order); s keeps the first of each kind it meets.
type streamEncoder struct {
	w   io.WriterAt
	h   hash.Hash
	e   encoder
	off int64 // bytes written to w
	// digestOff is where the digest member's room is in w.
	digestOff int64
	digest    string

	i      int // messages read
	check  *documentCheck
	err    error // a Validate refusal, or an error of w: final
	encErr error // the first refusal of the encoder; nothing is written after it
}

// start writes the members before the history.
func (s *streamEncoder) start(d Document) {
	if err := s.e.head(d); err != nil {
		s.encErr = err
		return
	}
	s.h.Write(s.e.b[:s.e.digestAt])
	s.h.Write(s.e.b[s.e.digestAt+digestMemberLen:])
	s.digestOff = int64(s.e.digestAt)
	s.write()
}

// message is history's yield: it checks m and writes it.
func (s *streamEncoder) message(m chat.Message) error {
	if s.err != nil {
		return s.err
	}
	i := s.i
	s.i++
	if err := s.check.message(i, m); err != nil {
		s.err = err
		return err
	}
	if s.encErr != nil {
		return nil
	}
	if i > 0 {
		s.e.b = append(s.e.b, ',')
	}
	if err := s.e.message("history", i, m); err != nil {
		s.encErr = err
		return nil
	}
	if len(s.e.b) >= streamFlushSize {
		s.h.Write(s.e.b)
		s.write()
	}
	return s.err
}

// finish checks the members after the history, writes them and fills in the digest.
func (s *streamEncoder) finish(d Document) error {
	if _, err := s.check.finish(d); err != nil {
		return err
	}
	if s.encErr != nil {
		return s.encErr
	}
	if err := s.e.tail(d); err != nil {
		return err
	}
	s.h.Write(s.e.b)
	if s.write(); s.err != nil {
		return s.err
	}
	var sum [sha256.Size]byte
	s.digest = digestPrefix + hex.EncodeToString(s.h.Sum(sum[:0]))
	if _, err := s.w.WriteAt([]byte(`"digest":"`+s.digest+`",`), s.digestOff); err != nil {
		return fmt.Errorf("chatstate: writing the document's digest: %w", err)
	}
	return nil
}

// write writes the gathered bytes, already hashed.
func (s *streamEncoder) write() {
	k, err := s.w.WriteAt(s.e.b, s.off)
	s.off += int64(k)
	s.e.b = s.e.b[:0]
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("chatstate: writing the document: %w", err)
	}
}
