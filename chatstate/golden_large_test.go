package chatstate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// largeGolden is the 10,000-message golden file: genDocument(largeGoldenSeed, 10000)
// as Encode wrote it. It is kept apart from goldenFiles (its name does not match
// v*.json) so that the schema, layout and fuzz-corpus tests over the small files stay
// fast; regenerate it with go test -run TestGoldenLarge -update.
var largeGolden = filepath.Join("testdata", "golden", "large-v1-10k-messages.json")

const (
	largeGoldenSeed     = 10000
	largeGoldenMessages = 10000
)

func readLargeGolden(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(largeGolden)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenLarge checks that the 10,000-message golden file is what Encode writes for
// the generated document, and that Decode then Encode gives it back byte for byte with
// its digest: a v1 document of a long chat stays byte-identical.
func TestGoldenLarge(t *testing.T) {
	d := genDocument(largeGoldenSeed, largeGoldenMessages)
	enc, digest, err := Encode(d)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if *update {
		if err := os.WriteFile(largeGolden, enc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := readLargeGolden(t)
	if !bytes.Equal(enc, b) {
		t.Errorf("Encode of the generated document differs from %s (%d and %d bytes); run go test -run TestGoldenLarge -update if the change is intended", largeGolden, len(enc), len(b))
	}
	doc, rep, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if rep.UpgradedFrom != 0 || len(rep.Repairs) != 0 {
		t.Errorf("report = %+v, want nothing done", rep)
	}
	if len(doc.History) != largeGoldenMessages {
		t.Errorf("history has %d messages, want %d", len(doc.History), largeGoldenMessages)
	}
	again, digest2, err := Encode(doc)
	if err != nil {
		t.Fatalf("Encode(Decode(file)): %v", err)
	}
	if !bytes.Equal(again, b) {
		t.Errorf("Encode(Decode(file)) differs from the file")
	}
	if digest2 != digest || doc.Digest != digest || fileDigest(t, b) != digest {
		t.Errorf("digests: Encode %s, Encode(Decode) %s, Decode %s, file %s", digest, digest2, doc.Digest, fileDigest(t, b))
	}
	if sealed := seal(t, mustMap(t, b)); fileDigest(t, sealed) != digest {
		t.Errorf("digest recomputed with jcs directly is %s, the file says %s", fileDigest(t, sealed), digest)
	}
}

// TestGoldenLargeContents checks that the generator made what its comment says.
func TestGoldenLargeContents(t *testing.T) {
	s := string(readLargeGolden(t))
	for _, w := range []string{
		`"role":"system"`, `"role":"tool"`, `"type":"functionCall"`, `"error":"tool failed: `,
		`"incomplete":true`, `"cachedTokens":`, `"usage":{"inputTokens":`, `"type":"image","uri":`,
		`"mediaType":"image/png","type":"image"`, `"meta":{"a":[1.25,-300],"lang":"fr","z":null}`,
		`+05:30"`, `"authorName":"李雷"`, `"authorName":"Researcher ✓"`, `🐈‍⬛`, `\t`, `\u0001`,
		"\u2028", `\\Users`, `\"priority\"`, `<b>bold</b> &`, `"channelType":"assistant_thread"`,
		`"nested":{"a":1,"b":2}`, `"tokens":1500`, `"pendingTurns":[{"authorName":"Alice"`,
	} {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %s", largeGolden, w)
		}
	}
}
