package chatstate

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeKeepingBytes checks DecodeKeepingBytes against Decode and EncodeMessage on
// seeded generated documents, valid and broken (Encode writes some broken ones, which
// Decode repairs or refuses), and on the same documents indented: it returns what
// Decode returns, and raw, when not nil, holds each history message exactly as
// EncodeMessage writes the message Decode returned.
func TestDecodeKeepingBytes(t *testing.T) {
	kept, notKept := 0, 0
	for seed := range uint64(300) {
		d, _ := seededDocument(seed, 21)
		b, _, err := Encode(d)
		if err != nil {
			continue // a document Encode refuses is never read here
		}
		var indented bytes.Buffer
		require.NoError(t, json.Indent(&indented, b, "", " "))
		for _, in := range [][]byte{b, indented.Bytes()} {
			name := "seed " + strconv.FormatUint(seed, 10)
			wantDoc, wantRep, wantErr := Decode(in)
			doc, rep, raw, err := DecodeKeepingBytes(in)
			if wantErr != nil {
				require.EqualError(t, err, wantErr.Error(), name)
				assert.Nil(t, raw, name)
				continue
			}
			require.NoError(t, err, name)
			require.Equal(t, wantDoc, doc, name)
			require.Equal(t, wantRep, rep, name)
			if raw == nil {
				notKept++
				assert.True(t, len(rep.Repairs) > 0 || !bytes.Equal(in, b), "%s: a document as Encode writes it, not repaired, keeps its bytes", name)
				continue
			}
			kept++
			require.Len(t, raw, len(doc.History), name)
			for i, m := range doc.History {
				enc, err := EncodeMessage(m)
				require.NoError(t, err, name)
				require.Equal(t, string(enc), string(raw[i]), "%s: message %d", name, i)
			}
		}
	}
	t.Logf("%d decodes kept the bytes, %d did not", kept, notKept)
	assert.Greater(t, kept, 50)
	assert.Greater(t, notKept, 50)
}
