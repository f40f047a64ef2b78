package chatstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// FuzzDecode: any input gives a document or a *FieldError, never a panic; a document
// that decodes re-encodes to one that decodes to the same document, and Encode agrees
// with encoding/json + jcs.Transform and writes what the JSON Schema accepts. The input is also read with encoding/json alone:
// whatever Encode accepts, Decode reads back (repairing at most) and writes the same.
// Seed corpus: testdata/fuzz/FuzzDecode (golden files and broken variants, written by
// go test -update).
func FuzzDecode(f *testing.F) {
	_, files := goldenFiles(f)
	for _, b := range files {
		f.Add(b)
	}
	// bytes that are not UTF-8, where errors may quote the document
	f.Add([]byte("{\"schemaVersion\":\"\xff\xfe\"}"))
	f.Add([]byte("{\"schemaVersion\":1,\"chatId\":\"\xc3\",\"history\":[{\"\xff\":1,\"role\":\"\xfe\"}]}"))
	schema := compileSchema(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		roundTrip := func(doc Document) {
			enc := roundTrip(t, doc)
			if err := schemaErr(t, schema, enc); err != nil {
				t.Fatalf("Encode wrote a document the schema refuses: %v\n%s", err, enc)
			}
		}
		doc, _, err := Decode(b)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Decode error is not a FieldError: %v", err)
			}
			if !utf8.ValidString(err.Error()) { // a failure's message is a protobuf string
				t.Fatalf("Decode error is not valid UTF-8: %q", err.Error())
			}
		} else {
			roundTrip(doc)
		}
		// Most mutations break the digest: try the input with its digest made right, to
		// reach the checks after it.
		if resealed, ok := reseal(b); ok {
			if doc, _, err := Decode(resealed); err == nil {
				roundTrip(doc)
			} else if fe := (*FieldError)(nil); !errors.As(err, &fe) || fe.Field == "digest" {
				t.Fatalf("Decode of a resealed document: %v", err)
			}
		}

		var loose Document
		if json.Unmarshal(b, &loose) != nil {
			return
		}
		enc, _, err := Encode(loose)
		if err != nil {
			return
		}
		if got, want := withoutDigest(t, enc), reference(t, normalizeEmpty(loose)); !bytes.Equal(got, want) {
			t.Fatalf("encoder differs from encoding/json + jcs:\n got %q\nwant %q", got, want)
		}
		back, rep, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode refuses what Encode wrote: %v\n%s", err, enc)
		}
		if len(rep.Repairs) == 0 {
			if enc2, _, _ := Encode(back); !bytes.Equal(enc2, enc) {
				t.Fatalf("Encode(Decode(enc)) != enc:\n%s\n%s", enc2, enc)
			}
		}
		roundTrip(back)
	})
}

// roundTrip checks that a decoded document re-encodes to bytes that decode to the same
// document, with nothing to repair, and that encode the same.
func roundTrip(t *testing.T, doc Document) []byte {
	t.Helper()
	enc, digest, err := Encode(doc)
	if err != nil {
		t.Fatalf("Encode of a decoded document: %v", err)
	}
	if doc.Digest != digest {
		t.Fatalf("Decode's digest %s, Encode's %s", doc.Digest, digest)
	}
	again, rep, err := Decode(enc)
	if err != nil || len(rep.Repairs) != 0 || rep.UpgradedFrom != 0 {
		t.Fatalf("Decode(Encode(doc)) = %v, report %+v", err, rep)
	}
	sameDocument(t, again, doc)
	if enc2, _, _ := Encode(again); !bytes.Equal(enc2, enc) {
		t.Fatalf("encoding is not stable:\n%s\n%s", enc, enc2)
	}
	return enc
}

// reseal returns b, a JSON object, with its digest set right; false if b is no object or
// cannot be canonicalized.
func reseal(b []byte) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return nil, false
	}
	delete(m, "digest")
	plain, _ := json.Marshal(m)
	c, err := jcs.Transform(plain)
	if err != nil {
		return nil, false
	}
	sum := sha256.Sum256(c)
	m["digest"], _ = json.Marshal("sha256:" + hex.EncodeToString(sum[:]))
	out, err := json.Marshal(m)
	return out, err == nil
}
