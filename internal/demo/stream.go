package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/wire"
)

// streamed shows a reply printed as it is written (the chat's Workflow Streams event
// stream), then a turn stopped half-way (CancelTurn): its partial reply stays, marked
// incomplete.
func (d *run) streamed(ctx context.Context) error {
	id := "story-" + d.suffix
	if !d.storyteller {
		return nil // a registry of the user's own, without the storyteller
	}
	d.p.title("2b. Streaming: a reply as it is written, then a turn stopped half-way (" + id + ")")
	if _, err := d.c.Start(ctx, agentchat.StartOptions{ChatID: id, Participants: []string{"storyteller"}}); err != nil {
		return err
	}
	d.storyID = id
	d.p.line("you: Tell me a story")
	if _, err := d.stream(ctx, id, "story-1", "Tell me a story", -1); err != nil {
		return err
	}
	d.p.line("you: Another one, a long one (stopped once 12 deltas are in: starter stop --chat %s)", id)
	n, err := d.stream(ctx, id, "story-2", "Another one, a long one", 12)
	if err != nil {
		return err
	}
	h, err := d.c.History(ctx, id, agentchat.HistoryInput{})
	if err != nil {
		return err
	}
	last := h.Messages[len(h.Messages)-1]
	d.p.note("the partial reply stays in the history, marked incomplete (%v): %d text deltas, those that came before the stop took effect; the chat takes the next turn", last.Incomplete, n)
	d.p.note("follow it from any client: starter follow --chat %s, or @temporalio/workflow-streams (README, Streaming)", id)
	return nil
}

// stream sends a turn and prints its reply as it is written; after stopAfter text deltas
// (-1: never) it stops the turn. It returns the number of deltas printed.
func (d *run) stream(ctx context.Context, chatID, msgID, text string, stopAfter int) (int, error) {
	deltas := 0
	stopped := make(chan error, 1)
	for ev, err := range d.c.SendStream(ctx, chatID, agentchat.SendMessageInput{MessageID: msgID, Text: text, AuthorName: "Alice"}) {
		if err != nil {
			return deltas, err
		}
		switch ev.Type {
		case wire.EventAgentStarted:
			fmt.Fprintf(d.p.w, "%s: ", ev.Author)
		case wire.EventTextDelta:
			fmt.Fprint(d.p.w, ev.Text)
			if deltas++; deltas == stopAfter {
				go func() {
					_, err := d.c.CancelTurn(ctx, chatID, agentchat.CancelTurnInput{})
					stopped <- err
				}()
			}
		case wire.EventMessageDone:
			fmt.Fprintln(d.p.w)
		case wire.EventTurnCancelled:
			d.p.note("turn %s stopped", ev.TurnID)
		}
	}
	if deltas >= stopAfter && stopAfter > 0 {
		return deltas, <-stopped
	}
	return deltas, nil
}

// storyteller is the agent of the streaming step, added to the example registry: the
// offline model streams its replies a word every 40 ms (chunkDelay), so that the demo
// shows a reply as it is written and a turn stopped half-way. The third reply answers
// the "One more story, please" turn the demo's last lines suggest.
const storyteller = `
  - id: storyteller
    name: Storyteller
    kind: chat_completion
    model: ${OPENAI_MODEL:-gpt-4o-mini}
    instructions: You tell short stories.
    offline:
      chunkDelay: 40ms
      replies:
        - text: "Once upon a time a small lighthouse kept watch over a quiet harbour, and every night it counted the boats coming home."
        - text: "Long ago, in a city of bridges, there lived a clockmaker who repaired every clock but his own, because he liked to wonder what time it was; one winter the river froze, the bells fell silent, and the whole city came to his door with stopped clocks, each one telling a different story of the hour it had stopped at."
        - text: "A fox once borrowed the moon's reflection from a pond to light its way home, and returned it before dawn, a little brighter than before."
`

// writeDemoAgents writes the example registry with the storyteller to dir and returns
// its path: the demo's registry when no other is given.
func writeDemoAgents(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "demo-agents.yaml")
	body := strings.TrimRight(string(agents.ExampleConfig), "\n") + "\n" + strings.TrimLeft(storyteller, "\n")
	return path, os.WriteFile(path, []byte(body), 0o644)
}
