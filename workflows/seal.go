package workflows

import (
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// seal writes the oldest messages of the window to pages of the chat's message store
// (docs/design/paged-history.md, section 5), so that what the chat carries does not
// grow with its length. It runs at continue-as-new, once the run is drained (no turn
// runs, no export reads the history), and cuts pages of at most PageMessages (or the
// chat's history.pageMessages) messages and PageBytes while the window keeps at least
// WindowMessages (or history.windowMessages), up to the start of a turn (sealableEnd):
// never into a turn, the tool calls still open at the end, or a turn that waits for
// an approval. It waits until at least one whole page can go, so that a page falls
// short of its size only where it ends at a turn.
//
// A store that does not answer, or keeps no pages, leaves the messages in the window
// (the carry's bodies still move to the store by spillToFit); the next hand-over tries
// again. Pages are never written twice: the lineage, numbers and cuts are fixed here,
// before the activity runs, and the window drops the messages only once its result is
// recorded.
func (s *chatState) seal(ctx workflow.Context) {
	_, perPage := s.in.History.Effective()
	cuts := pageCuts(s.history.Slice(s.history.Base(), s.sealableEnd()), perPage)
	if len(cuts) == 0 || (len(cuts) == 1 && cuts[0] < perPage) {
		return // less than a page: it waits for the next hand-over, so pages stay full
	}
	fanout := s.in.History.Fanout()
	lineage, seq := s.history.lineage(), wire.PagesWritten(s.history.index(), 0, fanout)
	if lineage == "" {
		lineage = workflow.GetInfo(ctx).WorkflowExecution.RunID
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: storeTimeout, HeartbeatTimeout: storeTimeout / 2,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
	for len(cuts) > 0 {
		n, count := batchOfPages(s.history.Since(s.history.Base()), cuts)
		in := wire.WritePagesInput{ChatID: s.chatID, Store: orDefault(s.Store, s.in.Store), Lineage: lineage,
			Seq: seq, First: int64(s.history.Base()), Cuts: cuts[:n], Messages: slices.Clone(s.history.Slice(s.history.Base(), s.history.Base()+count)),
			Index: s.history.index(), Fanout: fanout}
		var res wire.WritePagesResult
		if err := workflow.ExecuteActivity(actx, wire.WritePagesActivity, in).Get(ctx, &res); err != nil {
			s.log().Warn("history pages not written; the messages stay in the workflow until the next continue-as-new", "error", err)
			return
		}
		s.Store = res.Store
		for _, m := range in.Messages {
			s.CallIDs = s.CallIDs.AddCalls(m)
		}
		s.history.Paged(lineage, res.Pages, res.Index)
		cuts, seq = cuts[n:], seq+int64(n)
	}
	// Answered turns now in pages leave the idempotency record: a retry of one is
	// looked up in the pages (pagedTurn), as after a continue-as-new.
	s.turnQueue.ForgetPaged(s.history.Base())
}

// sealableEnd is the end of what pages may take: the window keeps its size, and the
// tool calls open at the end, a turn waiting for an approval and what a summarizing
// reducer has not summarized stay in it.
func (s *chatState) sealableEnd() int {
	window, _ := s.in.History.Effective()
	end := min(s.history.OpenCallsFrom(), s.history.Len()-window)
	if t := s.approvals.Suspended(); t != nil {
		end = min(end, s.history.IndexOf(t.msg.MessageID))
	}
	end = min(end, s.summarizedUpTo())
	base := s.history.Base()
	if end <= base || end >= s.history.Len() {
		return base
	}
	// Pages end where a turn begins, so that the window, which a model call reads,
	// begins with a user message and a turn is whole in the pages or in the window.
	if user, _ := s.history.TurnAround(end); user > base {
		return user
	}
	// A turn longer than the window (a document's one long turn, a run of tool rounds)
	// is cut before a message that is not a tool result: never between a call and its
	// results, so the window never begins with a result whose call is in a page. Its
	// retry is read from the pages (ForgetPaged, pagedTurn).
	for ; end > base; end-- {
		if m, _ := s.history.At(end); m.Role != chat.RoleTool {
			return end
		}
	}
	return base
}

// pageCuts divides msgs, oldest first, into pages: at most perPage messages and
// PageBytes each (a message over PageBodyBytes counted as its stub, as WritePages
// stores it; a larger message alone), the last page holding what is left.
func pageCuts(msgs []chat.Message, perPage int) []int {
	var cuts []int
	n, bytes := 0, 0
	for _, m := range msgs {
		b := wire.MessageBytes(m)
		if b > wire.PageBodyBytes {
			b = wire.StubBytes(m)
		}
		if n > 0 && bytes+b > wire.PageBytes {
			cuts, n, bytes = append(cuts, n), 0, 0
		}
		n, bytes = n+1, bytes+b
		if n == perPage {
			cuts, n, bytes = append(cuts, n), 0, 0
		}
	}
	if n > 0 {
		cuts = append(cuts, n)
	}
	return cuts
}

// batchOfPages returns how many of the pages cut by cuts from the start of msgs one
// WritePages input carries (their messages within messageBatchBytes, at least one
// page), and how many messages those pages hold.
func batchOfPages(msgs []chat.Message, cuts []int) (pages, count int) {
	bytes := 0
	for pages < len(cuts) {
		size := messagesBytes(msgs[count : count+cuts[pages]])
		if pages > 0 && bytes+size > messageBatchBytes {
			break
		}
		bytes += size
		count += cuts[pages]
		pages++
	}
	return pages, count
}

// summarizedUpTo is the most of the history that pages may take without a
// summarizing reducer losing messages: its agent sees its summary and the window, so
// the messages after its summary (SummarizedThrough) stay in the window until they are
// summarized. Len() when no participant summarizes.
func (s *chatState) summarizedUpTo() int {
	upTo := s.history.Len()
	for _, p := range s.Participants {
		if p.Reducer.Type != strategies.ReducerSummarize {
			continue
		}
		ch := s.channels.Of(p)
		if ch == nil {
			continue
		}
		through := strategies.ParseSummaryState(ch.State()).SummarizedThrough
		if i := s.history.IndexOf(through); through != "" && i < s.history.Len() {
			upTo = min(upTo, i+1)
		} else {
			upTo = min(upTo, s.history.Base()) // nothing summarized since the pages
		}
	}
	return upTo
}
