package keyring_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/keyring"
)

// AppendSealDeterministic appends what SealDeterministic returns, from many
// goroutines at once (its HMACs are pooled), and OpenInPlace opens it as Open does.
func TestAppendSealDeterministicAndOpenInPlace(t *testing.T) {
	r := ring(t, "k2", "k1", "k2")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			prefix := []byte("row:")
			for i := range 200 {
				plain := fmt.Appendf(nil, "message %d of goroutine %d", i, g)
				aad := fmt.Appendf(nil, "chat\x00m%d", i)
				id, want := r.SealDeterministic(plain, aad)
				gotID, got := r.AppendSealDeterministic(prefix, plain, aad)
				assert.Equal(t, "k2", gotID)
				if !assert.Equal(t, append([]byte("row:"), want...), got) {
					return
				}
				opened, err := r.OpenInPlace(id, got[len(prefix):], aad)
				require.NoError(t, err)
				assert.Equal(t, plain, opened)
			}
		})
	}
	wg.Wait()

	_, sealed := r.SealDeterministic([]byte("Alice"), []byte("a"))
	sealed[len(sealed)-1] ^= 1
	_, err := r.OpenInPlace("k2", sealed, []byte("a"))
	assert.ErrorIs(t, err, keyring.ErrNotAuthentic)
	_, err = r.OpenInPlace("k2", sealed[:keyring.NonceBytes+3], []byte("a"))
	assert.ErrorIs(t, err, keyring.ErrNotAuthentic)
	var unknown *keyring.UnknownKeyError
	_, err = r.OpenInPlace("k9", sealed, nil)
	assert.ErrorAs(t, err, &unknown)
}
