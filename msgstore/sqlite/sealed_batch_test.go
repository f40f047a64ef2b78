package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
)

// A large batch is sealed and opened in parts at once, into shared blocks: every
// message of seeded sizes (some larger than a block) reads back as it was put, and a
// row altered in the store fails Get naming the first such message in the order
// asked, as a loop over the rows would.
func TestSealedLargeBatchesRoundTripAndNameTheFirstBadRow(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // parts at once on any machine
	ctx := context.Background()
	raw := openT(t, filepath.Join(t.TempDir(), "batch.db"))
	st := msgstore.Sealed(raw, sealRing(t, ringFile(t, "k1")))
	r := rand.New(rand.NewPCG(7, 11))
	msgs := make([]chat.Message, 1500)
	ids := make([]string, len(msgs))
	for i := range msgs {
		n := r.IntN(2000)
		if i%500 == 250 {
			n = 1<<20 + r.IntN(1000) // over a block
		}
		ids[i] = fmt.Sprintf("m%04d", i)
		msgs[i] = chat.TextMessage(ids[i], chat.RoleAssistant, "Helper", strings.Repeat("é", n/2)+fmt.Sprint(i))
	}
	require.NoError(t, st.Put(ctx, "c", msgs))
	got, err := st.Get(ctx, "c", ids)
	require.NoError(t, err)
	require.Len(t, got, len(msgs))
	for i := range msgs {
		require.Equal(t, msgs[i], got[i], "message %d", i)
	}
	require.NoError(t, st.Put(ctx, "c", msgs), "a retried put of the same batch is a no-op")

	for _, i := range []int{1200, 700} { // alter two rows in two parts
		var body []byte
		require.NoError(t, raw.db.QueryRow("SELECT body FROM chat_messages WHERE chat_id = 'c' AND message_id = ?", ids[i]).Scan(&body))
		require.True(t, strings.HasPrefix(string(body), msgstore.BinaryRowPrefix))
		body[len(body)/2] ^= 0x40 // mid-ciphertext
		_, err := raw.db.Exec("UPDATE chat_messages SET body = ? WHERE chat_id = 'c' AND message_id = ?", body, ids[i])
		require.NoError(t, err)
	}
	_, err = st.Get(ctx, "c", ids)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `message "m0700"`, "the first altered row in the order asked")
	assert.ErrorIs(t, err, keyring.ErrNotAuthentic)
}

// A binary row cut short or with a bad key id length fails Get with an error naming
// the message: never a panic, never another message.
func TestSealedMalformedBinaryRowsAreRefused(t *testing.T) {
	ctx := context.Background()
	raw := openT(t, filepath.Join(t.TempDir(), "bad.db"))
	st := msgstore.Sealed(raw, sealRing(t, ringFile(t, "k1")))
	require.NoError(t, st.Put(ctx, "c", []chat.Message{chat.TextMessage("ok", chat.RoleUser, "", "fine")}))
	good, err := raw.GetRows(ctx, "c", []string{"ok"})
	require.NoError(t, err)
	row := good["ok"]
	p := len(msgstore.BinaryRowPrefix)
	for name, body := range map[string][]byte{
		"prefix only":           []byte(msgstore.BinaryRowPrefix),
		"no key id":             append([]byte(msgstore.BinaryRowPrefix), 0),
		"key id past the end":   append([]byte(msgstore.BinaryRowPrefix), 200, 'k'),
		"no ciphertext":         row[:p+3],
		"cut before the tag":    row[:len(row)-1],
		"another key id length": append(append([]byte(msgstore.BinaryRowPrefix), 1), row[p+1:]...),
	} {
		id := strings.ReplaceAll(name, " ", "-")
		require.NoError(t, raw.PutRows(ctx, "c", []msgstore.Row{{ID: id, Body: body}}), name)
		_, err := st.Get(ctx, "c", []string{id})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), `message "`+id+`"`, name)
	}
}
