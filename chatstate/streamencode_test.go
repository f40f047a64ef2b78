package chatstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/chat"
)

// memFile is an io.WriterAt in memory.
type memFile struct{ b []byte }

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if end := int(off) + len(p); end > len(f.b) {
		f.b = append(f.b, make([]byte, end-len(f.b))...)
	}
	return copy(f.b[off:], p), nil
}

// streamEncode writes d with Encoder, its history given one message at a time.
func streamEncode(d Document) ([]byte, string, error) { return streamEncodeSpilled(d, nil) }

// streamEncodeSpilled is streamEncode with the Encoder's ids spilled by open.
func streamEncodeSpilled(d Document, open SpillOpener) ([]byte, string, error) {
	var f memFile
	history := d.History
	d.History = nil
	n, digest, err := NewEncoder(&f).SpillIDs(open).Encode(d, SliceHistory(history))
	if err == nil && n != int64(len(f.b)) {
		return nil, "", fmt.Errorf("Encode says it wrote %d bytes, the file has %d", n, len(f.b))
	}
	return f.b, digest, err
}

// sameAsEncode checks that Encoder writes d as Encode does, or refuses it with the same
// error.
func sameAsEncode(t *testing.T, name string, d Document) {
	t.Helper()
	sameAsEncodeSpilled(t, name, d, nil)
}

// sameAsEncodeSpilled is sameAsEncode with the Encoder's ids spilled by open.
func sameAsEncodeSpilled(t *testing.T, name string, d Document, open SpillOpener) {
	t.Helper()
	want, wantDigest, wantErr := Encode(d)
	got, digest, err := streamEncodeSpilled(d, open)
	if wantErr != nil || err != nil {
		var fe *FieldError
		if wantErr == nil || err == nil || err.Error() != wantErr.Error() || !errors.As(err, &fe) {
			t.Fatalf("%s: Encoder error %v, Encode error %v", name, err, wantErr)
		}
		return
	}
	if !bytes.Equal(got, want) || digest != wantDigest {
		t.Fatalf("%s: Encoder wrote %d bytes with digest %s, Encode %d with %s; first difference at %d",
			name, len(got), digest, len(want), wantDigest, firstDifference(got, want))
	}
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestEncoderWritesTheGoldenFiles(t *testing.T) {
	names, files := goldenFiles(t)
	files[filepath.Base(largeGolden)] = readLargeGolden(t)
	names = append(names, filepath.Base(largeGolden))
	for _, name := range names {
		doc, _, err := Decode(files[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, digest, err := streamEncode(doc)
		if err != nil {
			t.Fatalf("%s: Encoder: %v", name, err)
		}
		if !bytes.Equal(got, files[name]) || digest != doc.Digest {
			t.Errorf("%s: Encoder wrote %d bytes (digest %s), the file is %d (digest %s); first difference at %d",
				name, len(got), digest, len(files[name]), doc.Digest, firstDifference(got, files[name]))
		}
	}
}

// TestEncoderMatchesEncode compares Encoder with Encode on generated documents, valid
// and broken in every way Encode refuses (and some it repairs on reading), the errors
// included.
func TestEncoderMatchesEncode(t *testing.T) {
	for seed := range uint64(300) {
		d, _ := seededDocument(seed, 7)
		sameAsEncode(t, "seed "+strconv.FormatUint(seed, 10), d)
	}
}

// breakDocument changes d in one random way, most of which Encode refuses.
// seededDocument is the seed-th generated document of a test whose random numbers
// come from stream: valid when seed is a multiple of 3, else broken one to three ways
// (breakDocument); it returns the document and the rand.Rand, for the test's own draws.
func seededDocument(seed, stream uint64) (Document, *rand.Rand) {
	r := rand.New(rand.NewPCG(seed, stream))
	d := genDocument(seed, 1+r.IntN(120))
	if seed%3 != 0 {
		for k := 1 + r.IntN(3); k > 0; k-- {
			breakDocument(r, &d)
		}
	}
	return d, r
}

func breakDocument(r *rand.Rand, d *Document) {
	h := append([]chat.Message(nil), d.History...)
	d.History = h
	pick := func() int { return r.IntN(len(h)) }
	big := json.RawMessage(`{"n":12345678901234567890}`)
	// unanswer drops the result of a call and returns the id of the repair Decode
	// would insert for it.
	unanswer := func() (string, bool) {
		for k := 0; k < 20; k++ {
			i := pick()
			calls := h[i].FunctionCalls()
			if len(calls) == 0 {
				continue
			}
			for t := i + 1; t < len(h) && h[t].Role == chat.RoleTool; t++ {
				if h[t].Contents[0].CallID == calls[0].CallID {
					h = append(h[:t:t], h[t+1:]...)
					d.History = h
					return RepairMessageID(h[i].MessageID, calls[0].CallID), true
				}
			}
		}
		return "", false
	}
	dropTool := func() {
		for k := 0; k < 20; k++ {
			if i := pick(); h[i].Role == chat.RoleTool {
				d.History = append(h[:i:i], h[i+1:]...)
				return
			}
		}
	}
	switch r.IntN(16) {
	case 0: // a call without its result: Encode writes it, Decode repairs it
		dropTool()
	case 1: // a result without its call
		for k := 0; k < 20; k++ {
			if i := pick(); len(h[i].FunctionCalls()) > 0 {
				d.History = append(h[:i:i], h[i+1:]...)
				return
			}
		}
	case 2: // a message id taken twice
		h[pick()].MessageID = h[pick()].MessageID
	case 3: // a blank text
		i := pick()
		h[i].Contents = append([]chat.Content{chat.Text(" ")}, h[i].Contents...)
	case 4: // a number RFC 8785 cannot keep, in a message
		i := pick()
		h[i].Contents = append([]chat.Content{unknown(`{"type":"audio","n":12345678901234567890}`)}, h[i].Contents...)
	case 5:
		d.Channels = append([]Channel(nil), d.Channels...)
		d.Channels[r.IntN(len(d.Channels))].ChannelState = big
	case 6:
		d.Strategies.Termination.State = big
	case 7:
		d.ExportedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	case 8: // a callId used twice
		var ids []string
		for i := range h {
			for j, c := range h[i].Contents {
				if c.Type == chat.ContentFunctionCall {
					if len(ids) > 0 && r.IntN(2) == 0 {
						h[i].Contents = append([]chat.Content(nil), h[i].Contents...)
						h[i].Contents[j].CallID = ids[r.IntN(len(ids))]
						return
					}
					ids = append(ids, c.CallID)
				}
			}
		}
	case 9:
		d.Participants = append([]Participant{{Name: "no id", Type: "x"}}, d.Participants...)
	case 10:
		d.PendingTurns = append([]chat.Message(nil), d.PendingTurns...)
		d.PendingTurns[r.IntN(len(d.PendingTurns))].Role = chat.RoleAssistant
	case 11, 12: // a message, earlier or later, takes the id of a repair
		if id, ok := unanswer(); ok {
			h[pick()].MessageID = id
		}
	case 13: // a pending turn takes the id of a repair
		if id, ok := unanswer(); ok {
			d.PendingTurns = append([]chat.Message(nil), d.PendingTurns...)
			d.PendingTurns[r.IntN(len(d.PendingTurns))].MessageID = id
		}
	case 14: // a pending turn takes a history message's id
		d.PendingTurns = append([]chat.Message(nil), d.PendingTurns...)
		d.PendingTurns[0].MessageID = h[pick()].MessageID
	case 15:
		d.SchemaVersion = 2
	}
}

// TestEncoderMatchesEncodeOnFuzzCorpus reads each input of FuzzDecode's seed corpus
// with encoding/json alone, as FuzzDecode does, and compares Encoder with Encode on it.
func TestEncoderMatchesEncodeOnFuzzCorpus(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzDecode", "*"))
	if len(paths) == 0 {
		t.Fatal("no fuzz corpus")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, quoted, _ := strings.Cut(strings.TrimSpace(string(b)), "[]byte(")
		in, err := strconv.Unquote(strings.TrimSuffix(quoted, ")"))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var loose Document
		if json.Unmarshal([]byte(in), &loose) == nil {
			sameAsEncode(t, filepath.Base(p), loose)
		}
	}
}

// FuzzEncoder: whatever encoding/json reads as a Document, Encoder writes as Encode
// does or refuses as Encode does.
func FuzzEncoder(f *testing.F) {
	_, files := goldenFiles(f)
	for _, b := range files {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var loose Document
		if json.Unmarshal(b, &loose) == nil {
			sameAsEncode(t, "input", loose)
		}
	})
}

// failingFile fails every write from byte failAt on.
type failingFile struct {
	memFile
	failAt int64
}

var errDiskFull = errors.New("disk full")

func (f *failingFile) WriteAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.failAt {
		return 0, errDiskFull
	}
	return f.memFile.WriteAt(p, off)
}

func TestEncoderErrors(t *testing.T) {
	d := genDocument(1, 2000)
	history := d.History
	d.History = nil
	enc, _, _ := streamEncode(genDocument(1, 2000))

	for _, failAt := range []int64{10, 200 << 10, int64(len(enc)) - 10} {
		_, _, err := NewEncoder(&failingFile{failAt: failAt}).Encode(d, SliceHistory(history))
		if !errors.Is(err, errDiskFull) || errors.Is(err, ErrInvalidDocument) {
			t.Errorf("write failing at %d: error %v, want the write's error", failAt, err)
		}
	}

	errPage := errors.New("page 3 unreadable")
	read := 0
	_, _, err := NewEncoder(&memFile{}).Encode(d, func(yield func(chat.Message) error) error {
		for _, m := range history[:100] {
			read++
			if err := yield(m); err != nil {
				return err
			}
		}
		return errPage
	})
	if !errors.Is(err, errPage) || errors.Is(err, ErrInvalidDocument) || read != 100 {
		t.Errorf("history failing: error %v after %d messages, want the history's error after 100", err, read)
	}

	// A message Validate refuses stops the history there.
	broken := append([]chat.Message(nil), history...)
	broken[10].MessageID = ""
	read = 0
	_, _, err = NewEncoder(&memFile{}).Encode(d, func(yield func(chat.Message) error) error {
		for _, m := range broken {
			read++
			if err := yield(m); err != nil {
				return err
			}
		}
		return nil
	})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "history[10].messageId" || read != 11 {
		t.Errorf("error %v after %d messages, want history[10].messageId after 11", err, read)
	}

	d.History = history[:1]
	if _, _, err := NewEncoder(&memFile{}).Encode(d, SliceHistory(history)); err == nil || errors.Is(err, ErrInvalidDocument) {
		t.Errorf("d.History set: error %v, want a usage error", err)
	}
}
