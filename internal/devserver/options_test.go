package devserver

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flagValues returns every value given to flag in args, in order.
func flagValues(args []string, flag string) []string {
	var out []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			out = append(out, args[i+1])
		}
	}
	return out
}

func TestResolveDefaults(t *testing.T) {
	p, err := Options{}.resolve()
	require.NoError(t, err)
	assert.Equal(t, DefaultAddress, p.address())
	assert.Equal(t, "http://127.0.0.1:8233", p.uiURL(), "UI on gRPC port + 1000")
	assert.Equal(t, DefaultReadyTimeout, p.readyTimeout)
	args := p.args()
	assert.Equal(t, []string{"server", "start-dev"}, args[:2])
	assert.Equal(t, []string{"warn"}, flagValues(args, "--log-level"))
	assert.Equal(t, []string{"json"}, flagValues(args, "--log-format"))
	assert.Empty(t, flagValues(args, "--db-filename"), "in memory by default")
	assert.Empty(t, flagValues(args, "--namespace"), "the CLI registers default itself")
	assert.NotEqual(t, flagValues(args, "--http-port"), flagValues(args, "--metrics-port"))
	assert.Len(t, flagValues(args, "--dynamic-config-value"), len(DefaultDynamicConfig))
}

func TestResolvePicksFreePorts(t *testing.T) {
	p, err := Options{Address: "localhost:0"}.resolve()
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", p.host, "the server needs an IP")
	port, err := strconv.Atoi(p.port)
	require.NoError(t, err)
	assert.Positive(t, port)
	assert.NotEqual(t, port+uiPortOffset, p.uiPort, "a picked gRPC port gets a picked UI port")
	assert.Positive(t, p.uiPort)
}

func TestResolveUIPort(t *testing.T) {
	p, err := Options{Address: "127.0.0.1:7000", UIPort: Headless}.resolve()
	require.NoError(t, err)
	assert.Empty(t, p.uiURL())
	assert.Contains(t, p.args(), "--headless")
	assert.Empty(t, flagValues(p.args(), "--ui-port"))

	p, err = Options{Address: "127.0.0.1:7000", UIPort: 9000}.resolve()
	require.NoError(t, err)
	assert.Equal(t, []string{"9000"}, flagValues(p.args(), "--ui-port"))

	_, err = Options{Address: "127.0.0.1:65000"}.resolve()
	assert.ErrorContains(t, err, "UI port", "65000 + 1000 is out of range")
	_, err = Options{UIPort: -2}.resolve()
	assert.Error(t, err)
}

func TestResolveNamespacesAndDynamicConfig(t *testing.T) {
	p, err := Options{
		Namespaces:    []string{"second", "default", "second", "", "third"},
		DynamicConfig: map[string]string{"history.maxInFlightUpdates": "3", "limit.maxIDLength": "200"},
	}.resolve()
	require.NoError(t, err)
	assert.Equal(t, []string{"default", "second", "third"}, p.namespaces)
	args := p.args()
	assert.Equal(t, []string{"second", "third"}, flagValues(args, "--namespace"))
	dc := flagValues(args, "--dynamic-config-value")
	assert.Contains(t, dc, "history.maxInFlightUpdates=3", "options override the defaults")
	assert.NotContains(t, dc, "history.maxInFlightUpdates=10")
	assert.Contains(t, dc, "limit.maxIDLength=200", "options add keys")
	assert.Contains(t, dc, "frontend.enableExecuteMultiOperation=true", "defaults stay")
	assert.Equal(t, "10", DefaultDynamicConfig["history.maxInFlightUpdates"], "resolve must not change the defaults")
}

func TestResolveDetach(t *testing.T) {
	_, err := Options{Detach: true}.resolve()
	assert.ErrorContains(t, err, "PIDFile")

	p, err := Options{Detach: true, DBFile: "/x/y.db"}.resolve()
	require.NoError(t, err)
	assert.Equal(t, "/x/y.db.pid", p.pidFile)

	p, err = Options{Detach: true, DBFile: "/x/y.db", PIDFile: "/run/t.pid"}.resolve()
	require.NoError(t, err)
	assert.Equal(t, "/run/t.pid", p.pidFile)
}

func TestResolveRejectsBadAddress(t *testing.T) {
	for _, a := range []string{"7233", "127.0.0.1:http", "127.0.0.1:70000"} {
		_, err := Options{Address: a}.resolve()
		assert.Error(t, err, a)
		if err != nil {
			assert.True(t, strings.Contains(err.Error(), a), "error names the address: %v", err)
		}
	}
}
