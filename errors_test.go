package agentchat

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/wire"
)

// A chat's refusal that names the chat itself (its message is read alone by clients in
// other languages) is said with the chat named once; errors.As still finds the
// application error with the chat's whole message.
func TestAChatErrorNamesTheChatOnce(t *testing.T) {
	app := temporal.NewApplicationError(`chat "desk": call "c1" is already decided: approved; the first decision stands`, wire.ErrTypeInvalidInput)
	err := asChatError("approve in", "desk", app)
	require.NotNil(t, err)
	assert.Equal(t, `agentchat: approve in chat "desk": call "c1" is already decided: approved; the first decision stands`, err.Error())
	assert.Equal(t, 1, strings.Count(err.Error(), `"desk"`))
	var got *temporal.ApplicationError
	require.True(t, errors.As(err, &got))
	assert.Equal(t, `chat "desk": call "c1" is already decided: approved; the first decision stands`, got.Message())

	other := asChatError("send to", "desk", temporal.NewApplicationError(`chat "other": moved`, wire.ErrTypeInvalidInput))
	assert.Contains(t, other.Error(), `chat "other": moved`, "another chat's name stays")
}

// A key ring that cannot be loaded is named once, by the keyring package's words.
func TestAKeyRingThatCannotBeLoadedIsNamedOnce(t *testing.T) {
	_, err := DialOptions{KeysPath: "/nonexistent/keys.json"}.keys()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/keys.json")
	assert.Equal(t, 1, strings.Count(strings.ToLower(err.Error()), "key"+"ring")+strings.Count(err.Error(), "key ring"), err.Error())
}
