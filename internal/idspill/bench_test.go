package idspill_test

import (
	"math/rand/v2"
	"testing"

	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/idspill"
)

// BenchmarkPut: new keys put into a Set that holds b.N of them by the end (the cost of
// a message id past chatstate.SpillAfter in a long document's check).
func BenchmarkPut(b *testing.B) {
	s, err := idspill.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := range b.N {
		if _, dup, err := s.Put(chatstate.IDKey{r.Uint64(), r.Uint64()}, int64(i)); err != nil || dup {
			b.Fatal(err, dup)
		}
	}
}
