package wire

import (
	"fmt"
	"slices"

	"github.com/agentchat/agentchat/chat"
)

// Paged history (docs/design/paged-history.md): a chat keeps the window of its latest
// messages in the workflow and all older ones in immutable pages in its message store
// (docs/chat-state-v1.md, "Message store pages"), so that its length has no limit.
const (
	// WindowMessages is how many of the latest messages a chat keeps in the workflow, at
	// the least, once it writes pages: what a turn reads without the store. A carry
	// past it writes the older messages to pages at continue-as-new.
	WindowMessages = 256
	// PageMessages is the most messages one page holds.
	PageMessages = 256
	// IndexFanout is the most references one index page (level n ≥ 1) holds, and the
	// most of one level a chat carries: when its index holds IndexFanout references of
	// one level, they go to a page of the level above, whose reference takes their
	// place (FoldIndex). 512 references are about 64 KiB, in a page as in the carry, so
	// that the index a chat carries is at most 64 KiB a level, and 4 levels cover
	// 512^4 × 256 messages.
	IndexFanout = 512
	// PageBytes is the most encoded bytes (MessageBytes, stubs counted as stubs) of
	// messages one page holds, a single larger message alone: one row read, inside one
	// activity input and one History answer.
	PageBytes = 512 << 10
	// HistoryAnswerPages is the most page references one History answer carries.
	HistoryAnswerPages = 64
	// StreamDocumentBytes is the size past which a plain document in a file is read in
	// place, a message at a time (chatstate.Decoder), by the client's check and the
	// worker's import: 32 MiB (about 45,000 messages of typical chat text). A smaller
	// one is read whole, which is faster (one decode instead of several passes) and
	// costs at most a few times its size in memory.
	StreamDocumentBytes = 32 << 20
)

// PageRef is the index entry of one page of a chat's history (JSON camelCase; about
// 130 bytes): where it is and what it must hold. Digest is "sha256:" and the hex
// SHA-256 of the row as stored (msgstore.PageDigest), checked by every reader.
type PageRef struct {
	// Level is 0 for a page of messages, n ≥ 1 for an index page whose body lists the
	// references of the level n-1 pages it covers (FoldIndex).
	Level int `json:"level,omitempty"`
	// Seq is the page's number within (chat, lineage, level), from 0.
	Seq int64 `json:"seq"`
	// First is the absolute index of its first message; Count how many it holds (an
	// index page: how many the pages under it hold).
	First int64 `json:"first"`
	Count int64 `json:"count"`
	// Bytes is the size of the page's plaintext body.
	Bytes  int    `json:"bytes"`
	Digest string `json:"digest"`
	// Lineage is the line of history the page belongs to (PagedHistory.Lineage); set
	// in History answers, left out in the carry.
	Lineage string `json:"lineage,omitempty"`
}

// String names the page as errors do: page 7 (messages 1792 to 2047).
// An index page says its level: history index page 2 of level 1 (messages 0 to 262143).
func (r PageRef) String() string {
	if r.Level > 0 {
		return fmt.Sprintf("history index page %d of level %d (messages %d to %d)", r.Seq, r.Level, r.First, r.First+r.Count-1)
	}
	return fmt.Sprintf("history page %d (messages %d to %d)", r.Seq, r.First, r.First+r.Count-1)
}

// PagedHistory is what a chat carries of the part of its history in pages: Base, the
// index of the first message the workflow holds (messages [0, Base) are covered by
// Pages, in order, without gaps: index pages of the highest levels first, then level-0
// pages, fewer than the chat's index fanout of each level, FoldIndex), the Lineage they
// were written under (the run id of the run that wrote the first page), and a filter
// of their message ids (IDs; a false positive only costs a store lookup).
type PagedHistory struct {
	Base    int          `json:"base"`
	Lineage string       `json:"lineage"`
	Pages   []PageRef    `json:"pages"`
	IDs     CallIDFilter `json:"ids,omitempty"`
}

// HistoryWindow tunes a chat's paging (AgentChatInput.History): zero fields mean
// WindowMessages and PageMessages. Tests and tuning only: Window ≥ 8, Page in [4,
// PageMessages].
type HistoryWindow struct {
	WindowMessages int `json:"windowMessages,omitempty"`
	PageMessages   int `json:"pageMessages,omitempty"`
	// IndexFanout is the references an index page holds (zero: IndexFanout); 2 to
	// IndexFanout.
	IndexFanout int `json:"indexFanout,omitempty"`
}

// Fanout returns the index fanout w sets, IndexFanout for zero.
func (w *HistoryWindow) Fanout() int {
	if w != nil && w.IndexFanout > 0 {
		return w.IndexFanout
	}
	return IndexFanout
}

// Effective returns the window and page sizes w sets, with the defaults for zero.
func (w *HistoryWindow) Effective() (window, page int) {
	window, page = WindowMessages, PageMessages
	if w != nil && w.WindowMessages > 0 {
		window = w.WindowMessages
	}
	if w != nil && w.PageMessages > 0 {
		page = w.PageMessages
	}
	return window, page
}

// Validate refuses sizes out of range, naming the field.
func (w *HistoryWindow) Validate() error {
	if w == nil {
		return nil
	}
	switch {
	case w.WindowMessages != 0 && w.WindowMessages < 8:
		return fmt.Errorf("history.windowMessages is %d: at least 8, or 0 for %d", w.WindowMessages, WindowMessages)
	case w.PageMessages != 0 && (w.PageMessages < 4 || w.PageMessages > PageMessages):
		return fmt.Errorf("history.pageMessages is %d: 4 to %d, or 0 for %d", w.PageMessages, PageMessages, PageMessages)
	case w.IndexFanout != 0 && (w.IndexFanout < 2 || w.IndexFanout > IndexFanout):
		return fmt.Errorf("history.indexFanout is %d: 2 to %d, or 0 for %d", w.IndexFanout, IndexFanout, IndexFanout)
	}
	return nil
}

// WritePagesInput asks the worker to write messages [First, First+len(Messages)) of a
// chat's history as level-0 pages of Lineage from number Seq on, cut at Cuts (the
// number of messages of each page, in order, summing to len(Messages)). Store names
// the message store ("" = the worker's default). Messages over PageBodyBytes go to
// their own body row first, the page holding the stub. At most messageBatch bytes of
// messages: the workflow splits larger ranges over several calls.
//
// Index is the chat's index before these pages (PagedHistory.Pages, at most Fanout-1
// references a level: about 64 KiB a level) and Fanout its fanout (0: IndexFanout):
// the result's Index is Index with the new pages, folded (FoldIndex), its index pages
// written too.
type WritePagesInput struct {
	ChatID   string         `json:"chatId"`
	Store    string         `json:"store,omitempty"`
	Lineage  string         `json:"lineage"`
	Seq      int64          `json:"seq"`
	First    int64          `json:"first"`
	Cuts     []int          `json:"cuts"`
	Messages []chat.Message `json:"messages"`
	Index    []PageRef      `json:"index,omitempty"`
	Fanout   int            `json:"fanout,omitempty"`
}

// WritePagesResult is the refs of the level-0 pages written, in order, the chat's
// index with them (FoldIndex of WritePagesInput.Index and Pages), and the store's name.
type WritePagesResult struct {
	Store string    `json:"store"`
	Pages []PageRef `json:"pages"`
	Index []PageRef `json:"index"`
}

// FoldIndex returns index (references of consecutive pages of one lineage, highest
// levels first, as PagedHistory.Pages holds them) folded: taken one reference at a
// time, whenever the last fanout references are of one level, write writes an index
// page of the level above that lists them (its number within the level, seq, is
// PagesWritten's) and its reference takes their place. So the index holds fewer than
// fanout references a level, and its length grows with the logarithm of the chat's.
// It is deterministic: the same index folds into the same pages, so a retried write
// writes the same rows. index is not changed; write's error is returned as it is.
func FoldIndex(index []PageRef, fanout int, write func(level int, seq int64, refs []PageRef) (PageRef, error)) ([]PageRef, error) {
	out := make([]PageRef, 0, len(index))
	for _, r := range index {
		out = append(out, r)
		for {
			n := len(out)
			if n < fanout {
				break
			}
			level := out[n-1].Level
			if out[n-fanout].Level != level || (n > fanout && out[n-fanout-1].Level == level) {
				break // fewer than fanout of the last level (a level holds at most fanout)
			}
			ref, err := write(level+1, PagesWritten(out[:n-fanout], level+1, fanout), slices.Clone(out[n-fanout:]))
			if err != nil {
				return nil, err
			}
			out = append(out[:n-fanout], ref)
		}
	}
	return out, nil
}

// PagesWritten is how many pages of level an index (as FoldIndex leaves it, of fanout)
// stands for: a reference of that level counts one, one of a level above fanout to the
// power of the difference. It is the number (seq) of the level's next page.
func PagesWritten(index []PageRef, level, fanout int) int64 {
	var n int64
	for _, r := range index {
		if r.Level < level {
			continue
		}
		k := int64(1)
		for range r.Level - level {
			k *= int64(fanout)
		}
		n += k
	}
	return n
}

// DeleteLineageInput asks the worker to remove the pages of one lineage of a chat
// (msgstore.PageStore.DeleteLineage): those an import wrote before it failed, which
// no index names.
type DeleteLineageInput struct {
	ChatID  string `json:"chatId"`
	Store   string `json:"store,omitempty"`
	Lineage string `json:"lineage"`
}

// PageBodyBytes is the encoded size past which a paged message's body goes to its own
// row of the message store (chat_messages) and its page holds the stub.
const PageBodyBytes = 64 << 10

// LookupIDsInput asks where message ids are in a chat's pages (the LookupIDs local
// activity): the chat, its store and lineage, and the ids (at most 64).
type LookupIDsInput struct {
	ChatID  string   `json:"chatId"`
	Store   string   `json:"store,omitempty"`
	Lineage string   `json:"lineage"`
	IDs     []string `json:"ids"`
}

// LookupIDsResult maps each id found to the message holding it; ids not in the pages
// are absent.
type LookupIDsResult struct {
	Found map[string]PagedID `json:"found,omitempty"`
}

// PagedID is where a paged message id is: the message's index and role.
type PagedID struct {
	Index int64     `json:"index"`
	Role  chat.Role `json:"role"`
}

// ReadTurnInput asks for a paged turn (the ReadTurn local activity): the user message
// at index User and its replies, read from Pages (the references from the page holding
// User on, each naming its lineage) of the chat's Store.
type ReadTurnInput struct {
	ChatID string    `json:"chatId"`
	Store  string    `json:"store,omitempty"`
	User   int64     `json:"user"`
	Pages  []PageRef `json:"pages"`
}

// ReadTurnResult is the user message, its replies as far as the pages read hold them
// (past HistoryPageBytes, references without contents), and whether the turn ended
// within them (the next user message was reached).
type ReadTurnResult struct {
	User    chat.Message   `json:"user"`
	Replies []chat.Message `json:"replies"`
	Ended   bool           `json:"ended,omitempty"`
}

// ImportBoundary is where an import divides history into pages and the window: the
// index of the latest user message that leaves at least window messages after it
// (so that no turn is split, and open calls at the end stay in the window), or 0 when
// there is none.
func ImportBoundary(history []chat.Message, window int) int {
	for i := len(history) - window; i > 0; i-- {
		if history[i].Role == chat.RoleUser {
			return i
		}
	}
	return 0
}

// ImportTail keeps, of a history given one message at a time, the messages from where
// ImportBoundary divides it for a window on (all of them for window 0), so that a
// document of any length is divided with a heap of about the window: the boundary so
// far moves to each user message that leaves at least window messages from it on.
type ImportTail struct {
	window int
	n      int            // messages given
	base   int            // the boundary of the messages given so far
	msgs   []chat.Message // messages [base, n)
	users  []int          // the user messages after base that leave fewer than window yet
}

// NewImportTail returns an empty ImportTail for window (0: it keeps every message).
func NewImportTail(window int) *ImportTail { return &ImportTail{window: window} }

// Add gives the next message.
func (t *ImportTail) Add(m chat.Message) {
	if m.Role == chat.RoleUser && t.n > 0 && t.window > 0 {
		t.users = append(t.users, t.n)
	}
	t.msgs = append(t.msgs, m)
	t.n++
	k := 0
	for k < len(t.users) && t.n-t.users[k] >= t.window {
		k++
	}
	if k == 0 {
		return
	}
	j := t.users[k-1]
	clear(t.msgs[:j-t.base]) // let the older messages go
	t.msgs, t.base, t.users = t.msgs[j-t.base:], j, t.users[k:]
}

// Len is how many messages were given; Base is ImportBoundary of them.
func (t *ImportTail) Len() int  { return t.n }
func (t *ImportTail) Base() int { return t.base }

// Messages returns the messages from Base on (the caller may keep them; Add must not
// be called after).
func (t *ImportTail) Messages() []chat.Message { return slices.Clip(t.msgs) }
