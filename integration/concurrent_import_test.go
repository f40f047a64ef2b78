package integration_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// Imports sent at once into one empty chat: one restores the document, and each other
// is refused (ChatNotEmpty) saying that an import is in progress or that the chat was
// restored already, never that it "already has 0 messages"; the chat holds the document
// once.
func TestConcurrentImportsSayAnImportIsInProgress(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	src := testenv.ChatID(t)
	seedThread(t, h, src)
	doc, _, err := h.Client.Export(ctxFor(t), src)
	require.NoError(t, err)
	target := testenv.ChatID(t)
	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: target, Participants: []string{"helper"}})
	require.NoError(t, err)

	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = h.Client.ImportInto(ctxFor(t), target, doc, "") })
	}
	wg.Wait()
	restored := 0
	for _, err := range errs {
		if err == nil {
			restored++
			continue
		}
		var app *temporal.ApplicationError
		require.True(t, errors.As(err, &app), "%v", err)
		assert.Equal(t, wire.ErrTypeNotEmpty, app.Type(), "%v", err)
		msg := err.Error()
		assert.NotContains(t, msg, "already has 0 messages", "the refusal hides the import in progress")
		assert.True(t, strings.Contains(msg, "is importing a document already") || strings.Contains(msg, "was restored from a document already"), msg)
	}
	assert.Equal(t, 1, restored, "%v", errs)
	st, err := h.Client.State(ctxFor(t), target)
	require.NoError(t, err)
	assert.Equal(t, 4, st.MessageCount, "the document is in the chat once")
}
