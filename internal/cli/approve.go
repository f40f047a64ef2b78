package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/wire"
)

func approveCmd(g *globals, s Streams) *cobra.Command {
	var (
		chatID string
		in     wire.ApproveInput
		reject bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "approve --chat ID --call CALLID [--reject] [--reason TEXT] [--by NAME]",
		Short: "Approve or reject a tool call a chat waits for, and print the resumed turn",
		Long: `Decide a tool call that waits for a person (the Approve update). A tool with
approval: true in the worker's agent config (the example's refund) stops its turn
until someone decides; send, chat and state show such calls with their ids.

Approved, the call runs. Rejected (--reject), it does not run: the agent's model
reads the error result "rejected by a person: REASON" and answers on. When this was
the last call the turn waited for, the turn resumes and its messages are printed as
send prints them; while other calls of the turn still wait, approve says which.

A call's first decision stands. The same decision again (a retry) changes nothing:
approve says the call was decided already and prints what its turn did. A
different decision fails with one line, "already decided: " and the earlier
decision, as does a call the chat does not wait for (unknown).`,
		Example: `  starter approve --chat support-42 --call call_refund
  starter approve --chat support-42 --call call_refund --reject --reason "refunds over $50 need a manager" --by Bob
  starter state --chat support-42    # lists the pending approvals`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.connectChat(cmd.Context(), chatID)
			if err != nil {
				return err
			}
			defer c.Close()
			in.Approved = !reject
			res, err := c.Approve(cmd.Context(), chatID, in)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(s.Out, res)
			}
			decided := "approved"
			if reject {
				decided = "rejected"
			}
			if res.AlreadyDecided != nil {
				fmt.Fprintf(s.Out, "call %s was already %s; nothing changed\n", in.CallID, res.AlreadyDecided)
				if len(res.Messages) == 0 && len(res.AwaitingApproval) == 0 {
					return nil
				}
			}
			switch {
			case len(res.Messages) == 0 && len(res.AwaitingApproval) > 0 && res.AlreadyDecided != nil:
				fmt.Fprintf(s.Out, "turn %s still waits for %s:\n", res.MessageID, plural(len(res.AwaitingApproval), "more call"))
				printAwaiting(s.Out, chatID, res.AwaitingApproval)
			case len(res.Messages) == 0 && len(res.AwaitingApproval) > 0:
				// The turn did not resume: other calls of it still wait.
				fmt.Fprintf(s.Out, "%s call %s; turn %s still waits for %s:\n", decided, in.CallID, res.MessageID,
					plural(len(res.AwaitingApproval), "more call"))
				printAwaiting(s.Out, chatID, res.AwaitingApproval)
			case len(res.Messages) == 0:
				fmt.Fprintf(s.Out, "%s call %s\n", decided, in.CallID)
			default:
				printTurn(s.Out, chatID, res, completeNote)
			}
			return nil
		},
	}
	chatFlag(cmd, &chatID)
	fl := cmd.Flags()
	fl.StringVar(&in.CallID, "call", "", "id of the tool call to decide, as send or state print it (required)")
	fl.BoolVar(&reject, "reject", false, "reject the call: it does not run, and the model reads the rejection")
	fl.StringVar(&in.Reason, "reason", "", "why; the model reads it with a rejection")
	fl.StringVar(&in.By, "by", "", "who decided, for the record")
	jsonFlag(cmd, &asJSON, "print the turn result as JSON")
	_ = cmd.MarkFlagRequired("call")
	return cmd
}

// waitingCalls says which tool calls chat chatID waits for a person to decide, for a
// usage line: "calls waiting: c1 (search), c2 (deploy)", or that none waits, or why
// that could not be read.
func waitingCalls(ctx context.Context, c *agentchat.Client, chatID string) string {
	st, err := c.State(ctx, chatID)
	if err != nil {
		return "the calls that wait could not be read: " + oneLine(err.Error())
	}
	if len(st.PendingApprovals) == 0 {
		return "no tool call waits for approval now"
	}
	ws := make([]string, len(st.PendingApprovals))
	for i, p := range st.PendingApprovals {
		ws[i] = fmt.Sprintf("%s (%s)", p.CallID, p.Tool)
	}
	return "calls waiting: " + strings.Join(ws, ", ")
}
