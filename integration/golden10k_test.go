package integration_test

// A chat-state v1 document of 10,000 messages, exported by a real worker before chats
// kept a bounded window of their history (before paged history), is committed gzipped
// in testdata/golden. Whatever the workflow keeps in its state, a chat restored from it
// must export the same document: the same bytes, but for the members that name the
// export itself (chatId, source, exportedAt and the digest over them).
//
// The file is written once, by an export of today's code:
//
//	go test ./integration -count=1 -run TestGoldenV1Document10k -golden-10k
//
// and is never rewritten after: that is the point of it.

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
)

var golden10k = flag.Bool("golden-10k", false, "write "+golden10kPath+" from an export of today's code (once)")

// golden10kPath is the committed document, relative to this folder.
const golden10kPath = "testdata/golden/v1-10000-messages.json.gz"

func TestGoldenV1Document10kImportsAndExportsByteIdentical(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	h := testenv.New(t, testenv.Options{})
	if *golden10k {
		writeGolden10k(t, ctx, h)
	}
	want := readGzip(t, golden10kPath)
	golden, rep, err := chatstate.Decode(want)
	require.NoError(t, err)
	require.Zero(t, rep.UpgradedFrom, "a v1 file needs no upgrade")
	require.Empty(t, rep.Repairs)
	require.Len(t, golden.History, bigChatMessages)
	enc, _, err := chatstate.Encode(golden)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, enc), "the committed file is the canonical encoding of what it holds")

	id := testenv.ChatID(t)
	st := importBytes(t, ctx, h, id, want)
	assert.Equal(t, bigChatMessages, st.MessageCount)
	assert.Equal(t, golden.Digest, st.RestoredDigest)

	got, _, err := h.Client.Export(ctx, id)
	require.NoError(t, err)
	doc, _, err := chatstate.Decode(got)
	require.NoError(t, err)
	assert.Equal(t, id, doc.ChatID)
	// With the golden file's header, the export is the golden file, byte for byte.
	same := sameHeader(doc, golden)
	same.Digest = golden.Digest
	again, _, err := chatstate.Encode(same)
	require.NoError(t, err)
	if !bytes.Equal(want, again) {
		i := 0
		for i < len(want) && i < len(again) && want[i] == again[i] {
			i++
		}
		lo := max(0, i-80)
		t.Fatalf("the export differs from the golden document at byte %d of %d:\n got …%s…\nwant …%s…",
			i, len(want), again[lo:min(len(again), i+80)], want[lo:min(len(want), i+80)])
	}
}

// writeGolden10k restores a generated chat of 9,998 messages, takes one turn on the
// worker's offline model, and writes the export of the 10,000 messages.
func writeGolden10k(t *testing.T, ctx context.Context, h *testenv.Harness) {
	doc := bigChatDocument(bigChatMessages - 2)
	enc, _, err := chatstate.Encode(doc)
	require.NoError(t, err)
	id := testenv.ChatID(t) + "-golden"
	importBytes(t, ctx, h, id, enc)
	_, err = h.Client.Send(ctx, id, agentchat.SendMessageInput{MessageID: "turn-last", Text: "Thanks, that is all.", AuthorName: "Alice"})
	require.NoError(t, err)
	out, _, err := h.Client.Export(ctx, id)
	require.NoError(t, err)
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(out)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.MkdirAll(filepath.Dir(golden10kPath), 0o755))
	require.NoError(t, os.WriteFile(golden10kPath, buf.Bytes(), 0o644))
	t.Logf("wrote %s: %d bytes (%d gzipped)", golden10kPath, len(out), buf.Len())
}

// readGzip returns the decompressed bytes of the gzip file at path.
func readGzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err, "the golden document is committed; write it once with -golden-10k")
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return b
}
