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

func TestBuiltinTools(t *testing.T) {
	ctx := context.Background()
	r, err := tools.Calculate(ctx, json.RawMessage(`{"a":6,"op":"*","b":7}`))
	require.NoError(t, err)
	assert.Equal(t, "42", r)
	_, err = tools.Calculate(ctx, json.RawMessage(`{"a":1,"op":"/","b":0}`))
	assert.ErrorContains(t, err, "division by zero")
	r, err = tools.LookupOrder(ctx, json.RawMessage(`{"order":1002}`))
	require.NoError(t, err)
	assert.Equal(t, "order 1002: kettle, $89.00, in transit", r)
	_, err = tools.LookupOrder(ctx, json.RawMessage(`{"order":"9"}`))
	assert.ErrorContains(t, err, `no order "9"`)
	r, err = tools.Refund(ctx, json.RawMessage(`{"order":"1001"}`))
	require.NoError(t, err)
	assert.Equal(t, "refunded $42.50 for order 1001", r)
	_, err = tools.Refund(ctx, json.RawMessage(`{"order":"9"}`))
	assert.ErrorContains(t, err, `no order "9"`)
	_, err = tools.Refund(ctx, json.RawMessage(`{"id":"1001"}`))
	assert.ErrorContains(t, err, `want {"order": "1001"}`)
	r, err = tools.Clock(ctx, nil)
	require.NoError(t, err)
	now, err := time.Parse(time.RFC3339, r)
	require.NoError(t, err, "RFC 3339")
	assert.WithinDuration(t, time.Now(), now, time.Minute)
	assert.Len(t, tools.Builtin(), 5)
}
