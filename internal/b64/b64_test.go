package b64

import (
	"bytes"
	stdbase64 "encoding/base64"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Append writes what encoding/base64 writes, at every length around the SIMD
// blocks' edges and for large inputs.
func TestAppendIsStandardBase64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range append([]int{0, 1, 2, 3, 4, 11, 12, 13, 23, 24, 25, 31, 32, 33, 47, 48, 49, 63, 64, 65, 1 << 20}, r.IntN(5000)) {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		var b bytes.Buffer
		b.WriteString("prefix")
		Append(&b, src)
		require.Equal(t, "prefix"+stdbase64.StdEncoding.EncodeToString(src), b.String(), "length %d", n)
	}
}

// Decode accepts exactly what encoding/base64's StdEncoding accepts, with the same
// bytes: valid inputs, and inputs with one byte changed, cut or doubled (seeded).
func TestDecodeAgreesWithEncodingBase64(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\r\n -_.\x00\xff")
	for i := range 20000 {
		src := make([]byte, r.IntN(200))
		for j := range src {
			src[j] = byte(r.Uint32())
		}
		in := []byte(stdbase64.StdEncoding.EncodeToString(src))
		switch i % 4 {
		case 1:
			if len(in) > 0 {
				in[r.IntN(len(in))] = alphabet[r.IntN(len(alphabet))]
			}
		case 2:
			in = in[:r.IntN(len(in)+1)]
		case 3:
			if len(in) > 0 {
				k := r.IntN(len(in))
				in = append(in[:k:k], append([]byte{alphabet[r.IntN(len(alphabet))]}, in[k:]...)...)
			}
		}
		want, wantErr := stdbase64.StdEncoding.DecodeString(string(in))
		got, err := Decode(in)
		require.Equal(t, wantErr != nil, err != nil, "input %q: encoding/base64 error %v, Decode error %v", in, wantErr, err)
		if err == nil {
			require.Equal(t, want, got, "input %q", in)
		}
	}
}
