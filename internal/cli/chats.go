package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/wire"
)

// waitNotice is how long send waits before saying that it still waits, and follow
// before saying that no event came (a variable for the tests).
var waitNotice = 20 * time.Second

// sendNoticeAfter is when send says it still waits: waitNotice, and never before a
// call that no worker takes has failed with ErrNoWorker (after workerWait, then the
// look-ups that say what it left, about a second), so the notice never comes with
// that error: 32 s with the default worker wait of 20 s.
func sendNoticeAfter(workerWait time.Duration) time.Duration {
	if workerWait <= 0 {
		workerWait = agentchat.WorkerWait
	}
	return max(waitNotice, workerWait*3/2+2*time.Second)
}

func startCmd(g *globals, s Streams) *cobra.Command {
	var (
		chatID   string
		ids      []string
		strat    strategyFlags
		asJSON   bool
		maxBytes int
		history  historyFlags
	)
	cmd := &cobra.Command{
		Use:   "start --agents ID[,ID...] [--chat ID]",
		Short: "Start a chat (one agent: a thread; several: a group chat)",
		Long: `Start a chat with --agents as its participants, in speaking order: one agent
makes a thread, several make a group chat that the strategies steer. The chat then
takes turns: send, chat.

` + strategyHelp + "\n\n" + historyFlagsHelp,
		Example: `  starter start --chat support-42 --agents helper
  starter start --chat slogan --agents writer,reviewer --termination regex --pattern APPROVED --termination-agents reviewer --max-iterations 6
  starter start --chat panel --agents writer,reviewer --selection llm --selector moderator --fallback sequential
  starter start --chat essay --agents writer,reviewer --termination llm --judge editor --max-iterations 8 --auto-reset
  starter start --chat routed --agents writer,reviewer --selection function --selection-function byTopic --termination function --termination-function done`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sel, term, err := strat.strategies()
			if err != nil {
				return err
			}
			window, budget, err := history.options(cmd)
			if err != nil {
				return err
			}
			c, err := g.connectChat(cmd.Context(), "")
			if err != nil {
				return err
			}
			defer c.Close()
			opts := agentchat.StartOptions{ChatID: chatID, Participants: ids,
				Selection: sel, Termination: term, MaxMessageBytes: maxBytes,
				History: window, HistoryBudget: budget}
			st, err := c.Start(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(s.Out, st)
			}
			fmt.Fprintf(s.Out, "started chat %s with %s\n", st.ChatID, strings.Join(ids, ", "))
			fmt.Fprintf(s.Out, "send a turn:  go run ./starter send --chat %s \"Hello\"\n", shellQuote(st.ChatID))
			return nil
		},
	}
	cmd.Flags().StringVar(&chatID, "chat", "", "chat id (the workflow id); default chat-<uuid>")
	cmd.Flags().StringSliceVar(&ids, "agents", nil, "participant agent ids, in speaking order (required)")
	jsonFlag(cmd, &asJSON, "print the chat's state as JSON")
	cmd.Flags().IntVar(&maxBytes, "max-message-bytes", 0, "largest user message the chat accepts (default 256 KiB)")
	history.add(cmd)
	strat.add(cmd)
	_ = cmd.MarkFlagRequired("agents")
	return cmd
}

func sendCmd(g *globals, s Streams) *cobra.Command {
	var (
		chatID, msgID, author string
		file                  string
		ids                   []string
		noWait, asJSON        bool
		noStream              bool
		strat                 strategyFlags
	)
	cmd := &cobra.Command{
		Use:   "send [--chat ID] TEXT... | --file F | -",
		Short: "Send one user turn and print the replies (without --chat: on a temporary thread)",
		Long: `Send one user turn (the SendMessage update) and print the agents' replies.

With --chat, the turn goes to that chat. Without it, the turn runs on a temporary
thread: a one-turn chat with --agents (default helper) that completes afterwards.
The replies are printed as the agents write them (the chat's event stream);
--no-stream (or --json) prints them once the whole turn is answered. --id makes the
turn idempotent: sending the same id again prints the first answer and calls no model. --no-wait sends it as the UserMessage signal instead.

The message is the arguments, joined with spaces; or the contents of --file F; or,
with the one argument - (or --file -), standard input, which may be longer than a
command line takes. A file or standard input loses one final line break and must be
UTF-8. A chat takes a message of up to 256 KiB unless it was started with
--max-message-bytes (at most 1 MiB), counted as the message's JSON: < > & and control
characters take six bytes each, and a longer message is refused whole.

A turn whose agent calls a tool that needs a person's approval (approval: true in
the worker's agent config) stops there: send prints the call with the approve
command that decides it, and the chat takes no other turn until it is decided.

A temporary thread takes the strategy flags of start (--selection, --termination,
...; see starter start --help); a chat keeps the strategies it was started with.`,
		Example: `  starter send "Hello, how are you?"
  starter send --chat support-42 --author Alice "My name is Alice"
  starter send --chat support-42 --id turn-7 "What's my name?"
  starter send --chat support-42 --file question.txt
  git diff | starter send --chat review-7 -`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := messageText(args, file, s.In)
			if err != nil {
				return err
			}
			if chatID != "" {
				for _, f := range append([]string{"agents"}, strategyFlagNames...) {
					if cmd.Flags().Changed(f) {
						return fmt.Errorf("--%s applies to a temporary thread only (without --chat): a chat keeps the agents and strategies it was started with", f)
					}
				}
			}
			if chatID == "" && noWait {
				return errors.New("--no-wait needs --chat: a temporary thread has nobody to read its reply")
			}
			sel, term, err := strat.strategies()
			if err != nil {
				return err
			}
			c, err := g.connectChat(cmd.Context(), chatID)
			if err != nil {
				return err
			}
			defer c.Close()
			if msgID == "" {
				msgID = uuid.NewString()
			}
			msg := agentchat.SendMessageInput{MessageID: msgID, Text: text, AuthorName: author}
			notice := time.AfterFunc(sendNoticeAfter(g.dial.WorkerWait), func() {
				if chatID == "" { // a new temporary thread each time: --id does not make a retry safe
					fmt.Fprintf(s.Err, "still waiting for the answer to turn %s (a long model call, or a stopped worker); Ctrl-C stops waiting\n", msgID)
					return
				}
				fmt.Fprintf(s.Err, "still waiting for the answer to turn %s (a long model call, turns queued ahead, or a stopped worker); Ctrl-C stops waiting, --id %s retries it safely\n", msgID, msgID)
			})
			defer notice.Stop()
			var (
				res   agentchat.TurnResult
				runID string
			)
			if !noWait && !noStream && !asJSON {
				return streamSend(cmd.Context(), c, s, chatID, msg, agentchat.RunOptions{Agents: ids, Selection: sel, Termination: term}, notice)
			}
			switch {
			case noWait:
				id, err := c.Post(cmd.Context(), chatID, msg)
				if err != nil {
					return err
				}
				fmt.Fprintf(s.Out, "posted turn %s to chat %s\n", id, chatID)
				noteNoWorker(cmd.Context(), c, s, chatID)
				return nil
			case chatID == "":
				runID = "run-" + uuid.NewString()
				res, err = c.Run(cmd.Context(), agentchat.RunOptions{ChatID: runID, Agents: ids, Selection: sel, Termination: term}, msg)
			default:
				res, err = c.Send(cmd.Context(), chatID, msg)
				if err != nil && cmd.Context().Err() != nil {
					return fmt.Errorf("%w (the turn may still be answered; to retry without a second turn: --id %s)", err, msgID)
				}
			}
			if err != nil {
				return sendAgainHint(err, chatID, msgID)
			}
			if asJSON {
				return printJSON(s.Out, res)
			}
			printTurn(s.Out, cmp.Or(chatID, runID), res, completeNote)
			switch {
			case runID != "" && len(res.AwaitingApproval) > 0:
				fmt.Fprintf(s.Out, "(temporary thread %s; its workflow completes once the turn is answered)\n", runID)
			case runID != "":
				fmt.Fprintf(s.Out, "(temporary thread %s; its workflow has completed)\n", runID)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&chatID, "chat", "", "chat id; omit for a temporary thread")
	fl.StringSliceVar(&ids, "agents", []string{"helper"}, "agents of the temporary thread (without --chat)")
	fl.StringVar(&msgID, "id", "", "messageId of the turn (default: a new UUID); the idempotency key")
	fl.StringVar(&author, "author", "", "author name of the user message")
	fl.StringVar(&file, "file", "", "read the message from this file (-: standard input) instead of the arguments")
	fl.BoolVar(&noWait, "no-wait", false, "send as a signal and return at once")
	fl.BoolVar(&noStream, "no-stream", false, "print the replies once the whole turn is answered, not as they are written")
	jsonFlag(cmd, &asJSON, "print the turn result as JSON")
	strat.add(cmd)
	return cmd
}

func chatCmd(g *globals, s Streams) *cobra.Command {
	var (
		chatID, author string
		ids            []string
		noStream       bool
	)
	cmd := &cobra.Command{
		Use:   "chat --chat ID [--agents ID,...]",
		Short: "Talk to a chat interactively, one line a turn",
		Long: `Talk to a chat, one line a turn; the agents' replies are printed as they are
written (--no-stream: once the turn is answered). Ctrl-C while a reply is written
stops that turn (as starter stop does: the partial reply stays, marked incomplete)
and returns to the prompt; Ctrl-C again while the stop is sent, or at the prompt,
ends the session.
With --agents, the chat is started first if it does not exist. A turn that waits for
the approval of a tool call prints the starter approve command that decides it; run
it in another shell, or decide it in the session with /approve or /reject.

A line that starts with a slash is a command (a line that starts with // is sent
as text, less one slash):
` + slashTable("  "),
		Example: `  starter chat --chat support-42 --agents helper --author Alice`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := g.connect(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			if len(ids) > 0 {
				if _, err := c.Start(ctx, agentchat.StartOptions{ChatID: chatID, Participants: ids}); err != nil &&
					!errors.Is(err, agentchat.ErrChatExists) {
					return err
				}
			}
			// The chat's own task queue, whatever --task-queue says (that is for new chats).
			if err := c.CheckChatWorker(ctx, chatID); err != nil {
				return err
			}
			st, err := c.State(ctx, chatID)
			if err != nil {
				return err
			}
			if st.Status != wire.StatusRunning && st.Status != wire.StatusStarting {
				return fmt.Errorf("chat %s is %s: it takes no more turns (read it with: go run ./starter history --chat %s)",
					chatID, st.Status, shellQuote(chatID))
			}
			interactive := stdinIsTerminal(s.In)
			prompt := func() {
				if interactive {
					fmt.Fprint(s.Out, "you> ")
				}
			}
			fmt.Fprintf(s.Out, "chat %s: type a message and press Enter; commands: %s\n", chatID, slashList())
			sc := bufio.NewScanner(s.In)
			sc.Buffer(make([]byte, 64<<10), 4<<20)
			readCtx, stopReading := context.WithCancel(ctx)
			defer stopReading()
			lines := readLines(readCtx, sc)
			for {
				prompt()
				var line string
				var more bool
				select {
				case <-ctx.Done(): // interrupted while waiting for a line
					if errors.Is(context.Cause(ctx), errInterrupted) {
						fmt.Fprintln(s.Out) // Ctrl-C at the prompt: the session ends, as /quit
						return nil
					}
					return ctx.Err()
				case line, more = <-lines:
				}
				if !more {
					return sc.Err()
				}
				line = strings.TrimSpace(line)
				switch line {
				case "":
					continue
				case "/quit", "/exit":
					return nil
				case "/state":
					st, err := c.State(ctx, chatID)
					if err != nil {
						return err
					}
					printState(s.Out, st)
					continue
				case "/help":
					fmt.Fprint(s.Out, "commands (anything else is sent as a turn; "+slashSendNote+"):\n"+slashTable("  "))
					continue
				case "/history":
					h, err := c.History(ctx, chatID, agentchat.HistoryInput{})
					if err != nil {
						return err
					}
					printHistory(s.Out, h)
					continue
				}
				if cmd, rest, _ := strings.Cut(line, " "); cmd == "/approve" || cmd == "/reject" {
					callID, reason, _ := strings.Cut(strings.TrimSpace(rest), " ")
					if callID == "" {
						fmt.Fprintf(s.Err, "usage: %s (%s)\n", slashUsage(cmd), waitingCalls(ctx, c, chatID))
						continue
					}
					res, err := c.Approve(ctx, chatID, agentchat.ApproveInput{CallID: callID, Approved: cmd == "/approve",
						Reason: strings.TrimSpace(reason), By: author})
					if err != nil {
						fmt.Fprintln(s.Err, "error:", oneLine(err.Error()))
						continue
					}
					if res.AlreadyDecided != nil {
						fmt.Fprintf(s.Out, "call %s was already %s; nothing changed\n", callID, res.AlreadyDecided)
					}
					printTurn(s.Out, sessionChat, res, completeNoteShort)
					continue
				}
				if strings.HasPrefix(line, "/") && !strings.HasPrefix(line, "//") {
					fmt.Fprintf(s.Err, "unknown command %s (commands: %s; %s)\n", line, slashList(), slashSendNote)
					continue
				}
				line = strings.TrimPrefix(line, "/")
				complete, err := sendLine(ctx, g.intr, c, s, chatID,
					agentchat.SendMessageInput{MessageID: uuid.NewString(), Text: line, AuthorName: author}, noStream)
				if err != nil || complete {
					return err
				}
			}
		},
	}
	chatFlag(cmd, &chatID)
	cmd.Flags().StringSliceVar(&ids, "agents", nil, "start the chat with these agents if it does not exist")
	cmd.Flags().StringVar(&author, "author", "", "author name of your messages")
	cmd.Flags().BoolVar(&noStream, "no-stream", false, "print the replies once each turn is answered, not as they are written")
	return cmd
}

// sendLine sends one turn of chat's session and prints its replies, as they are
// written or, with noStream, once answered. A Ctrl-C while it waits (intr) stops that
// turn (stopTurn) and the session goes on; a second one while the stop is sent ends
// it. It returns whether the turn completed the chat, and the error that ends the
// session (the chat closed, the session's context ended); other errors are printed.
func sendLine(ctx context.Context, intr *interrupter, c *agentchat.Client, s Streams, chatID string,
	msg agentchat.SendMessageInput, noStream bool) (complete bool, err error) {
	tctx, end := intr.turnContext(ctx)
	if noStream {
		var res agentchat.TurnResult
		if res, err = c.Send(tctx, chatID, msg); err == nil {
			printTurn(s.Out, sessionChat, res, completeNoteShort)
			complete = res.IsComplete
		}
	} else {
		p := &streamPrinter{w: s.Out, chatID: sessionChat, complete: completeNoteShort}
		complete, err = p.print(c.SendStream(tctx, chatID, msg))
	}
	interrupted := end()
	switch {
	case err == nil:
		return complete, nil
	case interrupted: // Ctrl-C while the reply is written: stop this turn
		stopTurn(ctx, c, s, chatID, msg.MessageID)
		return false, ctx.Err()
	case ctx.Err() != nil: // the session ends: stop its turn first
		stopTurn(context.WithoutCancel(ctx), c, s, chatID, msg.MessageID)
		return false, err
	case errors.Is(err, agentchat.ErrChatClosed):
		return false, err
	}
	hint := errorHint(err, wire.TaskQueue)
	var ce *agentchat.Error
	if errors.As(err, &ce) && ce.Type == wire.ErrTypeAwaitingApproval { // decided here, in the session
		hint = " (decide it here: /approve CALL, or /reject CALL [REASON]; " + waitingCalls(ctx, c, chatID) + ")"
	}
	fmt.Fprintln(s.Err, "error:", oneLine(err.Error())+turnLeftNothing(err)+hint)
	return false, nil
}

// readLines scans lines in the background, so that waiting for input can be
// interrupted; the channel closes at end of input (then sc.Err() is safe to read) or
// when ctx ends.
func readLines(ctx context.Context, sc *bufio.Scanner) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return lines
}

func stateCmd(g *globals, s Streams) *cobra.Command {
	var (
		chatID string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:     "state --chat ID",
		Short:   "Print a chat's state (the State query)",
		Example: `  starter state --chat support-42 --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.connectChat(cmd.Context(), chatID)
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.State(cmd.Context(), chatID)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(s.Out, st)
			}
			printState(s.Out, st)
			return nil
		},
	}
	chatFlag(cmd, &chatID)
	jsonFlag(cmd, &asJSON, "print the state as JSON (the State query's answer, wire.StateResult: history and historyBudget are the chat's window, page size, index fanout and run budget)")
	return cmd
}

func historyCmd(g *globals, s Streams) *cobra.Command {
	var (
		chatID        string
		asJSON        bool
		offset, limit int
		last          int
	)
	cmd := &cobra.Command{
		Use:   "history --chat ID [--last N | --offset N --limit N]",
		Short: "Print a chat's messages, oldest first (the History query)",
		Long: `Print a chat's messages, oldest first: all of them, the latest N (--last N), or a
range (--offset skips that many, --limit prints at most that many).

A long chat keeps its older messages in pages of the worker's message store (README,
"Chats of any length"): reading them needs that store, --message-store URL (by default
the SQLite file in $AGENTCHAT_DATA_DIR, the worker's when both share the data folder).
Without it, the latest messages still read; export reads through the worker.`,
		Example: `  starter history --chat support-42 --last 10
  starter history --chat support-42 --offset 10 --limit 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 || offset < 0 || last < 0 {
				return errors.New("--offset, --limit and --last must not be negative")
			}
			if cmd.Flags().Changed("last") && (cmd.Flags().Changed("offset") || cmd.Flags().Changed("limit")) {
				return errors.New("--last N reads the latest N messages: give it without --offset and --limit")
			}
			c, err := g.connectChat(cmd.Context(), chatID)
			if err != nil {
				return err
			}
			defer c.Close()
			page := agentchat.HistoryInput{Offset: offset, Limit: limit}
			if cmd.Flags().Changed("last") {
				if page, err = lastPage(cmd.Context(), c, chatID, last); err != nil {
					return err
				}
			}
			h, err := c.History(cmd.Context(), chatID, page)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(s.Out, h)
			}
			printHistory(s.Out, h)
			fmt.Fprintf(s.Out, "(%d of %d messages, from %d)\n", len(h.Messages), h.Total, h.Offset)
			return nil
		},
	}
	chatFlag(cmd, &chatID)
	jsonFlag(cmd, &asJSON, "print JSON (the query's payload)")
	cmd.Flags().IntVar(&offset, "offset", 0, "skip this many messages")
	cmd.Flags().IntVar(&limit, "limit", 0, "print at most this many (0: all)")
	cmd.Flags().IntVar(&last, "last", 0, "print the latest this many (instead of --offset and --limit)")
	return cmd
}

// lastPage is the History page of chat chatID's latest n messages, from the count it
// holds now (one more History query, past its end, which carries no messages).
func lastPage(ctx context.Context, c *agentchat.Client, chatID string, n int) (agentchat.HistoryInput, error) {
	if n == 0 {
		return agentchat.HistoryInput{}, errors.New("--last 0 prints nothing: give at least 1")
	}
	end, err := c.History(ctx, chatID, agentchat.HistoryInput{Offset: math.MaxInt32, Limit: 1})
	if err != nil {
		return agentchat.HistoryInput{}, err
	}
	return agentchat.HistoryInput{Offset: max(0, end.Total-n), Limit: n}, nil
}

// shellQuote quotes s for a shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sendAgainHint adds to the error of a turn that failed and left nothing in chat
// chatID (TurnFailed, StoreUnavailable) the command that sends it again. A turn the
// chat keeps (keptTurn) gets none: its messageId is not run again, and the chat's own
// message says to send a new one.
func sendAgainHint(err error, chatID, msgID string) error {
	var ce *agentchat.Error
	if chatID == "" || !errors.As(err, &ce) || keptTurn(err) {
		return err
	}
	switch ce.Type {
	case wire.ErrTypeStoreUnavailable:
		return fmt.Errorf("%w; once the message store is back: starter send --chat %s --id %s ...", err, chatID, msgID)
	case wire.ErrTypeTurnFailed:
		return fmt.Errorf("%w; the turn left nothing in the chat, to send it again: starter send --chat %s --id %s ...", err, chatID, msgID)
	}
	return err
}

// turnLeftNothing is what the interactive chat adds to the error of a turn that failed
// and left nothing in the chat: that typing it again retries it.
func turnLeftNothing(err error) string {
	var ce *agentchat.Error
	if errors.As(err, &ce) && (ce.Type == wire.ErrTypeTurnFailed || ce.Type == wire.ErrTypeStoreUnavailable) && !keptTurn(err) {
		return " (the turn left nothing in the chat; type it again to retry)"
	}
	return ""
}

// keptTurn reports whether err is a failed turn's that the chat keeps (wire.TurnError
// Kept: a turn resumed after an approval failed after its calls ran), which sending
// it again does not retry.
func keptTurn(err error) bool {
	var app *temporal.ApplicationError
	var d wire.TurnError
	return errors.As(err, &app) && app.HasDetails() && app.Details(&d) == nil && d.Kept
}

// noteNoWorker says on s.Err, after a turn was posted, when no worker takes the
// chat's workflow tasks: the signal is kept in the chat, and the turn is answered once
// a worker runs. It watches the workflow task the signal scheduled for up to
// postWatch: a live worker starts and completes it within milliseconds. A task still
// pending after that, scheduled or started (a worker that stopped as it polled takes
// a task and never completes it), is noted. (The server's list of a task queue's
// pollers cannot tell: a worker that stopped a moment ago stays listed for a minute
// or two.) It says nothing when it cannot tell.
func noteNoWorker(ctx context.Context, c *agentchat.Client, s Streams, chatID string) {
	ctx, cancel := context.WithTimeout(ctx, postWatch+time.Second)
	defer cancel()
	for deadline := time.Now().Add(postWatch); ; {
		d, err := c.Temporal().DescribeWorkflowExecution(ctx, chatID, "")
		if err != nil {
			return
		}
		wt := d.GetPendingWorkflowTask()
		if wt == nil {
			return // done, or none waits
		}
		if time.Now().After(deadline) || time.Since(wt.GetScheduledTime().AsTime()) > postWatch {
			fmt.Fprintf(s.Err, "note: no worker has run chat %s's workflow task for %s (task queue %s): "+
				"the turn waits in the chat and is answered when a worker runs (start one: go run ./worker --offline --task-queue %s)\n",
				chatID, time.Since(wt.GetScheduledTime().AsTime()).Round(time.Second), d.GetWorkflowExecutionInfo().GetTaskQueue(),
				d.GetWorkflowExecutionInfo().GetTaskQueue())
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// postWatch is how long noteNoWorker waits for a worker to take a posted turn's task.
const postWatch = 2 * time.Second
