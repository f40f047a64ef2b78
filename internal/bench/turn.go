package bench

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/workflows"
)

// turn measures SendMessage round trips on one one-agent chat against the three floor
// updates, each on a workflow of its own, the four interleaved turn by turn. Turns are
// also split by the size of the history the model call is sent (the whole history, in
// the Chat Completions request), at workflows.InlineHistoryBytes (the most a
// first call carries whole).
func (r *runner) turn(ctx context.Context) error {
	e, sz := r.e, r.sz
	id, err := e.startChat(ctx, "turn", "helper")
	if err != nil {
		return err
	}
	floorIDs := map[string]string{}
	updates := []string{FloorActivityUpdate, FloorLocalUpdate, FloorImmediateUpdate}
	for _, update := range updates {
		if floorIDs[update], err = e.startFloor(ctx, "turn"); err != nil {
			return err
		}
	}
	var short, long []time.Duration
	history := 0 // the chat's history in chat.Message.Size bytes, as the workflow counts it
	chatTurn := func(ctx context.Context, i int) error {
		msg := agentchat.SendMessageInput{MessageID: uuid.NewString(), Text: userText(i, sz.TextBytes)}
		history += chat.TextMessage(msg.MessageID, chat.RoleUser, "", msg.Text).Size()
		start := time.Now()
		res, err := e.send(ctx, id, msg, 1)
		if err != nil {
			return err
		}
		if d := time.Since(start); i >= sz.Warmup && history <= workflows.InlineHistoryBytes {
			short = append(short, d)
		} else if i >= sz.Warmup {
			long = append(long, d)
		}
		for _, m := range res.Messages {
			history += m.Size()
		}
		return nil
	}
	rounds := []func(context.Context, int) error{chatTurn}
	for _, update := range updates {
		rounds = append(rounds, func(ctx context.Context, i int) error {
			return e.floorTurn(ctx, floorIDs[update], update, FloorTurn{Text: userText(i, sz.TextBytes)})
		})
	}
	stop, err := r.startProfile("turn", "agentchat-and-floor")
	if err != nil {
		return err
	}
	defer func() { _ = stop() }()
	times, err := timeRounds(ctx, sz.Warmup, sz.Turns, rounds...)
	if err != nil {
		return err
	}
	if err := stop(); err != nil {
		return err
	}
	all, floor := times[0], times[1]
	floors := map[string][]time.Duration{}
	for i, update := range updates {
		floors[update] = times[i+1]
	}
	chatPhases, err := e.phases(ctx, id, sz.Warmup)
	if err != nil {
		return err
	}
	floorPhases, err := e.phases(ctx, floorIDs[FloorActivityUpdate], sz.Warmup)
	if err != nil {
		return err
	}
	r.t.Add(
		Row{Group: "turn", Name: "Turn p50 (ms)", Value: median(all), Floor: median(floor), Target: AtMost(1.2)},
		Row{Group: "turn", Name: "Turn p99 (ms)", Value: percentile(all, 99), Floor: percentile(floor, 99)},
		Row{Group: "turn", Name: "Turn p50, history up to 16 KB (ms)", Value: median(short), Floor: median(floor)},
		Row{Group: "turn", Name: "Turn p50, history over 16 KB (ms)", Value: median(long), Floor: median(floor)},
		Row{Group: "turn", Name: "Turn phase p50: update to activity scheduled (ms)", Value: median(chatPhases.accept), Floor: median(floorPhases.accept)},
		Row{Group: "turn", Name: "Turn phase p50: activity (ms)", Value: median(chatPhases.activity), Floor: median(floorPhases.activity)},
		Row{Group: "turn", Name: "Turn phase p50: activity scheduled to started (ms)", Value: median(chatPhases.dispatch), Floor: median(floorPhases.dispatch)},
		Row{Group: "turn", Name: "Turn phase p50: activity started to completed (ms)", Value: median(chatPhases.run), Floor: median(floorPhases.run)},
		Row{Group: "turn", Name: "Turn phase p50: activity done to update done (ms)", Value: median(chatPhases.reply), Floor: median(floorPhases.reply)},
		Row{Group: "turn", Name: "Turn p50 vs local-activity floor (ms)", Value: median(all), Floor: median(floors[FloorLocalUpdate])},
		Row{Group: "turn", Name: "Turn p50 vs update-only floor (ms)", Value: median(all), Floor: median(floors[FloorImmediateUpdate])},
	)
	r.t.Note("turn: %d turns on one helper chat after %d warm-up turns (%d with a history up to 16 KB, %d over, up to %d KB), user texts of %d bytes; "+
		"each floor on a workflow of its own, its turns interleaved with the chat's; phases from the event histories' timestamps (%d and %d turns)",
		sz.Turns, sz.Warmup, len(short), len(long), history>>10, sz.TextBytes, len(chatPhases.activity), len(floorPhases.activity))
	return nil
}

// start measures starting a chat together with its first turn (Update-With-Start of
// SendMessage) against Update-With-Start of the floor's activity update, one at a time.
func (r *runner) start(ctx context.Context) error {
	e, sz := r.e, r.sz
	times, err := timeRounds(ctx, 1, sz.Starts, func(ctx context.Context, i int) error {
		_, err := e.startChatWithTurn(ctx, "start", userText(i, sz.TextBytes))
		return err
	}, func(ctx context.Context, i int) error {
		_, err := e.startFloorWithTurn(ctx, "start", userText(i, sz.TextBytes))
		return err
	})
	if err != nil {
		return err
	}
	chats, floors := times[0], times[1]
	r.t.Add(
		Row{Group: "start", Name: "Start + first reply p50 (ms)", Value: median(chats), Floor: median(floors), Target: AtMost(1.3)},
		Row{Group: "start", Name: "Start + first reply p99 (ms)", Value: percentile(chats, 99), Floor: percentile(floors, 99)},
	)
	r.t.Note("start: %d chats started with their first turn by Update-With-Start, one at a time, interleaved with the floor's", sz.Starts)
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
	fid, err := e.startFloor(ctx, "group")
	if err != nil {
		return err
	}
	times, err := timeRounds(ctx, sz.GroupWarmup, sz.GroupTurns, func(ctx context.Context, i int) error {
		_, err := e.send(ctx, id, agentchat.SendMessageInput{Text: userText(i, sz.TextBytes)}, 3)
		return err
	}, func(ctx context.Context, i int) error {
		return e.floorTurn(ctx, fid, FloorActivityUpdate, FloorTurn{Text: userText(i, sz.TextBytes), Activities: 3})
	})
	if err != nil {
		return err
	}
	chats, floors := times[0], times[1]
	r.t.Add(
		Row{Group: "group", Name: "Group turn, 3 agents, p50 (ms)", Value: median(chats), Floor: median(floors)},
		Row{Group: "group", Name: "Group turn, per agent reply p50 (ms)", Value: median(scale(chats, 3)), Floor: median(scale(floors, 3))},
	)
	r.t.Note("group: %d turns of helper, writer and reviewer (sequential, one reply each) on one chat; floor: 3 activities per update; interleaved", sz.GroupTurns)
	return nil
}
