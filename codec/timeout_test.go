package codec_test

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/codec"
)

// A client that sends its headers and then stalls its body is cut off after the
// server's read timeout instead of holding a connection (and a goroutine) forever.
func TestServerCutsARequestWhoseBodyStalls(t *testing.T) {
	h, err := codec.NewHandler(newRing(t, "k1", "k1"), codec.HandlerOptions{Token: "tok"})
	require.NoError(t, err)
	srv := codec.NewServer(h, nil)
	srv.ReadTimeout = 300 * time.Millisecond // codec.ReadTimeout is a minute
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /decode HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok\r\nContent-Length: 100\r\n\r\n{\"pay"))
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		resp.Body.Close()
		assert.NotEqual(t, http.StatusOK, resp.StatusCode)
	}
	assert.Less(t, time.Since(start), 5*time.Second, "cut after the read timeout")
	assert.Positive(t, codec.ReadTimeout)
	assert.Positive(t, codec.NewServer(h, nil).ReadTimeout, "NewServer sets it")
}
