package cli

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/wire"
)

func listCmd(g *globals, s Streams) *cobra.Command {
	var (
		opts   agentchat.ListOptions
		token  string
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list [--status S] [--agent ID] [--limit N] [--page-token T]",
		Short: "List the chats of the task queue: id, status, agents, turns, last activity",
		Long: `List the chats (AgentChat workflows) of --task-queue in the namespace, open chats
first, newest first, from Temporal's visibility, which lags a moment behind.
--status keeps one status (running, completed, failed, migrating, migrated, starting;
or terminated, timedOut, canceled), --agent the chats with that participant. At most
--limit chats are printed; when a next page holds chats, the last line is the command
that lists it (the same flags and its --page-token).

Agents, turns and the last activity are the chats' search attributes, which the
worker registers at start where the server lets it. Without them, list shows what
visibility has (id, status, start or close time), says how to add them, and refuses
--agent.`,
		Example: `  starter list
  starter list --status running --agent helper --limit 10
  starter list --json --page-token CAESBAgB...`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > agentchat.MaxListPageSize {
				return fmt.Errorf("--limit must be within 1..%d", agentchat.MaxListPageSize)
			}
			if token != "" {
				b, err := base64.StdEncoding.DecodeString(token)
				if err != nil {
					return fmt.Errorf("--page-token %q is not a token that list printed: %w", token, err)
				}
				opts.PageToken = b
			}
			opts.PageSize = limit
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.List(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(s.Out, res)
			}
			printChats(s, res, goOn(cmd))
			if len(res.Chats) == 0 && opts.PageToken == nil {
				fmt.Fprintf(s.Err, "(list looks in task queue %q of namespace %q; chats of another task queue: --task-queue Q)\n",
					cmpOr(opts.TaskQueue, cmpOr(g.dial.TaskQueue, wire.TaskQueue)), c.Namespace())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Status, "status", "", "only chats of this status")
	f.StringVar(&opts.Agent, "agent", "", "only chats with this participant (agent id)")
	f.IntVar(&limit, "limit", 20, "print at most this many chats (one page)")
	f.StringVar(&token, "page-token", "", "go on from where a list stopped (its last line gives the token)")
	jsonFlag(cmd, &asJSON, `print the page as JSON: {"chats": [...], "nextPageToken": ...}`)
	return cmd
}

// goOn is the command line that lists the next page: this one's flags as given, but
// for --page-token and --json, which the caller appends or leaves out.
func goOn(cmd *cobra.Command) string {
	var global, local []string
	add := func(to *[]string) func(f *pflag.Flag) {
		return func(f *pflag.Flag) {
			if f.Changed && f.Name != "page-token" && f.Name != "json" {
				*to = append(*to, "--"+f.Name, shellQuote(f.Value.String()))
			}
		}
	}
	cmd.InheritedFlags().VisitAll(add(&global))
	cmd.LocalFlags().VisitAll(add(&local))
	return strings.Join(slices.Concat([]string{"go run ./starter"}, global, []string{"list"}, local), " ")
}

// printChats writes a page of chats as a table, then the command that goes on (more:
// goOn and the page token), if there is a next page, and on Err the note that the
// chats are not indexed, if they are not.
func printChats(s Streams, res agentchat.ListResult, more string) {
	if len(res.Chats) == 0 {
		fmt.Fprintln(s.Out, "no chats")
	} else {
		tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "CHAT\tSTATUS\tAGENTS\tTURNS\tLAST ACTIVITY")
		for _, ch := range res.Chats {
			agents, turns := "-", "-"
			if ch.Indexed {
				agents, turns = cmpOr(strings.Join(ch.Agents, ","), "-"), fmt.Sprint(ch.Turns)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ch.ChatID, ch.Status, agents, turns, ch.LastActivity.Local().Format(time.DateTime))
		}
		_ = tw.Flush()
	}
	if len(res.NextPageToken) > 0 {
		fmt.Fprintf(s.Out, "(more: %s --page-token %s)\n", more, base64.StdEncoding.EncodeToString(res.NextPageToken))
	}
	if res.Unindexed {
		fmt.Fprintln(s.Err, "note: "+res.Hint)
	}
}
