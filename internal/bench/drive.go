package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/wire"
)

// What the drivers do to a chat and to a floor workflow, each the same way: one call
// of the public API per step, as a service would make it.

// userText returns the i-th user message: about n bytes of text (n ≥ 40).
func userText(i, n int) string {
	head := fmt.Sprintf("Turn %d: what is the status of order %d? ", i, 1000+i)
	if n <= len(head) {
		return head
	}
	filler := "please check the shipping address and the delivery date again "
	return head + strings.Repeat(filler, (n-len(head))/len(filler)+1)[:n-len(head)]
}

// newChatID returns a chat id of this run; kind names the measurement.
func newChatID(kind string) string { return "bench-" + kind + "-" + uuid.NewString()[:8] }

// startChat starts a chat of the given agents (Client.Start: it returns once the
// participants are resolved) and records it for cleanup.
func (e *Env) startChat(ctx context.Context, kind string, agentIDs ...string) (string, error) {
	id := newChatID(kind)
	e.track(id)
	if _, err := e.Chats.Start(ctx, agentchat.StartOptions{ChatID: id, Participants: agentIDs}); err != nil {
		return "", err
	}
	return id, nil
}

// send runs one turn on a chat (Client.Send) and checks that want agent replies came back.
func (e *Env) send(ctx context.Context, chatID string, msg agentchat.SendMessageInput, want int) (agentchat.TurnResult, error) {
	res, err := e.Chats.Send(ctx, chatID, msg)
	if err == nil && len(res.Messages) != want {
		err = fmt.Errorf("chat %s answered with %d messages, want %d", chatID, len(res.Messages), want)
	}
	return res, err
}

// startChatWithTurn starts a one-agent chat with its first turn in one round trip
// (Update-With-Start of SendMessage, as any Temporal client can) and waits for the reply.
func (e *Env) startChatWithTurn(ctx context.Context, kind, text string) (string, error) {
	id := newChatID(kind)
	e.track(id)
	op := e.Temporal.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: id, TaskQueue: e.ChatQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL},
		wire.WorkflowType, wire.AgentChatInput{Version: wire.InputVersion, Participants: []string{"helper"}})
	msg := agentchat.SendMessageInput{MessageID: uuid.NewString(), Text: text}
	var res agentchat.TurnResult
	if err := e.updateWithStart(ctx, op, wire.SendMessageUpdate, msg, &res); err != nil {
		return "", fmt.Errorf("start chat %s with a turn: %w", id, err)
	}
	if len(res.Messages) != 1 {
		return "", fmt.Errorf("chat %s answered its first turn with %d messages, want 1", id, len(res.Messages))
	}
	return id, nil
}

// startFloor starts a floor workflow and records it for cleanup.
func (e *Env) startFloor(ctx context.Context, kind string) (string, error) {
	id := newChatID("floor-" + kind)
	e.track(id)
	_, err := e.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: e.FloorQueue}, FloorWorkflowType)
	if err != nil {
		return "", fmt.Errorf("start floor workflow: %w", err)
	}
	return id, nil
}

// floorTurn runs one update of a floor workflow and waits for its result.
func (e *Env) floorTurn(ctx context.Context, id, update string, in FloorTurn) error {
	h, err := e.Temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: update,
		Args: []any{in}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return fmt.Errorf("floor %s update %s: %w", id, update, err)
	}
	var out FloorReply
	if err := h.Get(ctx, &out); err != nil {
		return fmt.Errorf("floor %s update %s: %w", id, update, err)
	}
	return nil
}

// startFloorWithTurn starts a floor workflow with its first FloorActivityUpdate
// (Update-With-Start) and waits for the result.
func (e *Env) startFloorWithTurn(ctx context.Context, kind, text string) (string, error) {
	id := newChatID("floor-" + kind)
	e.track(id)
	op := e.Temporal.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: id, TaskQueue: e.FloorQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL}, FloorWorkflowType)
	var out FloorReply
	if err := e.updateWithStart(ctx, op, FloorActivityUpdate, FloorTurn{Text: text}, &out); err != nil {
		return "", fmt.Errorf("start floor %s with a turn: %w", id, err)
	}
	return id, nil
}

func (e *Env) updateWithStart(ctx context.Context, op client.WithStartWorkflowOperation, update string, arg, out any) error {
	h, err := e.Temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: update, Args: []any{arg},
			WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err != nil {
		return err
	}
	return h.Get(ctx, out)
}

// timeRounds runs warmup+n rounds; round i calls each of fs with i, in order, and times
// it. It returns, for each f, the durations of its last n calls. Interleaving what is
// compared puts it under the same conditions: a load that comes and goes on the machine
// slows both alike instead of whichever ran at the time.
func timeRounds(ctx context.Context, warmup, n int, fs ...func(ctx context.Context, i int) error) ([][]time.Duration, error) {
	out := make([][]time.Duration, len(fs))
	for i := range warmup + n {
		for j, f := range fs {
			start := time.Now()
			if err := f(ctx, i); err != nil {
				return nil, err
			}
			if i >= warmup {
				out[j] = append(out[j], time.Since(start))
			}
		}
	}
	return out, nil
}
