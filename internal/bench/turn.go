package bench

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
)

// inlineHistoryBytes mirrors workflows.inlineHistoryBytes: a model call whose history
// is larger reads it from the chat run by its History query instead of its input.
const inlineHistoryBytes = 16 << 10

// turn measures SendMessage round trips on one one-agent chat against the three floor
// updates, each on a fresh workflow. Turns are also split by whether the model call got
// the history inline or had to read it by query.
func (r *runner) turn(ctx context.Context) error {
	e, sz := r.e, r.sz
	id, err := e.startChat(ctx, "turn", "helper")
	if err != nil {
		return err
	}
	var all, inline, byQuery []time.Duration
	history := 0 // the chat's history in chat.Message.Size bytes, as the workflow counts it
	for i := range sz.Warmup + sz.Turns {
		msg := agentchat.SendMessageInput{MessageID: uuid.NewString(), Text: userText(i, sz.TextBytes)}
		history += chat.TextMessage(msg.MessageID, chat.RoleUser, "", msg.Text).Size()
		start := time.Now()
		res, err := e.send(ctx, id, msg, 1)
		d := time.Since(start)
		if err != nil {
			return err
		}
		if i >= sz.Warmup {
			all = append(all, d)
			if history <= inlineHistoryBytes {
				inline = append(inline, d)
			} else {
				byQuery = append(byQuery, d)
			}
		}
		for _, m := range res.Messages {
			history += m.Size()
		}
	}
	floors := map[string][]time.Duration{}
	floorIDs := map[string]string{}
	for _, update := range []string{FloorActivityUpdate, FloorLocalUpdate, FloorImmediateUpdate} {
		fid, err := e.startFloor(ctx, "turn")
		if err != nil {
			return err
		}
		floorIDs[update] = fid
		floors[update], err = timeEach(ctx, sz.Warmup, sz.Turns, func(ctx context.Context, i int) error {
			return e.floorTurn(ctx, fid, update, FloorTurn{Text: userText(i, sz.TextBytes)})
		})
		if err != nil {
			return err
		}
	}
	floor := floors[FloorActivityUpdate]
	chatPhases, err := e.phases(ctx, id, sz.Warmup)
	if err != nil {
		return err
	}
	floorPhases, err := e.phases(ctx, floorIDs[FloorActivityUpdate], sz.Warmup)
	if err != nil {
		return err
	}
	r.t.Add(
		Row{Group: "turn", Name: "Turn p50 (ms)", Value: median(all), Floor: median(floor), Target: AtMost(1.3)},
		Row{Group: "turn", Name: "Turn p99 (ms)", Value: percentile(all, 99), Floor: percentile(floor, 99)},
		Row{Group: "turn", Name: "Turn p50, history inline (ms)", Value: median(inline), Floor: median(floor)},
		Row{Group: "turn", Name: "Turn p50, history by query (ms)", Value: median(byQuery), Floor: median(floor)},
		Row{Group: "turn", Name: "Turn phase p50: update to activity scheduled (ms)", Value: median(chatPhases.accept), Floor: median(floorPhases.accept)},
		Row{Group: "turn", Name: "Turn phase p50: activity (ms)", Value: median(chatPhases.activity), Floor: median(floorPhases.activity)},
		Row{Group: "turn", Name: "Turn phase p50: activity done to update done (ms)", Value: median(chatPhases.reply), Floor: median(floorPhases.reply)},
		Row{Group: "turn", Name: "Turn p50 vs local-activity floor (ms)", Value: median(all), Floor: median(floors[FloorLocalUpdate])},
		Row{Group: "turn", Name: "Turn p50 vs update-only floor (ms)", Value: median(all), Floor: median(floors[FloorImmediateUpdate])},
	)
	r.t.Note("turn: %d turns on one helper chat after %d warm-up turns (%d with the history inline, %d read by query), user texts of %d bytes; "+
		"each floor on a fresh workflow, same counts; phases from the event histories' timestamps (%d and %d turns)", sz.Turns, sz.Warmup, len(inline), len(byQuery), sz.TextBytes, len(chatPhases.activity), len(floorPhases.activity))
	return nil
}

// start measures starting a chat together with its first turn (Update-With-Start of
// SendMessage) against Update-With-Start of the floor's activity update, one at a time.
func (r *runner) start(ctx context.Context) error {
	e, sz := r.e, r.sz
	chats, err := timeEach(ctx, 1, sz.Starts, func(ctx context.Context, i int) error {
		_, err := e.startChatWithTurn(ctx, "start", userText(i, sz.TextBytes))
		return err
	})
	if err != nil {
		return err
	}
	floors, err := timeEach(ctx, 1, sz.Starts, func(ctx context.Context, i int) error {
		_, err := e.startFloorWithTurn(ctx, "start", userText(i, sz.TextBytes))
		return err
	})
	if err != nil {
		return err
	}
	r.t.Add(
		Row{Group: "start", Name: "Start + first reply p50 (ms)", Value: median(chats), Floor: median(floors), Target: AtMost(1.3)},
		Row{Group: "start", Name: "Start + first reply p99 (ms)", Value: percentile(chats, 99), Floor: percentile(floors, 99)},
	)
	r.t.Note("start: %d chats started with their first turn by Update-With-Start, one at a time", sz.Starts)
	return nil
}

// group measures a three-agent turn (sequential selection, one reply per agent), per
// agent reply, against a floor update running three activities in sequence, per activity.
func (r *runner) group(ctx context.Context) error {
	e, sz := r.e, r.sz
	id, err := e.startChat(ctx, "group", "helper", "writer", "reviewer")
	if err != nil {
		return err
	}
	chats, err := timeEach(ctx, sz.GroupWarmup, sz.GroupTurns, func(ctx context.Context, i int) error {
		_, err := e.send(ctx, id, agentchat.SendMessageInput{Text: userText(i, sz.TextBytes)}, 3)
		return err
	})
	if err != nil {
		return err
	}
	fid, err := e.startFloor(ctx, "group")
	if err != nil {
		return err
	}
	floors, err := timeEach(ctx, sz.GroupWarmup, sz.GroupTurns, func(ctx context.Context, i int) error {
		return e.floorTurn(ctx, fid, FloorActivityUpdate, FloorTurn{Text: userText(i, sz.TextBytes), Activities: 3})
	})
	if err != nil {
		return err
	}
	r.t.Add(
		Row{Group: "group", Name: "Group turn, 3 agents, p50 (ms)", Value: median(chats), Floor: median(floors)},
		Row{Group: "group", Name: "Group turn, per agent reply p50 (ms)", Value: median(scale(chats, 3)), Floor: median(scale(floors, 3))},
	)
	r.t.Note("group: %d turns of helper, writer and reviewer (sequential, one reply each) on one chat; floor: 3 activities per update", sz.GroupTurns)
	return nil
}
