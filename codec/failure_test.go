package codec_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/codec"
	"github.com/agentchat/agentchat/internal/syncbuf"
	"github.com/agentchat/agentchat/keyring"
)

// ringOf is a ring of one key, id, of bytes b repeated.
func ringOf(t *testing.T, id string, b byte) *keyring.Ring {
	t.Helper()
	r, err := keyring.New(keyring.File{Current: id, Keys: map[string]string{id: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32))}})
	require.NoError(t, err)
	return r
}

// A failure sealed with a key the reader's ring lacks, or holds under the same id with
// other bytes, reads as a failure that says so and names the key id, where Temporal's
// converter leaves "Encoded failure"; its type and the key error stay findable.
func TestAFailureThatDoesNotOpenSaysWhyAndNamesTheKey(t *testing.T) {
	writer := ringOf(t, "k2", 1)
	sealed := codec.FailureConverter(codec.DataConverter(writer)).ErrorToFailure(
		temporal.NewNonRetryableApplicationError("the text of a chat", "TurnFailed", nil))
	require.Equal(t, "Encoded failure", sealed.GetMessage())

	for _, reader := range []*keyring.Ring{ringOf(t, "k1", 1), ringOf(t, "k2", 2)} {
		err := codec.FailureConverter(codec.DataConverter(reader)).FailureToError(sealed)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "Encoded failure")
		assert.NotContains(t, err.Error(), "the text of a chat")
		assert.Contains(t, err.Error(), `key id "k2"`)
		var unreadable *codec.UnreadableFailureError
		require.ErrorAs(t, err, &unreadable)
		var ke *codec.KeyError
		require.ErrorAs(t, err, &ke)
		assert.Equal(t, "k2", ke.KeyID)
		var app *temporal.ApplicationError
		require.ErrorAs(t, err, &app)
		assert.Equal(t, "TurnFailed", app.Type(), "the failure's type is still read")
	}
	err := codec.FailureConverter(codec.DataConverter(writer)).FailureToError(sealed)
	assert.Equal(t, "the text of a chat", err.(*temporal.ApplicationError).Message(), "the writer's ring reads it whole")
}

// Decode's error for a payload the ring cannot open has type ErrTypeKey (it crosses
// the wire in a failure from a worker), unwraps to the keyring's error, and is logged
// with the key id when the codec has a logger.
func TestDecodeOfAnotherKeyIsTypedAndLogged(t *testing.T) {
	p, err := converter.GetDefaultDataConverter().ToPayload("hello")
	require.NoError(t, err)
	sealed, err := codec.Codec{Ring: ringOf(t, "k1", 1)}.Encode([]*commonpb.Payload{p})
	require.NoError(t, err)
	var log syncbuf.Buffer
	_, err = codec.Codec{Ring: ringOf(t, "k2", 1), Logger: slog.New(slog.NewTextHandler(&log, nil))}.Decode(sealed)
	require.Error(t, err)
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	assert.Equal(t, codec.ErrTypeKey, app.Type())
	var unknown *keyring.UnknownKeyError
	require.True(t, errors.As(err, &unknown))
	assert.Equal(t, "k1", unknown.KeyID)
	assert.Contains(t, log.String(), "keyId=k1")
}
