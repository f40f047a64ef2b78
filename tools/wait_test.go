package tools_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/tools"
)

func TestWaitWaitsAndStopsWhenCancelled(t *testing.T) {
	r, err := tools.Wait(context.Background(), json.RawMessage(`{"seconds":0.05}`))
	require.NoError(t, err)
	assert.Equal(t, "waited 50ms", r)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err = tools.Wait(ctx, json.RawMessage(`{"seconds":60}`))
	assert.ErrorContains(t, err, "wait: cancelled")
	assert.Less(t, time.Since(began), 5*time.Second, "returned when its context ended")

	_, err = tools.Wait(context.Background(), json.RawMessage(`{"seconds":-1}`))
	assert.ErrorContains(t, err, "seconds must be between 0 and 600")
	_, err = tools.Wait(context.Background(), json.RawMessage(`[1]`))
	assert.ErrorContains(t, err, `want {"seconds": 5}`)
}
