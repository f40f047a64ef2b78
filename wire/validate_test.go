package wire_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/wire"
)

// A chat's participants are agent ids, each named once and none empty: Validate says
// which one is wrong before anything is created (the client calls it before a start).
func TestValidateRefusesRepeatedOrEmptyParticipants(t *testing.T) {
	for _, tc := range []struct {
		participants []string
		want         string
	}{
		{[]string{"helper", "writer", "helper"}, `participants[2]: agent id "helper" is named twice (also participants[0])`},
		{[]string{"helper", " "}, "participants[1] is empty"},
		{nil, "at least one participant"},
	} {
		err := wire.AgentChatInput{Participants: tc.participants}.Validate()
		require.Error(t, err, "%v", tc.participants)
		assert.Contains(t, err.Error(), tc.want)
	}
	require.NoError(t, wire.AgentChatInput{Participants: []string{"helper", "writer"}}.Validate())
}
