package activities

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// A store's error reaches the chat naming the store once, typed by what failed: the
// store's own wrapped errors ("msgstore: put: message store unavailable: …") are not
// prefixed again, and a bare one is.
func TestStoreErrorNamesTheStoreOnce(t *testing.T) {
	refused := errors.New("connection refused")
	for _, tc := range []struct {
		err  error
		typ  string
		want string
	}{
		{fmt.Errorf("msgstore: put: %w: %w", msgstore.ErrUnavailable, refused), wire.ErrTypeStoreUnavailable,
			"msgstore: put: message store unavailable: connection refused"},
		{fmt.Errorf("dial: %w", msgstore.ErrUnavailable), wire.ErrTypeStoreUnavailable,
			"message store: dial: message store unavailable"},
		{fmt.Errorf("wrapped: %w", fmt.Errorf("x: %w", errors.Join(msgstore.ErrUnavailable))), wire.ErrTypeStoreUnavailable, ""},
		{fmt.Errorf("msgstore: put m1: %w", msgstore.ErrConflict), wire.ErrTypeStoreConflict, ""},
		{errors.New("bad row"), wire.ErrTypeInvalidInput, "message store: bad row"},
	} {
		var app *temporal.ApplicationError
		if !assert.ErrorAs(t, storeError(tc.err), &app) {
			continue
		}
		assert.Equal(t, tc.typ, app.Type(), tc.err.Error())
		if tc.want != "" {
			assert.Equal(t, tc.want, app.Message())
		}
		for _, word := range []string{"message store unavailable", "msgstore:", "message store:"} {
			assert.LessOrEqual(t, strings.Count(app.Message(), word), 1, "%q is said once in %q", word, app.Message())
		}
	}
}
