package cli

import (
	"context"
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

// An encrypted chat read without its key ring fails in the SDK's words; the starter
// says where the ring goes. Following ends without an error when the user stops it.
func TestHintsForAnEncryptedChatAndAStoppedFollow(t *testing.T) {
	err := errors.New(`query chat "c1": payload encoding is not supported`)
	assert.Contains(t, errorHint(err, "q"), "--keys or $AGENTCHAT_KEYS")
	assert.Empty(t, errorHint(errors.New("query chat: not found"), "q"))
	assert.Contains(t, errorHint(errors.New(`query chat "c": no poller seen for task queue recently, worker may be down`), "my-queue"),
		"go run ./worker --offline --task-queue my-queue", "a closed chat read with no worker: how to start one")

	ctx, cancel := context.WithCancel(context.Background())
	boom := errors.New("follow chat: Timeout or cancellation waiting for update: context canceled")
	assert.Equal(t, boom, stoppedFollowing(ctx, boom), "an error while following is one")
	cancel()
	assert.NoError(t, stoppedFollowing(ctx, boom), "Ctrl-C ends following, no error")
	expired, stop := context.WithTimeout(context.Background(), 0)
	defer stop()
	<-expired.Done()
	assert.Equal(t, boom, stoppedFollowing(expired, boom), "--timeout running out is an error")
}
