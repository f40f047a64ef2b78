package systest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/wire"
)

func (r *Runner) exportImport(ctx context.Context, c *chatRun, target int) string {
	doc, digest, err := r.w.Client(c.loc.ns).Export(ctx, c.loc.id)
	return r.importExported(ctx, c, target, doc, digest, err)
}

// handover signals Reencrypt to chat c, which then continues as new at its next
// boundary, and at once exports it (on a goroutine of its own, touching nothing of c
// until it has the document) and sends a burst: the export's queries and the burst's
// updates and signals arrive while the run hands over. The document is then imported
// into target, as exportImport does.
func (r *Runner) handover(ctx context.Context, c *chatRun, a Action) string {
	cl := r.w.Client(c.loc.ns)
	if err := cl.Reencrypt(ctx, c.loc.id); err != nil {
		r.violate("chat c%d: the Reencrypt signal failed: %v", c.idx, err)
		return "signal error: " + err.Error()
	}
	type exported struct {
		doc    []byte
		digest string
		err    error
	}
	done := make(chan exported, 1)
	go func() {
		doc, digest, err := cl.Export(ctx, c.loc.id)
		done <- exported{doc, digest, err}
	}()
	burst := r.burst(ctx, c, a)
	e := <-done
	return "signalled; " + burst + "; " + r.importExported(ctx, c, a.Target, e.doc, e.digest, e.err)
}

// importExported imports doc, exported from chat c with digest (or the export's err),
// into the new chat target, and records what the new chat holds.
func (r *Runner) importExported(ctx context.Context, c *chatRun, target int, doc []byte, digest string, err error) string {
	cl := r.w.Client(c.loc.ns)
	if err != nil {
		r.violate("chat c%d: export failed: %v", c.idx, err)
		return "export error: " + err.Error()
	}
	d, _, err := chatstate.Decode(doc)
	if err != nil {
		r.violate("chat c%d: the exported document does not decode: %v", c.idx, err)
		return "decode error: " + err.Error()
	}
	nc := r.newChat(target, c.loc.ns, r.chatID(target), c.agents, c.maxBytes)
	for _, m := range d.History {
		nc.prefix = append(nc.prefix, m.MessageID)
	}
	nc.inherit(c, d.History)
	for _, m := range d.PendingTurns {
		nc.pending = append(nc.pending, m.MessageID)
	}
	opts, err := r.importOptions(doc, nc.loc.id, c.maxBytes)
	if err != nil {
		r.violate("write document: %v", err)
		return "error: " + err.Error()
	}
	st, err := cl.Import(ctx, opts)
	if err != nil {
		r.violate("chat c%d: import of its document (%d bytes, %d messages) into c%d failed: %v",
			c.idx, len(doc), len(d.History), target, err)
		return "import error: " + err.Error()
	}
	nc.started = true
	if st.RestoredDigest != digest {
		r.violate("chat c%d: imported digest %s, exported %s", target, st.RestoredDigest, digest)
	}
	return fmt.Sprintf("exported %d bytes, %d messages, %d pending; imported as c%d (%s)",
		len(doc), len(d.History), len(d.PendingTurns), target, st.Status)
}

func (r *Runner) migrate(ctx context.Context, c *chatRun, newID bool) string {
	to := location{1 - c.loc.ns, c.loc.id}
	for _, l := range c.locations {
		newID = newID || l == to
	}
	if newID {
		to.id = fmt.Sprintf("%s-m%d", r.chatID(c.idx), len(c.locations))
	}
	res, err := r.w.Client(c.loc.ns).Migrate(ctx, c.loc.id, agentchat.MigrateOptions{
		ToNamespace: r.w.Namespaces[to.ns], ToChatID: to.id})
	if err != nil {
		if typ, _ := chatErr(err); typ == wire.ErrTypeMigrationFailed {
			// Abandoned: the source must take turns again (checked in the end), and no
			// second live chat may be left at the target.
			r.checkAbandoned(ctx, c, to)
			return "migration abandoned: " + firstLine(err.Error())
		}
		r.violate("chat c%d: migrate to %s/%s: %v", c.idx, r.w.Namespaces[to.ns], to.id, err)
		return "error: " + err.Error()
	}
	c.loc = to
	c.locations = append(c.locations, to)
	return fmt.Sprintf("migrated to %s/%s, %d messages", res.Target.Namespace, res.Target.ChatID, res.MessageCount)
}

// checkAbandoned checks that an abandoned migration left no live chat at its target.
func (r *Runner) checkAbandoned(ctx context.Context, c *chatRun, to location) {
	d, err := r.w.Temporal(to.ns).DescribeWorkflowExecution(ctx, to.id, "")
	if err != nil {
		return // nothing was started there
	}
	if d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		st, _ := r.state(ctx, to)
		// Does the source's document keep its digest through Decode? If not, the
		// target's restored digest can never match the exported one.
		if doc, digest, err := r.w.Client(c.loc.ns).Export(ctx, c.loc.id); err == nil {
			if d, _, err := chatstate.Decode(doc); err == nil && d.Digest != digest {
				r.logf("diagnosis c%d: a fresh export's digest %s is %s after Decode", c.idx, digest, d.Digest)
			}
		}
		r.violate("chat c%d: an abandoned migration left a live chat at %s/%s (restored digest %s, repairs %v, %d messages): two live copies",
			c.idx, r.w.Namespaces[to.ns], to.id, st.RestoredDigest, st.Repairs, st.MessageCount)
	}
}

// importOptions are the options to import document doc into a new chat id: inline up
// to wire.InlineLimit, else by a file in the world's exports folder (which the
// workers read, as a shared volume).
func (r *Runner) importOptions(doc []byte, id string, maxBytes int) (agentchat.ImportOptions, error) {
	opts := agentchat.ImportOptions{ChatID: id, MaxMessageBytes: maxBytes}
	if len(doc) <= wire.InlineLimit {
		opts.Document = doc
		return opts, nil
	}
	opts.Path = filepath.Join(r.w.Dir, "exports", id+".json")
	if err := os.MkdirAll(filepath.Dir(opts.Path), 0o755); err != nil {
		return opts, err
	}
	return opts, os.WriteFile(opts.Path, doc, 0o600)
}

// inherit gives chat c, imported from src's document whose history is history, what
// lets a turn of that document end on a tool message in c as it did in src: src's
// record of the document's turns that failed after an approval (keptFailed), and the
// tool messages that end a turn src resumed from its own imported document and whose
// agent then failed (checkHistory's resumedEnds), with those src inherited.
func (c *chatRun) inherit(src *chatRun, history []chat.Message) {
	for _, id := range c.prefix {
		if m := src.msgs[id]; m != nil && keptFailed(m) {
			cp := *m
			c.msgs[id] = &cp
		}
	}
	c.resumedEnds = maps.Clone(src.resumedEnds)
	for _, t := range splitTurns(history) {
		if len(t.replies) == 0 || t.index >= len(src.prefix) {
			continue
		}
		if last := t.replies[len(t.replies)-1]; last.Role == chat.RoleTool && !slices.Contains(src.prefix, last.MessageID) {
			if c.resumedEnds == nil {
				c.resumedEnds = map[string]bool{}
			}
			c.resumedEnds[last.MessageID] = true
		}
	}
}

// importedTurn returns a record of turn id, one of the document chat c was imported
// from, for what c does with it afterwards (an approval of its open calls). It is not
// in c.order: what was sent before the import is the source's.
func (c *chatRun) importedTurn(id string) *msgState {
	m := &msgState{id: id}
	c.msgs[id] = m
	return m
}
