package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// streamPrinter writes a turn's events as they come: a reply's text as it is written,
// "Author: " before its first delta, then its tool calls and the tool results as
// printMessage does; for a turn that ends complete, the complete note, and the calls
// it waits for. What it prints for a finished turn is what printTurn prints.
type streamPrinter struct {
	w        io.Writer
	chatID   string
	complete string
	// author is the author of reply message, written before its first delta; open: a
	// reply's text is being written (its line not ended yet).
	author, message string
	open            bool
	// names gives an agent's name for a reply whose agentStarted was not seen (follow
	// from an offset mid-reply); nil: its id.
	names    func(agentID string) string
	awaiting []wire.PendingApproval
	// events: print every event's type and offset too (follow).
	events bool
	// on is the chat whose stream the events are in, when Follow went on in a
	// migration's target (Event.ChatID); "": the chat followed.
	on string
}

// print writes events until the sequence ends; it returns the first error, and
// whether the last turn completed the chat.
func (p *streamPrinter) print(seq iter.Seq2[agentchat.Event, error]) (complete bool, err error) {
	for ev, err := range seq {
		if err != nil {
			p.endLine()
			return false, err
		}
		if p.take(ev) {
			complete = true
		}
	}
	p.endLine()
	return complete, nil
}

// take writes one event; it reports whether the event ended a turn that completed
// the chat.
func (p *streamPrinter) take(ev agentchat.Event) bool {
	if p.events && ev.ChatID != p.on {
		p.endLine()
		fmt.Fprintf(p.w, "(the chat migrated: following chat %s, whose offsets are its own)\n", ev.ChatID)
		p.on = ev.ChatID
	}
	switch ev.Type {
	case wire.EventTurnAccepted:
		p.awaiting = nil
		if p.events {
			fmt.Fprintf(p.w, "[%d] turn %s accepted (queue position %d)%s\n", ev.Offset, ev.TurnID, ev.Position, userLine(ev))
		}
	case wire.EventAgentStarted:
		p.endLine()
		if p.events {
			fmt.Fprintf(p.w, "[%d] %s starts %s (attempt %d)\n", ev.Offset, ev.AgentID, ev.MessageID, ev.Attempt)
		}
		p.author, p.message = cmpOr(ev.Author, ev.AgentID), ev.MessageID
	case wire.EventTextDelta:
		if ev.MessageID != p.message { // its agentStarted came before the offset followed from
			p.endLine()
			p.author, p.message = ev.AgentID, ev.MessageID
			if p.names != nil {
				p.author = cmpOr(p.names(ev.AgentID), ev.AgentID)
			}
		}
		if !p.open {
			fmt.Fprintf(p.w, "%s: ", p.author)
			p.open = true
		}
		fmt.Fprint(p.w, ev.Text)
	case wire.EventRetry:
		p.endLine()
		fmt.Fprintf(p.w, "(attempt %d of %s was abandoned; its reply starts again)\n", ev.Attempt, ev.MessageID)
	case wire.EventMessageDone:
		p.messageDone(*ev.Message)
	case wire.EventApprovalNeeded:
		call := wire.PendingApproval{CallID: ev.Call.CallID, Tool: ev.Call.Name,
			Arguments: ev.Call.Arguments, AgentID: ev.AgentID, TurnID: ev.TurnID}
		if p.events { // following: a waiting turn has no turnDone to print it at
			p.endLine()
			printAwaiting(p.w, cmp.Or(p.on, p.chatID), []wire.PendingApproval{call}) // where the call waits
			break
		}
		p.awaiting = append(p.awaiting, call)
	case wire.EventTurnDone:
		p.endLine()
		if p.events { // the event first, then what it means
			fmt.Fprintf(p.w, "[%d] turn %s done\n", ev.Offset, ev.TurnID)
		}
		if ev.IsComplete {
			fmt.Fprintln(p.w, p.complete)
		}
		printAwaiting(p.w, p.chatID, p.awaiting)
		if ev.Replayed {
			fmt.Fprintln(p.w, replayedNote(ev.TurnID))
		}
		return ev.IsComplete
	case wire.EventTurnFailed:
		p.endLine()
		if p.events {
			fmt.Fprintf(p.w, "[%d] turn %s failed: %s\n", ev.Offset, ev.TurnID, ev.Error.Message)
		}
	case wire.EventTurnCancelled:
		p.endLine()
		fmt.Fprintf(p.w, "(turn %s was stopped)\n", ev.TurnID)
	}
	return false
}

// messageDone ends a reply's text line and writes the rest of the message (tool calls,
// results) as printMessage does.
func (p *streamPrinter) messageDone(m chat.Message) {
	if m.Role != chat.RoleAssistant || (!p.open && m.Text() != "") {
		p.endLine()
		printMessage(p.w, m)
		return
	}
	p.endLine()
	rest := m
	rest.Contents = nil
	for _, c := range m.Contents {
		if c.Type != chat.ContentText {
			rest.Contents = append(rest.Contents, c)
		}
	}
	printMessage(p.w, rest)
}

func (p *streamPrinter) endLine() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

// userShown is how much of a user's text follow's turn-accepted line shows, in runes.
const userShown = 200

// userLine is what follow's turn-accepted line adds for the user's text: ": Alice:
// text", on one line and cut to userShown runes; "" for an event without text (a
// turn of images only, or a chat that recorded none).
func userLine(ev agentchat.Event) string {
	if ev.Text == "" {
		return ""
	}
	return ": " + cmpOr(ev.Author, string(chat.RoleUser)) + ": " + truncate(ev.Text, userShown)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// streamSend is send without --no-stream: the turn's events printed as they come, on
// chat chatID, or on a temporary thread of run (chatID "").
func streamSend(ctx context.Context, c *agentchat.Client, s Streams, chatID string, msg agentchat.SendMessageInput,
	run agentchat.RunOptions, notice *time.Timer) error {
	var seq iter.Seq2[agentchat.Event, error]
	if chatID == "" {
		run.ChatID = "run-" + uuid.NewString()
		seq = c.RunStream(ctx, run, msg)
	} else {
		seq = c.SendStream(ctx, chatID, msg)
	}
	p := &streamPrinter{w: s.Out, chatID: cmp.Or(chatID, run.ChatID), complete: completeNote}
	_, err := p.print(func(yield func(agentchat.Event, error) bool) {
		for ev, err := range seq {
			if err != nil || (ev.Type != wire.EventTurnAccepted && ev.Type != wire.EventAgentStarted) {
				notice.Stop() // an answer is being printed: no "still waiting" notice
			}
			if !yield(ev, err) {
				return
			}
		}
	})
	switch {
	case err != nil && chatID != "" && ctx.Err() != nil:
		return fmt.Errorf("%w (the turn may still be answered; to retry without a second turn: --id %s)", err, msg.MessageID)
	case err != nil:
		return sendAgainHint(err, chatID, msg.MessageID)
	case chatID == "" && len(p.awaiting) > 0:
		fmt.Fprintf(s.Out, "(temporary thread %s; its workflow completes once the turn is answered)\n", run.ChatID)
	case chatID == "":
		fmt.Fprintf(s.Out, "(temporary thread %s; its workflow has completed)\n", run.ChatID)
	}
	return nil
}

func followCmd(g *globals, s Streams) *cobra.Command {
	var (
		chatID string
		from   int64
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "follow --chat ID [--from N]",
		Short: "Print a chat's live events (its Workflow Streams event stream)",
		Long: `Print a chat's events as they happen: turns accepted, replies as they are written,
tool calls and results, calls that wait for approval (with the command that decides
them), turns done or failed, each with its offset in brackets.
--from N resumes after a disconnect at offset N (the offset after the last one seen;
a reply resumed mid-way is printed with its author); 0 starts from the oldest event
the chat keeps. --json prints one event a line, as
the stream carries it (README, "Streaming"). Follows the chat across continue-as-new,
until it closes or Ctrl-C. A closed chat prints the events it holds from --from on,
then follow ends (at once for an offset past its end). A chat that migrates is
followed into its target when that is in the same namespace (a new chat id: its
events then carry "chatId", their offsets the target's); to another namespace or
cluster, follow ends with an error that says how to follow it there.`,
		Example: `  starter follow --chat support-42
  starter follow --chat support-42 --from 120 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := g.connectChat(ctx, chatID)
			if err != nil {
				return err
			}
			defer c.Close()
			// No event at all for a while: say what may be wrong, once (an idle chat
			// followed past its end, or a worker that stopped lately, which the server
			// still lists for a few minutes).
			notice := time.AfterFunc(waitNotice, func() {
				fmt.Fprintf(s.Err, "no events yet from chat %s: it may be idle (following waits for its next turn), or its worker may have stopped (start one: go run ./worker --offline --task-queue %s); Ctrl-C stops following\n",
					chatID, shellQuote(chatTaskQueue(ctx, c, chatID, g.dial.TaskQueue)))
			})
			defer notice.Stop()
			seq := heard(c.Follow(ctx, chatID, from), notice)
			if asJSON {
				enc := json.NewEncoder(s.Out)
				for ev, err := range seq {
					if err != nil {
						return stoppedFollowing(ctx, err)
					}
					if err := enc.Encode(ev); err != nil {
						return err
					}
				}
				return nil
			}
			p := &streamPrinter{w: s.Out, chatID: chatID, complete: completeNote, events: true,
				names: participantNames(ctx, c, chatID)}
			_, err = p.print(seq)
			return stoppedFollowing(ctx, err)
		},
	}
	chatFlag(cmd, &chatID)
	cmd.Flags().Int64Var(&from, "from", 0, "offset to start at (0: the oldest the chat keeps)")
	jsonFlag(cmd, &asJSON, "print each event as a line of JSON")
	return cmd
}

// chatTaskQueue returns the task queue chat chatID runs on, as the server describes
// it; fallback when it cannot say within a few seconds.
func chatTaskQueue(ctx context.Context, c *agentchat.Client, chatID, fallback string) string {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := c.Temporal().DescribeWorkflowExecution(dctx, chatID, "")
	if q := d.GetExecutionConfig().GetTaskQueue().GetName(); err == nil && q != "" {
		return q
	}
	return fallback
}

// heard is seq that stops notice at its first event or error.
func heard(seq iter.Seq2[agentchat.Event, error], notice *time.Timer) iter.Seq2[agentchat.Event, error] {
	return func(yield func(agentchat.Event, error) bool) {
		for ev, err := range seq {
			notice.Stop()
			if !yield(ev, err) {
				return
			}
		}
	}
}

// participantNames returns the names of chat chatID's participants by agent id, read
// by the State query at the first call ("" for one it does not know, or when the
// query fails).
func participantNames(ctx context.Context, c *agentchat.Client, chatID string) func(string) string {
	var names map[string]string
	return func(agentID string) string {
		if names == nil {
			names = map[string]string{}
			if st, err := c.State(ctx, chatID); err == nil {
				for _, pi := range st.Participants {
					names[pi.ID] = pi.Name
				}
			}
		}
		return names[agentID]
	}
}

// stopTimeout bounds the CancelTurn that Ctrl-C in chat sends.
const stopTimeout = 10 * time.Second

// stopTurn stops turn turnID of chat chatID (in flight or queued) after an interrupt,
// within stopTimeout of ctx.
func stopTurn(ctx context.Context, c *agentchat.Client, s Streams, chatID, turnID string) {
	ctx, cancel := context.WithTimeout(ctx, stopTimeout)
	defer cancel()
	res, err := c.CancelTurn(ctx, chatID, agentchat.CancelTurnInput{MessageID: turnID})
	switch {
	case err != nil:
		fmt.Fprintln(s.Err, "could not stop the turn:", oneLine(err.Error()))
	case res.Queued:
		fmt.Fprintf(s.Out, "(queued turn %s cancelled)\n", res.MessageID)
	default:
		fmt.Fprintf(s.Out, "(turn %s stopped)\n", res.MessageID)
	}
}

func stopCmd(g *globals, s Streams) *cobra.Command {
	var (
		chatID, msgID string
		drop          bool
	)
	cmd := &cobra.Command{
		Use:   "stop --chat ID [--id MESSAGE_ID] [--drop]",
		Short: "Stop the turn in flight, or a queued turn (the CancelTurn update)",
		Long: `Stop a turn of a chat. Without --id, the turn in flight: its model call and tools are
cancelled, the partial reply stays as the agent's message marked incomplete (--drop
drops it), every tool call gets a result, and the chat takes its next turn. With
--id, that turn: in flight, or queued (it leaves the queue and never runs; its
sender gets TurnCancelled and may send it again). A chat with no turn in flight has
nothing to stop: stop says so and exits 0; an --id that is neither in flight nor
queued is an error.`,
		Example: `  starter stop --chat support-42
  starter stop --chat support-42 --id turn-9`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.connectChat(cmd.Context(), chatID)
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.CancelTurn(cmd.Context(), chatID, agentchat.CancelTurnInput{MessageID: msgID, DropPartial: drop})
			var ce *agentchat.Error
			if msgID == "" && errors.As(err, &ce) && ce.Type == wire.ErrTypeInvalidInput && ce.Message == wire.NoTurnInFlight {
				// Nothing to stop: the chat is idle, as the user wants it (the chat's words).
				fmt.Fprintf(s.Out, "chat %s: no turn is in flight; nothing to stop\n", chatID)
				return nil
			}
			if err != nil {
				return err
			}
			if res.Queued {
				fmt.Fprintf(s.Out, "cancelled queued turn %s of chat %s (it never ran)\n", res.MessageID, chatID)
			} else {
				fmt.Fprintf(s.Out, "stopped turn %s of chat %s\n", res.MessageID, chatID)
			}
			return nil
		},
	}
	chatFlag(cmd, &chatID)
	cmd.Flags().StringVar(&msgID, "id", "", "messageId of the turn (default: the turn in flight)")
	cmd.Flags().BoolVar(&drop, "drop", false, "drop the partial reply instead of keeping it marked incomplete")
	return cmd
}

// stoppedFollowing is follow's error: none when the user stopped following (Ctrl-C
// cancels the command's context), which is how following ends; --timeout running out
// stays an error, as for every command; a chat that migrated where the command does
// not reach says how to follow it there.
func stoppedFollowing(ctx context.Context, err error) error {
	var moved *agentchat.MigratedError
	switch {
	case err != nil && errors.Is(ctx.Err(), context.Canceled):
		return nil
	case errors.As(err, &moved):
		return fmt.Errorf("%w (follow it there: go run ./starter follow%s --chat %s)",
			err, placeFlags(moved.Target), shellQuote(moved.Target.ChatID))
	}
	return err
}
