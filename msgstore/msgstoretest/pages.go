package msgstoretest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
)

// PageBody returns the plaintext body of a level-0 page holding msgs from index first
// (docs/chat-state-v1.md, "Message store pages"):
// {"v":1,"chatId":…,"lineage":…,"level":0,"seq":…,"first":…,"messages":[…]}, each
// message as msgstore.EncodeBody writes it.
func PageBody(t *testing.T, chatID string, key msgstore.PageKey, first int64, msgs []chat.Message) []byte {
	t.Helper()
	str := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(s))
		return strings.TrimSuffix(b.String(), "\n")
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"v":1,"chatId":%s,"lineage":%s,"level":%d,"seq":%d,"first":%d,"messages":[`,
		str(chatID), str(key.Lineage), key.Level, key.Seq, first)
	for i, m := range msgs {
		body, err := msgstore.EncodeBody(m)
		require.NoError(t, err)
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(body)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// SamplePage returns level-0 page seq of lineage, holding n messages from index first:
// at index i, a user message "m<i>" (i even) or an assistant message "m<i>" with a
// function call "c<i>" (i odd), each text saying which chat, lineage and index it is
// in. Its IDs are every message and call id.
func SamplePage(t *testing.T, chatID, lineage string, seq, first int64, n int) msgstore.Page {
	t.Helper()
	p := msgstore.Page{Lineage: lineage, Seq: seq, First: first, Count: int64(n)}
	msgs := make([]chat.Message, n)
	for k := range msgs {
		i := first + int64(k)
		text := fmt.Sprintf("message %d of lineage %s", i, lineage)
		id := fmt.Sprintf("m%d", i)
		if i%2 == 0 {
			msgs[k] = chat.TextMessage(id, chat.RoleUser, "alice", text)
		} else {
			msgs[k] = chat.TextMessage(id, chat.RoleAssistant, "", text)
			call := fmt.Sprintf("c%d", i)
			msgs[k].Contents = append(msgs[k].Contents, chat.Content{Type: chat.ContentFunctionCall, CallID: call, Name: "lookup", Arguments: "{}"})
			p.IDs = append(p.IDs, msgstore.PageID{Kind: msgstore.IDCall, ID: call, Index: i, Role: chat.RoleAssistant})
		}
		p.IDs = append(p.IDs, msgstore.PageID{Kind: msgstore.IDMessage, ID: id, Index: i, Role: msgs[k].Role})
	}
	p.Body = PageBody(t, chatID, p.Key(), first, msgs)
	return p
}

// requireDigest fails t unless d is "sha256:" and 64 lowercase hex digits.
func requireDigest(t *testing.T, d string) {
	t.Helper()
	hex, ok := strings.CutPrefix(d, "sha256:")
	require.True(t, ok, "digest %q", d)
	require.Len(t, hex, 64, "digest %q", d)
	require.Equal(t, strings.ToLower(hex), hex, "digest %q", d)
}

// runPages checks the msgstore.PageStore contract, for Run, on a store that has it.
func runPages(t *testing.T, open func(t *testing.T) msgstore.PageStore) {
	ctx := context.Background()
	runPageRow(t, open)

	t.Run("PutPageIdempotent", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		p := SamplePage(t, chatID, "L1", 0, 0, 8)
		digest, err := s.PutPage(ctx, chatID, p)
		require.NoError(t, err)
		requireDigest(t, digest)
		again, err := s.PutPage(ctx, chatID, p)
		require.NoError(t, err, "the same page again is a no-op")
		assert.Equal(t, digest, again, "the digest of the row as stored")
		got, err := s.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err)
		assert.Equal(t, string(p.Body), string(got))

		next := SamplePage(t, chatID, "L1", 1, 8, 8)
		nd, err := s.PutPage(ctx, chatID, next)
		require.NoError(t, err)
		assert.NotEqual(t, digest, nd)
		index := msgstore.Page{Lineage: "L1", Level: 1, Seq: 0, First: 0, Count: 16,
			Body: []byte(`{"v":1,"level":1,"refs":[]}`)}
		_, err = s.PutPage(ctx, chatID, index)
		require.NoError(t, err, "level 1 seq 0 is another page than level 0 seq 0")
		got, err = s.GetPage(ctx, chatID, index.Key())
		require.NoError(t, err)
		assert.Equal(t, string(index.Body), string(got))
	})

	t.Run("PutPagesInOneTransaction", func(t *testing.T) {
		s, ok := open(t).(msgstore.PageBatchStore)
		if !ok {
			t.Skip("not a msgstore.PageBatchStore")
		}
		chatID := NewChatID(t)
		pages := []msgstore.Page{SamplePage(t, chatID, "L", 0, 0, 4), SamplePage(t, chatID, "L", 1, 4, 4), SamplePage(t, chatID, "L", 2, 8, 4)}
		digests, err := s.PutPages(ctx, chatID, pages[:2])
		require.NoError(t, err)
		require.Len(t, digests, 2)
		for i, d := range digests {
			assert.Equal(t, msgstore.PageDigest(pages[i].Body), d)
		}
		again, err := s.PutPages(ctx, chatID, pages)
		require.NoError(t, err, "pages stored already are no-ops beside a new one")
		assert.Equal(t, digests, again[:2])
		got, err := s.GetPage(ctx, chatID, pages[2].Key())
		require.NoError(t, err)
		assert.Equal(t, string(pages[2].Body), string(got))
		found, err := s.LookupIDs(ctx, chatID, msgstore.IDMessage, []string{"m9"}, []msgstore.LineageRange{{Lineage: "L"}})
		require.NoError(t, err)
		assert.Equal(t, int64(2), found["m9"].Seq)

		// A conflict on the last page writes none of the call's pages.
		fresh, clash := SamplePage(t, chatID, "L", 3, 12, 4), pages[1]
		clash.Body = bytes.Replace(clash.Body, []byte("message 4"), []byte("message 5"), 1)
		_, err = s.PutPages(ctx, chatID, []msgstore.Page{fresh, clash})
		require.ErrorIs(t, err, msgstore.ErrConflict)
		assert.Contains(t, err.Error(), `lineage "L" level 0 seq 1`, "the error names the page")
		_, err = s.GetPage(ctx, chatID, fresh.Key())
		require.ErrorIs(t, err, msgstore.ErrPageMissing, "the page before the conflict was rolled back")
		found, err = s.LookupIDs(ctx, chatID, msgstore.IDMessage, []string{"m12"}, []msgstore.LineageRange{{Lineage: "L"}})
		require.NoError(t, err)
		assert.Empty(t, found, "and its ids")

		none, err := s.PutPages(ctx, chatID, nil)
		require.NoError(t, err)
		assert.Empty(t, none)
	})

	t.Run("ConcurrentPutPage", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		pages := make([]msgstore.Page, 4)
		for i := range pages {
			pages[i] = SamplePage(t, chatID, "L", int64(i), int64(64*i), 64)
		}
		// Retried activities on several workers write the same pages at once.
		const workers = 6
		digests := make([][]string, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for k := range pages {
					p := pages[(k+w)%len(pages)]
					d, err := s.PutPage(ctx, chatID, p)
					if err != nil {
						errs[w] = fmt.Errorf("worker %d page %d: %w", w, p.Seq, err)
						return
					}
					digests[w] = append(digests[w], fmt.Sprintf("%d=%s", p.Seq, d))
				}
			})
		}
		wg.Wait()
		for w := range workers {
			require.NoError(t, errs[w])
			assert.ElementsMatch(t, digests[0], digests[w], "worker %d saw the same digests", w)
		}
		found, err := s.LookupIDs(ctx, chatID, msgstore.IDMessage, []string{"m0", "m255"}, []msgstore.LineageRange{{Lineage: "L"}})
		require.NoError(t, err)
		assert.Equal(t, int64(3), found["m255"].Seq)
	})

	t.Run("PutPageConflictNamesBothDigests", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		p := SamplePage(t, chatID, "L1", 3, 768, 4)
		digest, err := s.PutPage(ctx, chatID, p)
		require.NoError(t, err)
		other := p
		other.Body = bytes.Replace(p.Body, []byte("message 768"), []byte("message 769"), 1)
		_, err = s.PutPage(ctx, chatID, other)
		require.ErrorIs(t, err, msgstore.ErrConflict)
		t.Logf("another body: %v", err)
		assert.NotErrorIs(t, err, msgstore.ErrUnavailable)
		assert.Contains(t, err.Error(), digest, "the stored row's digest")
		assert.Equal(t, 2, strings.Count(err.Error(), "sha256:"), "both digests: %v", err)
		assert.Contains(t, err.Error(), chatID)
		assert.Contains(t, err.Error(), `lineage "L1" level 0 seq 3`)
		got, err := s.GetPage(ctx, chatID, p.Key())
		require.NoError(t, err)
		assert.Equal(t, string(p.Body), string(got), "the first page stays")
	})

	t.Run("IDConflictNamesBothIndexes", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		first := SamplePage(t, chatID, "L1", 4, 1024, 4) // m1024..m1027, c1025, c1027
		_, err := s.PutPage(ctx, chatID, first)
		require.NoError(t, err)
		second := SamplePage(t, chatID, "L1", 5, 1280, 4)
		second.IDs = append(second.IDs, msgstore.PageID{Kind: msgstore.IDMessage, ID: "m1025", Index: 1283, Role: chat.RoleAssistant})
		_, err = s.PutPage(ctx, chatID, second)
		require.ErrorIs(t, err, msgstore.ErrConflict)
		t.Logf("an id at another index: %v", err)
		assert.Contains(t, err.Error(), `"m1025"`)
		assert.Contains(t, err.Error(), "1025", "the index it holds")
		assert.Contains(t, err.Error(), "1283", "the index given")
		_, err = s.GetPage(ctx, chatID, second.Key())
		require.ErrorIs(t, err, msgstore.ErrPageMissing, "a PutPage that conflicts writes nothing")
		found, err := s.LookupIDs(ctx, chatID, msgstore.IDMessage, []string{"m1280"}, []msgstore.LineageRange{{Lineage: "L1"}})
		require.NoError(t, err)
		assert.Empty(t, found, "no id row of the refused page")

		// The same id as a call id, or in another lineage, is no conflict.
		third := SamplePage(t, chatID, "L1", 5, 1280, 4)
		third.IDs = append(third.IDs, msgstore.PageID{Kind: msgstore.IDCall, ID: "m1025", Index: 1283, Role: chat.RoleAssistant})
		_, err = s.PutPage(ctx, chatID, third)
		require.NoError(t, err)
		_, err = s.PutPage(ctx, chatID, SamplePage(t, chatID, "L2", 0, 1024, 4))
		require.NoError(t, err)

		// One id at two indexes of one page.
		twice := SamplePage(t, chatID, "L1", 6, 1536, 4)
		twice.IDs = append(twice.IDs, msgstore.PageID{Kind: msgstore.IDMessage, ID: "m1536", Index: 1539, Role: chat.RoleUser})
		_, err = s.PutPage(ctx, chatID, twice)
		require.ErrorIs(t, err, msgstore.ErrConflict)
		assert.Contains(t, err.Error(), "1536")
		assert.Contains(t, err.Error(), "1539")
	})

	t.Run("GetPageMissing", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		_, err := s.PutPage(ctx, chatID, SamplePage(t, chatID, "L1", 0, 0, 2))
		require.NoError(t, err)
		for _, key := range []msgstore.PageKey{{Lineage: "L1", Seq: 1}, {Lineage: "L1", Level: 1}, {Lineage: "L2"}} {
			_, err = s.GetPage(ctx, chatID, key)
			require.ErrorIs(t, err, msgstore.ErrPageMissing, key.String())
			assert.NotErrorIs(t, err, msgstore.ErrUnavailable)
			assert.Contains(t, err.Error(), chatID)
			assert.Contains(t, err.Error(), key.String())
		}
		_, err = s.GetPage(ctx, NewChatID(t), msgstore.PageKey{Lineage: "L1"})
		require.ErrorIs(t, err, msgstore.ErrPageMissing, "another chat's lineage of the same name")
	})

	t.Run("LookupIDsAcrossLineages", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		// Lineage A: messages 0..599 in three pages (more ids than one query binds);
		// lineage B, a fork of A at 300: its own messages from 300 on.
		for seq := range int64(3) {
			_, err := s.PutPage(ctx, chatID, SamplePage(t, chatID, "A", seq, 200*seq, 200))
			require.NoError(t, err)
		}
		_, err := s.PutPage(ctx, chatID, SamplePage(t, chatID, "B", 0, 300, 100))
		require.NoError(t, err)
		fork := []msgstore.LineageRange{{Lineage: "B"}, {Lineage: "A", Below: 300}}

		found, err := s.LookupIDs(ctx, chatID, msgstore.IDMessage, []string{"m5", "m299", "m300", "m450", "m599", "nope", "m5"}, fork)
		require.NoError(t, err)
		assert.Equal(t, map[string]msgstore.IDLocation{
			"m5":   {Lineage: "A", Index: 5, Seq: 0, Role: chat.RoleAssistant},
			"m299": {Lineage: "A", Index: 299, Seq: 1, Role: chat.RoleAssistant},
			"m300": {Lineage: "B", Index: 300, Seq: 0, Role: chat.RoleUser},
		}, found, "m450 and m599 are in A past the fork, B holds to 399")

		found, err = s.LookupIDs(ctx, chatID, msgstore.IDMessage, []string{"m300", "m450"}, []msgstore.LineageRange{{Lineage: "A"}, {Lineage: "B"}})
		require.NoError(t, err)
		assert.Equal(t, "A", found["m300"].Lineage, "the first range holding an id answers")
		assert.Equal(t, int64(2), found["m450"].Seq)

		calls, err := s.LookupIDs(ctx, chatID, msgstore.IDCall, []string{"c7", "m7", "c8"}, fork)
		require.NoError(t, err)
		assert.Equal(t, map[string]msgstore.IDLocation{"c7": {Lineage: "A", Index: 7, Seq: 0, Role: chat.RoleAssistant}}, calls)

		var all []string
		for i := range 600 {
			all = append(all, fmt.Sprintf("m%d", i))
		}
		found, err = s.LookupIDs(ctx, chatID, msgstore.IDMessage, all, []msgstore.LineageRange{{Lineage: "A"}})
		require.NoError(t, err)
		assert.Len(t, found, 600)
		assert.Equal(t, msgstore.IDLocation{Lineage: "A", Index: 599, Seq: 2, Role: chat.RoleAssistant}, found["m599"])

		for _, args := range []struct {
			ids []string
			in  []msgstore.LineageRange
		}{{nil, fork}, {[]string{"m1"}, nil}} {
			found, err = s.LookupIDs(ctx, chatID, msgstore.IDMessage, args.ids, args.in)
			require.NoError(t, err)
			assert.Empty(t, found)
		}
		found, err = s.LookupIDs(ctx, NewChatID(t), msgstore.IDMessage, []string{"m1"}, fork)
		require.NoError(t, err)
		assert.Empty(t, found, "another chat's lineages of the same names")
	})

	t.Run("DeleteLineageLeavesOthers", func(t *testing.T) {
		s := open(t)
		chatID, otherChat := NewChatID(t), NewChatID(t)
		for _, c := range []string{chatID, otherChat} {
			for _, lineage := range []string{"A", "B"} {
				_, err := s.PutPage(ctx, c, SamplePage(t, c, lineage, 0, 0, 4))
				require.NoError(t, err)
			}
		}
		_, err := s.PutPage(ctx, chatID, SamplePage(t, chatID, "A", 1, 4, 4))
		require.NoError(t, err)
		require.NoError(t, s.DeleteLineage(ctx, chatID, "A"))
		for _, seq := range []int64{0, 1} {
			_, err = s.GetPage(ctx, chatID, msgstore.PageKey{Lineage: "A", Seq: seq})
			require.ErrorIs(t, err, msgstore.ErrPageMissing)
		}
		in := []msgstore.LineageRange{{Lineage: "A"}}
		found, err := s.LookupIDs(ctx, chatID, msgstore.IDMessage, []string{"m1", "m5"}, in)
		require.NoError(t, err)
		assert.Empty(t, found, "the lineage's id rows are gone")
		_, err = s.GetPage(ctx, chatID, msgstore.PageKey{Lineage: "B"})
		require.NoError(t, err, "the chat's other lineage stays")
		_, err = s.GetPage(ctx, otherChat, msgstore.PageKey{Lineage: "A"})
		require.NoError(t, err, "another chat's lineage of the same name stays")
		found, err = s.LookupIDs(ctx, otherChat, msgstore.IDMessage, []string{"m1"}, in)
		require.NoError(t, err)
		assert.Len(t, found, 1)
		require.NoError(t, s.DeleteLineage(ctx, chatID, "A"), "deleting again is a no-op")
		_, err = s.PutPage(ctx, chatID, SamplePage(t, chatID, "A", 0, 0, 4))
		require.NoError(t, err, "a deleted lineage can be written again (an import retried)")
	})

	t.Run("PageInvalidArguments", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		good := SamplePage(t, chatID, "L", 0, 10, 2)
		bad := map[string]func(p *msgstore.Page){
			"empty lineage":    func(p *msgstore.Page) { p.Lineage = "" },
			"NUL in lineage":   func(p *msgstore.Page) { p.Lineage = "a\x00b" },
			"negative seq":     func(p *msgstore.Page) { p.Seq = -1 },
			"negative level":   func(p *msgstore.Page) { p.Level = -1 },
			"negative first":   func(p *msgstore.Page) { p.First = -1 },
			"no messages":      func(p *msgstore.Page) { p.Count = 0 },
			"empty body":       func(p *msgstore.Page) { p.Body = nil },
			"id past the page": func(p *msgstore.Page) { p.IDs[0].Index = 12 },
			"id before it":     func(p *msgstore.Page) { p.IDs[0].Index = 9 },
			"empty id":         func(p *msgstore.Page) { p.IDs[0].ID = "" },
			"unknown kind":     func(p *msgstore.Page) { p.IDs[0].Kind = "x" },
			"no role":          func(p *msgstore.Page) { p.IDs[0].Role = "" },
			"ids on level 1":   func(p *msgstore.Page) { p.Level = 1 },
		}
		for name, change := range bad {
			p := good
			p.IDs = append([]msgstore.PageID(nil), good.IDs...)
			change(&p)
			_, err := s.PutPage(ctx, chatID, p)
			require.ErrorIs(t, err, msgstore.ErrInvalid, name)
		}
		_, err := s.PutPage(ctx, "", good)
		require.ErrorIs(t, err, msgstore.ErrInvalid)
		_, err = s.GetPage(ctx, chatID, msgstore.PageKey{})
		require.ErrorIs(t, err, msgstore.ErrInvalid)
		_, err = s.GetPage(ctx, chatID, msgstore.PageKey{Lineage: "L", Seq: -1})
		require.ErrorIs(t, err, msgstore.ErrInvalid)
		_, err = s.LookupIDs(ctx, chatID, "x", []string{"m1"}, []msgstore.LineageRange{{Lineage: "L"}})
		require.ErrorIs(t, err, msgstore.ErrInvalid)
		_, err = s.LookupIDs(ctx, chatID, msgstore.IDMessage, []string{""}, []msgstore.LineageRange{{Lineage: "L"}})
		require.ErrorIs(t, err, msgstore.ErrInvalid)
		_, err = s.LookupIDs(ctx, chatID, msgstore.IDMessage, []string{"m1"}, []msgstore.LineageRange{{}})
		require.ErrorIs(t, err, msgstore.ErrInvalid)
		require.ErrorIs(t, s.DeleteLineage(ctx, chatID, ""), msgstore.ErrInvalid)
		require.ErrorIs(t, s.DeleteLineage(ctx, "", "L"), msgstore.ErrInvalid)
		_, err = s.GetPage(ctx, chatID, good.Key())
		require.ErrorIs(t, err, msgstore.ErrPageMissing, "nothing of the refused pages was written")
	})

	t.Run("PagesAfterClose", func(t *testing.T) {
		s := open(t)
		chatID := NewChatID(t)
		p := SamplePage(t, chatID, "L", 0, 0, 2)
		require.NoError(t, s.Close())
		_, err := s.PutPage(ctx, chatID, p)
		require.ErrorIs(t, err, msgstore.ErrClosed)
		_, err = s.GetPage(ctx, chatID, p.Key())
		require.ErrorIs(t, err, msgstore.ErrClosed)
		_, err = s.LookupIDs(ctx, chatID, msgstore.IDMessage, []string{"m0"}, []msgstore.LineageRange{{Lineage: "L"}})
		require.ErrorIs(t, err, msgstore.ErrClosed)
		require.ErrorIs(t, s.DeleteLineage(ctx, chatID, "L"), msgstore.ErrClosed)
	})
}
