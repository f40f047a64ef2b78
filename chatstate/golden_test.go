package chatstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite testdata/golden and the FuzzDecode seed corpus")

// goldenFiles returns the golden files' names and bytes, sorted by name.
func goldenFiles(t testing.TB) ([]string, map[string][]byte) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "v*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files (%v)", err)
	}
	files := map[string][]byte{}
	var names []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(p))
		files[filepath.Base(p)] = b
	}
	sort.Strings(names)
	return names, files
}

// TestGoldenFiles checks that the golden files are what Encode writes for goldenDocs
// today; with -update it writes them, and the fuzz seed corpus.
func TestGoldenFiles(t *testing.T) {
	docs := goldenDocs()
	for name, d := range docs {
		enc, _, err := Encode(d)
		if err != nil {
			t.Fatalf("%s: Encode: %v", name, err)
		}
		p := filepath.Join("testdata", "golden", name)
		if *update {
			if err := os.WriteFile(p, enc, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, want) {
			t.Errorf("%s: Encode differs from the golden file (run go test -update if the change is intended, and keep old versions' files)\n got %s\nwant %s", name, enc, want)
		}
	}
	if *update {
		writeFuzzCorpus(t)
	}
}

func TestGoldenRoundTrip(t *testing.T) {
	names, files := goldenFiles(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			b := files[name]
			doc, rep, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if rep.UpgradedFrom != 0 || len(rep.Repairs) != 0 {
				t.Errorf("report = %+v, want nothing done", rep)
			}
			enc, digest, err := Encode(doc)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !bytes.Equal(enc, b) {
				t.Errorf("Encode(Decode(file)) differs from the file:\n got %s\nwant %s", enc, b)
			}
			if doc.Digest != digest || !strings.Contains(string(b), `"digest":"`+digest+`"`) {
				t.Errorf("digest %q, Decode's %q; not the file's", digest, doc.Digest)
			}
		})
	}
}

// TestGoldenContents checks what the golden files hold, so a wrong generator shows.
func TestGoldenContents(t *testing.T) {
	_, files := goldenFiles(t)
	for name, want := range map[string][]string{
		"v1-thread.json": {`"text":"Hello"`, `"text":"My name is Alice"`, `"text":"What's my name?"`, `"text":"Your name is Alice."`},
		"v1-group-chat.json": {
			`{"arguments":"{\"order\":7}","callId":"c1","name":"lookup","type":"functionCall"}`,
			`{"callId":"c1","result":"{\"status\":\"shipped\",\"eta\":\"2026-12-02\"}","type":"functionResult"}`,
			`"strategies":{"isComplete":false,"selection":{"state":{"nextIndex":1},"type":"sequential"},"termination":{"state":{"iterations":2},"type":"maxIterations"}}`,
			`"pendingTurns":[{"authorName":"Alice","contents":[{"text":"Thanks! Can you also check order 8?","type":"text"}],"createdAt":"2026-11-30T12:06:00Z","messageId":"m-2","role":"user"}]`,
			`"channelState":{},"channelType":"chat_history"`,
			`"channelState":{"previousResponseId":"resp_1","syncedThrough":"m-2"},"channelType":"responses_thread"`,
			`summarize it <briefly>`, // no HTML escaping in RFC 8785
			`"text":"Approved.\nThe summary is accurate."`,
		},
		"v1-contents.json": {
			`{"durationMs":1200,"type":"audio","uri":"https://x/a.wav"}`,
			`{"type":"image","uri":"https://x/cat.png"}`,
			`{"data":"iVBORw0KGgo=","mediaType":"image/png","type":"image"}`,
			`{"frames":[1,2.5,-300],"text":{"lang":"en","lines":["héllo","wörld ✓"]},"type":"video"}`,
		},
		"v1-empty.json": {`"channels":[]`, `"history":[]`, `"participants":[]`, `"pendingTurns":[]`, `"selection":{"state":{},"type":"sequential"}`},
	} {
		for _, w := range want {
			if !strings.Contains(string(files[name]), w) {
				t.Errorf("%s does not contain %s", name, w)
			}
		}
	}
}

func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("chat-state-v1.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("chat-state-v1.schema.json")
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	return s
}

func schemaErr(t testing.TB, s *jsonschema.Schema, b []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("instance: %v", err)
	}
	return s.Validate(v)
}

func TestGoldenFilesMatchSchema(t *testing.T) {
	s := compileSchema(t)
	names, files := goldenFiles(t)
	for _, name := range names {
		if err := schemaErr(t, s, files[name]); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSchemaRefuses checks that the schema is not vacuous: documents the reader refuses
// for their shape fail it too.
func TestSchemaRefuses(t *testing.T) {
	s := compileSchema(t)
	_, files := goldenFiles(t)
	golden := string(files["v1-group-chat.json"])
	for name, edit := range map[string][2]string{
		"version 2":              {`"schemaVersion":1`, `"schemaVersion":2`},
		"unknown member":         {`"chatId":`, `"chat_id":"x","chatId":`},
		"member of text content": {`"text":"Approved.`, `"uri":"x","text":"Approved.`},
		"null authorName":        {`"authorName":"Alice"`, `"authorName":null`},
		"bad channelKey":         {chatHistoryKey, "abc="},
		"state not an object":    {`"state":{"nextIndex":1}`, `"state":[1]`},
		"pending assistant turn": {`"messageId":"m-2","role":"user"`, `"messageId":"m-2","role":"assistant"`},
		"call without name":      {`"name":"lookup",`, ``},
		"bad digest":             {`"digest":"sha256:`, `"digest":"sha1:`},
		"bad time":               {`"exportedAt":"2026-11-30T12:30:00Z"`, `"exportedAt":"yesterday"`},
		"blank text":             {`"text":"Approved.\nThe summary is accurate."`, `"text":" \n"`},
		"no contents":            {`"contents":[{"text":"Thanks! Can you also check order 8?","type":"text"}]`, `"contents":[]`},
	} {
		if !strings.Contains(golden, edit[0]) {
			t.Fatalf("%s: golden lacks %s", name, edit[0])
		}
		if err := schemaErr(t, s, []byte(strings.Replace(golden, edit[0], edit[1], 1))); err == nil {
			t.Errorf("%s: schema accepts it", name)
		}
	}
}

// TestDigestIndependentImplementation recomputes a golden file's digest without
// gowebpki/jcs: for a document whose numbers are small integers and whose strings need
// no escapes that differ, encoding/json with sorted map keys and no HTML escaping is the
// RFC 8785 form. A wrong digest rule in the package would fail here.
func TestDigestIndependentImplementation(t *testing.T) {
	_, files := goldenFiles(t)
	for _, name := range []string{"v1-thread.json", "v1-group-chat.json"} {
		b := files[name]
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		stated := m["digest"].(string)
		delete(m, "digest")
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		if want := "sha256:" + hex.EncodeToString(sum[:]); stated != want {
			t.Errorf("%s: digest %s, independent computation %s", name, stated, want)
		}
	}
}

// writeFuzzCorpus writes the golden files and broken variants of them as the seed
// corpus of FuzzDecode.
func writeFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	names, files := goldenFiles(t)
	write := func(name string, b []byte) {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		b := files[name]
		base := strings.TrimSuffix(name, ".json")
		write(base, b)
		write(base+"-truncated", b[:len(b)/2])
		write(base+"-tampered", bytes.Replace(b, []byte(`"role":"user"`), []byte(`"role":"assistant"`), 1))
		write(base+"-version2", bytes.Replace(b, []byte(`"schemaVersion":1`), []byte(`"schemaVersion":2`), 1))
		var indented bytes.Buffer
		if err := json.Indent(&indented, b, "", "\t"); err != nil {
			t.Fatal(err)
		}
		write(base+"-indented", indented.Bytes())
	}
	d := goldenDocs()["v1-group-chat.json"]
	m := asMap(t, d)
	hist := m["history"].([]any)
	m["history"] = append(hist[:2:2], hist[3:]...) // drop the result: repaired
	write("group-chat-missing-result", seal(t, m))
	m = asMap(t, d)
	path(m, "history", 1).(map[string]any)["contents"] = []any{map[string]any{"type": "text", "text": "no call"}}
	write("group-chat-orphan-result", seal(t, m))
	write("not-an-object", []byte(`[{"schemaVersion":1}]`))
	write("duplicate-key", []byte(`{"schemaVersion":1,"schemaVersion":1}`))
}
