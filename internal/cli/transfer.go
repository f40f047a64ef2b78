package cli

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/wire"
)

func exportCmd(g *globals, s Streams) *cobra.Command {
	var chatID, out string
	var plain bool
	cmd := &cobra.Command{
		Use:   "export --chat ID --out FILE",
		Short: "Write a chat's chat-state document (history, participants, channels, strategies) to a file",
		Long: `Write a chat's chat-state document (chat-state v1: history, participants,
channel states, strategy state, pending turns, digest) to --out, or to stdout with
"--out -". It works on running and finished chats; a turn in progress is exported as a
pending turn and answered again where the document is imported.

With a key ring (--keys, $AGENTCHAT_KEYS) the file is an envelope: the document
encrypted (docs/chat-state-v1.md, "Envelope"); with a signing key
($AGENTCHAT_SIGNING_KEY) it is signed. --plain writes the document itself, decrypted,
for a person to read.`,
		Example: `  starter export --chat support-42 --out support-42.json
  starter export --chat support-42 --out - --plain | jq .history`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.connectChat(cmd.Context(), chatID)
			if err != nil {
				return err
			}
			defer c.Close()
			var e agentchat.ExportedDocument
			if plain {
				b, digest, err := c.Export(cmd.Context(), chatID)
				if err != nil {
					return err
				}
				doc, _, err := chatstate.Decode(b)
				if err != nil {
					return err
				}
				e = agentchat.ExportedDocument{Bytes: b, Digest: digest, MessageCount: len(doc.History), PendingTurns: len(doc.PendingTurns)}
			} else if e, err = c.ExportSealed(cmd.Context(), chatID); err != nil {
				return err
			}
			written, digest := e.Bytes, e.Digest
			if out == "-" {
				_, err := s.Out.Write(append(written, '\n'))
				return err
			}
			if err := os.WriteFile(out, written, 0o600); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "exported chat %s to %s: %d messages, %d pending turns, %d bytes, %s%s\n",
				chatID, out, e.MessageCount, e.PendingTurns, len(written), digest, sealedNote(c.Documents(), plain))
			return nil
		},
	}
	chatFlag(cmd, &chatID)
	cmd.Flags().StringVar(&out, "out", "", `file to write ("-" for stdout) (required)`)
	cmd.Flags().BoolVar(&plain, "plain", false, "write the plain v1 document, decrypted and unsigned, even with a key ring or signing key")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

func importCmd(g *globals, s Streams) *cobra.Command {
	var (
		chatID, in string
		ids        []string
		strat      strategyFlags
		history    historyFlags
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "import --chat NEWID --in FILE [--agents ID,...]",
		Short: "Restore a chat-state document into a new chat",
		Long: `Restore a chat-state document into a new chat, which then takes turns where the
exported one stopped. The document is checked first (schema version, digest, shape);
a bad one is refused with the field it is wrong in, and nothing is created.

--agents (default: the document's participants) may differ from the document's:
agent kinds the document lacks get new channels synchronized from the history; kinds
the new chat lacks keep their channel states, resumed if such an agent joins later.
Strategy state is taken over when the strategy types match. The strategy flags
(--selection, --selector, --termination, --judge, ...) are those of start; see
starter start --help.

A document keeps the history, participants, channel states, strategy state and
pending turns. It does not keep the exported chat's window, page size, index fanout
or run budget, nor its message store: the new chat has the defaults unless the
history flags below set them (as on start), and the import writes the document's
older messages as pages of those sizes to the worker's default message store.

` + historyFlagsHelp,
		Example: `  starter import --chat support-42b --in support-42.json
  starter import --chat slogan-2 --in slogan.json --agents writer,reviewer --termination regex --pattern APPROVED`,
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
			st, err := c.Import(cmd.Context(), agentchat.ImportOptions{ChatID: chatID, Participants: ids, Path: in,
				Selection: sel, Termination: term, History: window, HistoryBudget: budget})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(s.Out, st)
			}
			fmt.Fprintf(s.Out, "restored %s into chat %s: %s in %s, digest %s\n", in, st.ChatID,
				plural(st.MessageCount, "message"), plural(st.TurnCount, "turn"), st.RestoredDigest)
			for _, r := range st.Repairs {
				fmt.Fprintln(s.Out, "repaired:", r)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&chatID, "chat", "", "id of the new chat (default chat-<uuid>)")
	cmd.Flags().StringVar(&in, "in", "", "document file (required)")
	cmd.Flags().StringSliceVar(&ids, "agents", nil, "participants of the new chat (default: the document's)")
	jsonFlag(cmd, &asJSON, "print the new chat's state as JSON")
	history.add(cmd)
	strat.add(cmd)
	_ = cmd.MarkFlagRequired("in")
	return cmd
}

func participantsCmd(g *globals, s Streams) *cobra.Command {
	var (
		in     string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "participants --in FILE",
		Short: "Check a chat-state document and list its participants and channels",
		Long: `Check a chat-state document (version, digest, shape) without a server, and list
its participants and channels: the agents a restoring chat should name.`,
		Example: `  starter participants --in support-42.json`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			b, err := os.ReadFile(in)
			if err != nil {
				return err
			}
			if b, err = g.openDocument(b); err != nil {
				return err
			}
			doc, report, err := chatstate.Decode(b)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(s.Out, map[string]any{"chatId": doc.ChatID, "participants": doc.Participants,
					"channels": doc.Channels, "messageCount": len(doc.History), "digest": doc.Digest, "repairs": report.Repairs})
			}
			fmt.Fprintf(s.Out, "chat %s from namespace %s: %s, %s, digest %s (valid)\n", doc.ChatID,
				doc.Source.Namespace, plural(len(doc.History), "message"), plural(len(doc.PendingTurns), "pending turn"), doc.Digest)
			for _, p := range doc.Participants {
				fmt.Fprintf(s.Out, "participant  %-12s %-14s %s\n", p.ID, p.Name, p.Type)
			}
			for _, c := range doc.Channels {
				fmt.Fprintf(s.Out, "channel      %-18s %s %s\n", c.ChannelType, c.ChannelKey, compact(c.ChannelState))
			}
			for _, r := range report.Repairs {
				fmt.Fprintln(s.Out, "would repair:", r)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&in, "in", "", "document file (required)")
	jsonFlag(cmd, &asJSON, "print JSON")
	_ = cmd.MarkFlagRequired("in")
	return cmd
}

func migrateCmd(g *globals, s Streams) *cobra.Command {
	var (
		chatID string
		opts   agentchat.MigrateOptions
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "migrate --chat ID (--to-namespace NS | --to-cluster NAME | --to-address HOST:PORT | --to-chat NEW) ...",
		Short: "Move a running chat to another namespace or Temporal cluster",
		Long: `Move a running chat to another namespace or cluster, and keep talking to it there.

The chat stops taking turns (updates meanwhile get a retryable "migrating" error;
signals are carried over), finishes the turn in flight, exports itself, starts the
target chat from the document, checks the target's digest, and closes naming the
target. Running the same migrate again (after a crash or a timeout) finishes or
reports the same migration. Another cluster must be configured on the worker:
worker --cluster NAME=HOST:PORT; --to-address picks it by address. A worker must
serve the target namespace on the same task queue.`,
		Example: `  starter migrate --chat support-42 --to-namespace archive
  starter migrate --chat support-42 --to-chat support-42-v2     # a new id, same namespace
  starter migrate --chat support-42 --to-cluster east --to-namespace default`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sameNamespace := opts.ToNamespace == "" && opts.ToCluster == "" && opts.ToAddress == ""
			if sameNamespace && opts.ToChatID == "" {
				return errors.New("migrate needs a target: --to-namespace, --to-cluster, --to-address, or --to-chat (a new id in the same namespace)")
			}
			c, err := g.connectChat(cmd.Context(), chatID)
			if err != nil {
				return err
			}
			defer c.Close()
			if sameNamespace { // --to-chat alone: a new chat id here
				opts.ToNamespace = c.Namespace()
			}
			res, err := c.Migrate(cmd.Context(), chatID, opts)
			if err != nil {
				var moved *agentchat.MigratedError
				if errors.As(err, &moved) {
					return fmt.Errorf("%w (it was migrated to another target before)", err)
				}
				return fmt.Errorf("%w%s", err, migrateHint(err, opts, g.dial.TaskQueue))
			}
			if asJSON {
				return printJSON(s.Out, res)
			}
			fmt.Fprintf(s.Out, "migrated chat %s to %s as %s (run %s): %s, digest %s\n",
				chatID, describePlace(res.Target), res.Target.ChatID, res.Target.RunID, plural(res.MessageCount, "message"), res.Digest)
			return nil
		},
	}
	chatFlag(cmd, &chatID)
	f := cmd.Flags()
	f.StringVar(&opts.ToNamespace, "to-namespace", "", "target namespace (default: the same)")
	f.StringVar(&opts.ToCluster, "to-cluster", "", "target cluster, by the name the worker gives it")
	f.StringVar(&opts.ToAddress, "to-address", "", "target cluster, by its frontend host:port (configured on the worker)")
	f.StringVar(&opts.ToChatID, "to-chat", "", "chat id in the target (default: the same)")
	jsonFlag(cmd, &asJSON, "print the result as JSON")
	return cmd
}

// migrateHint is the command-line tool that does what a migration's error asks for:
// the errors themselves name none, since clients in any language read them.
func migrateHint(err error, opts agentchat.MigrateOptions, taskQueue string) string {
	ns := cmp.Or(opts.ToNamespace, "NS")
	switch msg := err.Error(); {
	case strings.Contains(msg, activities.TargetNamespaceMissing):
		return fmt.Sprintf(" (run: temporal operator namespace create --namespace %s)", shellQuote(ns))
	case strings.Contains(msg, activities.TargetUnserved):
		return fmt.Sprintf(" (run: go run ./worker --namespace %s --task-queue %s)", shellQuote(ns), shellQuote(taskQueue))
	}
	return ""
}

// openDocument opens an envelope (or a plain document) with the key ring of --keys
// or $AGENTCHAT_KEYS and the environment's signing keys, without a server.
func (g *globals) openDocument(b []byte) ([]byte, error) {
	ring, err := keyring.FromEnv(g.dial.KeysPath)
	if err != nil {
		return nil, err
	}
	o, err := envelope.FromEnv(ring)
	if err != nil {
		return nil, err
	}
	doc, _, err := envelope.Open(b, o)
	return doc, err
}

// sealedNote says how an exported file is wrapped.
func sealedNote(o envelope.Options, plain bool) string {
	switch {
	case plain:
		return ""
	case o.Ring != nil && o.Signer != nil:
		return fmt.Sprintf(", encrypted with key %q and signed by %q", o.Ring.Current(), o.Signer.KeyID)
	case o.Ring != nil:
		return fmt.Sprintf(", encrypted with key %q", o.Ring.Current())
	case o.Signer != nil:
		return fmt.Sprintf(", signed by %q", o.Signer.KeyID)
	}
	return ""
}

// describePlace is where a chat is for people: "namespace NS", "cluster east,
// namespace NS", or "cluster at HOST:PORT, namespace NS".
func describePlace(loc wire.ChatLocation) string {
	where := "namespace " + loc.Namespace
	switch {
	case loc.Cluster != "":
		return fmt.Sprintf("cluster %s, %s", loc.Cluster, where)
	case loc.Address != "":
		return fmt.Sprintf("cluster at %s, %s", loc.Address, where)
	}
	return where
}

// placeFlags are the starter's global flags that reach chat loc's namespace and
// cluster: " --address HOST:PORT --namespace NS" (a cluster known by name only:
// " --address <address of cluster NAME>").
func placeFlags(loc wire.ChatLocation) string {
	where := ""
	switch {
	case loc.Address != "":
		where = " --address " + shellQuote(loc.Address)
	case loc.Cluster != "":
		where = " --address <address of cluster " + loc.Cluster + ">"
	}
	return where + " --namespace " + shellQuote(loc.Namespace)
}
