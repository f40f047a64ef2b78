package chatstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/agentchat/agentchat/chat"
)

// streamDecode reads b with a Decoder: Header, then History gathered.
func streamDecode(b []byte) (doc Document, rep Report, streamed bool, err error) {
	return streamDecodeSpilled(b, nil)
}

// streamDecodeSpilled is streamDecode with the Decoder's ids spilled by open. It also
// gathers the history Header gives Each (its last run from index 0), and returns an
// error unless that is the history History yields.
func streamDecodeSpilled(b []byte, open SpillOpener) (doc Document, rep Report, streamed bool, err error) {
	var each []chat.Message
	dec := NewDecoder(bytes.NewReader(b), int64(len(b))).SpillIDs(open).Each(func(i int, m chat.Message) {
		if i != len(each) && i != 0 {
			panic(fmt.Sprintf("Each: message %d after %d messages", i, len(each)))
		}
		if i == 0 {
			each = each[:0]
		}
		each = append(each, m)
	})
	doc, rep, err = dec.Header()
	if err != nil {
		return doc, rep, dec.streamed, err
	}
	doc.History = []chat.Message{}
	err = dec.History()(func(m chat.Message) error {
		doc.History = append(doc.History, m)
		return nil
	})
	if err == nil && !reflect.DeepEqual(append([]chat.Message{}, each...), doc.History) {
		err = fmt.Errorf("Each gave %d messages, History %d, or others", len(each), len(doc.History))
	}
	return doc, rep, dec.streamed, err
}

// sameAsDecode checks that a Decoder reads b as Decode does, errors included, and
// reports whether it streamed.
func sameAsDecode(t *testing.T, name string, b []byte) bool {
	t.Helper()
	return sameAsDecodeSpilled(t, name, b, nil)
}

// sameAsDecodeSpilled is sameAsDecode with the Decoder's ids spilled by open.
func sameAsDecodeSpilled(t *testing.T, name string, b []byte, open SpillOpener) bool {
	t.Helper()
	want, wantRep, wantErr := Decode(b)
	got, rep, streamed, err := streamDecodeSpilled(b, open)
	if wantErr != nil || err != nil {
		var fe *FieldError
		if wantErr == nil || err == nil || err.Error() != wantErr.Error() || !errors.As(err, &fe) {
			t.Fatalf("%s: Decoder error %v, Decode error %v", name, err, wantErr)
		}
		return streamed
	}
	if !reflect.DeepEqual(rep, wantRep) {
		t.Fatalf("%s: Decoder report %+v, Decode's %+v", name, rep, wantRep)
	}
	if len(want.History) == 0 {
		want.History = []chat.Message{}
	}
	sameDocument(t, got, want)
	return streamed
}

func TestDecoderReadsTheGoldenFiles(t *testing.T) {
	names, files := goldenFiles(t)
	files[filepath.Base(largeGolden)] = readLargeGolden(t)
	names = append(names, filepath.Base(largeGolden))
	for _, name := range names {
		if !sameAsDecode(t, name, files[name]) {
			t.Errorf("%s: read by Decode, not streamed", name)
		}
		if !sameAsDecode(t, name+" with a newline", append(bytes.Clone(files[name]), '\n')) {
			t.Errorf("%s with a newline: read by Decode, not streamed", name)
		}
	}
}

// TestDecoderMatchesDecode compares Decoder with Decode on generated documents written
// without Validate (so that Decode refuses some for their content, not their digest),
// and on layouts it leaves to Decode: indented, a wrong digest, cut short.
func TestDecoderMatchesDecode(t *testing.T) {
	streamed := 0
	for seed := range uint64(300) {
		d, r := seededDocument(seed, 8)
		b, _, err := encode(d)
		if err != nil {
			continue // nothing Encode could write
		}
		name := "seed " + strconv.FormatUint(seed, 10)
		if sameAsDecode(t, name, b) {
			streamed++
		} else if seed%3 == 0 {
			t.Errorf("%s: a valid document read by Decode, not streamed", name)
		}
		switch seed % 4 {
		case 0:
			var in bytes.Buffer
			_ = json.Indent(&in, b, "", " ")
			sameAsDecode(t, name+" indented", in.Bytes())
		case 1:
			sameAsDecode(t, name+" tampered", bytes.Replace(b, []byte(`"role":"user"`), []byte(`"role":"assistant"`), 1))
		case 2:
			sameAsDecode(t, name+" cut", b[:r.IntN(len(b))])
		case 3:
			sameAsDecode(t, name+" with a space", append([]byte(" "), b...))
		}
	}
	if streamed < 150 {
		t.Errorf("%d documents streamed, want most of 300", streamed)
	}
	if testing.Verbose() {
		t.Logf("%d of 300 documents streamed", streamed)
	}
}

// TestDecoderMatchesDecodeOnFuzzCorpus compares Decoder with Decode on the seed corpus
// of FuzzDecode.
func TestDecoderMatchesDecodeOnFuzzCorpus(t *testing.T) {
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
		sameAsDecode(t, filepath.Base(p), []byte(in))
	}
}

// FuzzStreamDecode: a Decoder reads any input as Decode does, and the input read by
// encoding/json and written canonically without Validate (so with its digest right,
// which most mutations break, and read by the Decoder's streaming path).
func FuzzStreamDecode(f *testing.F) {
	_, files := goldenFiles(f)
	for _, b := range files {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameAsDecode(t, "input", b)
		var loose Document
		if json.Unmarshal(b, &loose) == nil {
			if enc, _, err := encode(loose); err == nil {
				sameAsDecode(t, "input written canonically", enc)
			}
		}
	})
}

// changingReader serves a, then b once it has been read to its end.
type changingReader struct {
	a, b []byte
	done bool
}

func (r *changingReader) ReadAt(p []byte, off int64) (int, error) {
	src := r.a
	if r.done {
		src = r.b
	}
	n := copy(p, src[off:])
	if off+int64(n) == int64(len(src)) {
		r.done = true
	}
	return n, nil
}

func TestDecoderErrors(t *testing.T) {
	b, _, err := Encode(genDocument(3, 500))
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Replace(b, []byte(`"role":"user"`), []byte(`"role":"USER"`), 1)
	dec := NewDecoder(&changingReader{a: b, b: changed}, int64(len(b)))
	if _, _, err := dec.Header(); err != nil || !dec.streamed {
		t.Fatalf("Header: %v (streamed %v)", err, dec.streamed)
	}
	n := 0
	err = dec.History()(func(chat.Message) error { n++; return nil })
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "digest" {
		t.Errorf("a document changed between Header and History: error %v, want one naming digest", err)
	}

	stop := errors.New("stop")
	dec = NewDecoder(bytes.NewReader(b), int64(len(b)))
	if _, _, err := dec.Header(); err != nil {
		t.Fatal(err)
	}
	n = 0
	err = dec.History()(func(chat.Message) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	})
	if err != stop || n != 10 {
		t.Errorf("yield's error: History returned %v after %d messages", err, n)
	}

	dec = NewDecoder(bytes.NewReader(b), int64(len(b))+10)
	if _, _, err := dec.Header(); err == nil || errors.Is(err, ErrInvalidDocument) {
		t.Errorf("size past the end: error %v, want a read error", err)
	}
	if err := dec.History()(func(chat.Message) error { return nil }); err == nil {
		t.Error("History after a failed Header: no error")
	}
}

// TestStreamingLargeMessages: messages larger than the Decoder's window and the
// Encoder's buffer are read and written whole.
func TestStreamingLargeMessages(t *testing.T) {
	d := genDocument(5, 50)
	d.History = append([]chat.Message(nil), d.History...)
	for _, i := range []int{1, 20, 49} {
		long := strings.Repeat("long \"text\" é ", 20000+i)
		if m := &d.History[i]; m.Role == chat.RoleTool {
			m.Contents = append([]chat.Content(nil), m.Contents...)
			m.Contents[0].Result = long
		} else {
			m.Contents = append([]chat.Content{chat.Text(long)}, m.Contents...)
		}
	}
	sameAsEncode(t, "large messages", d)
	b, _, err := Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	if !sameAsDecode(t, "large messages", b) {
		t.Error("read by Decode, not streamed")
	}
}

// A document starts as Encode writes it; an envelope, another layout, or too few bytes
// do not.
func TestStartsEncoded(t *testing.T) {
	for s, want := range map[string]bool{
		`{"channels":[],"chatId":"x"}`: true,
		`{"envelope":1,"document":{}}`: false,
		` {"channels":[]}`:             false,
		`{"chan`:                       false,
		``:                             false,
	} {
		if got := StartsEncoded(strings.NewReader(s), int64(len(s))); got != want {
			t.Errorf("StartsEncoded(%q) = %v, want %v", s, got, want)
		}
	}
}
