package envelope_test

import (
	"crypto/ed25519"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/keyring"
)

// Wraps holds exactly when Seal with the options would wrap as the opened envelope
// was wrapped: the same current key (or none) and the same signer (or none).
func TestWrapsMatchesHowSealWraps(t *testing.T) {
	f, err := keyring.Generate("k1", "k2")
	require.NoError(t, err)
	k12, err := keyring.New(f) // seals with k2
	require.NoError(t, err)
	k1, err := keyring.New(keyring.File{Current: "k1", Keys: f.Keys})
	require.NoError(t, err)
	s1, s2 := signer(t, "s1"), signer(t, "s2")
	all := map[string]envelope.Options{
		"plain": {}, "k1": {Ring: k1}, "k2": {Ring: k12}, "s1": {Signer: s1}, "s2": {Signer: s2},
		"k1+s1": {Ring: k1, Signer: s1}, "k2+s1": {Ring: k12, Signer: s1},
	}
	for sealedBy, so := range all {
		b, err := envelope.Seal([]byte(doc), "sha256:00ff", so)
		require.NoError(t, err)
		for reader, ro := range all {
			opener := ro
			opener.Ring = k12 // opens both keys
			opener.Verify = nil
			if so.Signer != nil {
				opener.Verify = map[string]ed25519.PublicKey{so.Signer.KeyID: so.Signer.Key.Public().(ed25519.PublicKey)}
			}
			_, info, err := envelope.Open(b, opener)
			require.NoError(t, err, "%s opened by %s", sealedBy, reader)
			assert.Equal(t, sealedBy == reader, ro.Wraps(info), "sealed by %s, options of %s", sealedBy, reader)
		}
	}
}
