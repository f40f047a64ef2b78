package cli

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
)

// A migration's errors name no command-line tool (clients in any language read them);
// the CLI adds the command that does what they ask for, and nothing to other errors.
func TestMigrateHintNamesTheCommandForWhatTheErrorAsks(t *testing.T) {
	opts := agentchat.MigrateOptions{ToNamespace: "archive"}
	missing := errors.New(`migrate: namespace "archive" ` + activities.TargetNamespaceMissing + `; register it there`)
	unserved := errors.New(`migrate: ` + activities.TargetUnserved + ` "agentchat" in namespace "archive"`)
	assert.Equal(t, " (run: temporal operator namespace create --namespace archive)", migrateHint(missing, opts, "agentchat"))
	assert.Equal(t, " (run: go run ./worker --namespace archive --task-queue agentchat)", migrateHint(unserved, opts, "agentchat"))
	assert.Empty(t, migrateHint(errors.New("migrate: the chat is waiting for an approval"), opts, "agentchat"))
}
