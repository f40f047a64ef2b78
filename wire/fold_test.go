package wire

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// FoldIndex over generated chats (seeded): pages of random sizes are added in random
// batches, each batch folded, and after every fold the index covers every message once,
// in order, highest levels first, with fewer than fanout references a level; every page
// it writes lists fanout consecutive pages of the level below; each level's pages are
// numbered 0, 1, 2… with no gap or repeat (PagesWritten gives the next); and folding the
// same index again writes the same pages.
func TestFoldIndexKeepsTheIndexSmallAndWhole(t *testing.T) {
	for _, fanout := range []int{2, 3, 4, 7, IndexFanout} {
		t.Run(fmt.Sprint(fanout), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(fanout), 20))
			var (
				index   []PageRef
				written = map[int][]PageRef{} // by level: the pages written, in order
				next    int64                 // the next message
				seq0    int64
			)
			write := func(level int, seq int64, refs []PageRef) (PageRef, error) {
				require.Len(t, refs, fanout)
				require.Equal(t, int64(len(written[level])), seq, "level %d pages are numbered in order", level)
				var count int64
				for i, r := range refs {
					require.Equal(t, level-1, r.Level)
					if i > 0 {
						require.Equal(t, refs[i-1].First+refs[i-1].Count, r.First)
					}
					count += r.Count
				}
				ref := PageRef{Level: level, Seq: seq, First: refs[0].First, Count: count, Digest: fmt.Sprintf("d%d/%d", level, seq)}
				written[level] = append(written[level], ref)
				return ref, nil
			}
			steps := 300
			if fanout == IndexFanout {
				steps = 3000
			}
			for range steps {
				batch := make([]PageRef, 1+rng.IntN(2*fanout))
				for i := range batch {
					n := int64(1 + rng.IntN(256))
					batch[i] = PageRef{Seq: seq0, First: next, Count: n}
					seq0, next = seq0+1, next+n
				}
				require.Equal(t, batch[0].Seq, PagesWritten(index, 0, fanout), "the next level-0 page's number")
				before := slices.Clone(index)
				folded, err := FoldIndex(append(slices.Clip(index), batch...), fanout, write)
				require.NoError(t, err)
				require.Equal(t, before, index, "FoldIndex does not change its input")
				index = folded

				var at int64
				perLevel := map[int]int{}
				for i, r := range index {
					require.Equal(t, at, r.First, "ref %d follows", i)
					at += r.Count
					if i > 0 {
						require.LessOrEqual(t, r.Level, index[i-1].Level, "highest levels first")
					}
					perLevel[r.Level]++
				}
				require.Equal(t, next, at, "the index covers every message")
				for level, n := range perLevel {
					require.Less(t, n, fanout, "level %d", level)
				}
				require.Equal(t, seq0, PagesWritten(index, 0, fanout), "level 0")
				for level := 1; level <= len(written)+1; level++ {
					require.Equal(t, int64(len(written[level])), PagesWritten(index, level, fanout), "level %d", level)
				}
			}
			require.NotEmpty(t, written[1], "pages of level 1 were written")
			if fanout <= 4 {
				require.NotEmpty(t, written[3], "and of level 3")
			}
			// The same index folded again writes the same pages.
			n := len(written[1])
			again := slices.Clone(index)
			for range fanout - perLevelCount(index, 0) {
				again = append(again, PageRef{Seq: seq0, First: next, Count: 1})
				seq0, next = seq0+1, next+1
			}
			redo := map[int][]PageRef{}
			for range 2 {
				clear(redo)
				_, err := FoldIndex(again, fanout, func(level int, seq int64, refs []PageRef) (PageRef, error) {
					r := PageRef{Level: level, Seq: seq, First: refs[0].First, Count: 1}
					redo[level] = append(redo[level], r)
					return r, nil
				})
				require.NoError(t, err)
				require.Len(t, redo[1], 1)
				require.Equal(t, int64(n), redo[1][0].Seq)
			}
		})
	}
}

func perLevelCount(index []PageRef, level int) int {
	n := 0
	for _, r := range index {
		if r.Level == level {
			n++
		}
	}
	return n
}

// A write that fails fails the fold, and its error is FoldIndex's.
func TestFoldIndexReturnsTheWritesError(t *testing.T) {
	refs := []PageRef{{First: 0, Count: 1}, {Seq: 1, First: 1, Count: 1}}
	boom := errors.New("store down")
	_, err := FoldIndex(refs, 2, func(int, int64, []PageRef) (PageRef, error) { return PageRef{}, boom })
	require.ErrorIs(t, err, boom)
	out, err := FoldIndex(refs[:1], 2, func(int, int64, []PageRef) (PageRef, error) { return PageRef{}, boom })
	require.NoError(t, err, "nothing to fold: no write")
	require.Equal(t, refs[:1], out)
}

func TestIndexRefNamesItsLevel(t *testing.T) {
	require.Equal(t, "history index page 2 of level 1 (messages 0 to 511)", PageRef{Level: 1, Seq: 2, First: 0, Count: 512}.String())
	require.Equal(t, "history page 7 (messages 1792 to 2047)", PageRef{Seq: 7, First: 1792, Count: 256}.String())
}
