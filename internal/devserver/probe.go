package devserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// quietLogger keeps the SDK client from writing to stdout during probes.
var quietLogger = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

// clientOptions are the options of the short-lived probe clients.
func clientOptions(address, namespace string, timeout time.Duration) client.Options {
	return client.Options{
		HostPort:                address,
		Namespace:               namespace,
		Logger:                  quietLogger,
		WorkerHeartbeatInterval: -1, // probes run no workers
		ConnectionOptions:       client.ConnectionOptions{GetSystemInfoTimeout: timeout},
	}
}

// ClientOptions returns client options for this server and namespace with a
// logger that discards the SDK's own log lines. Callers add what they need
// (data converter, interceptors) before client.Dial.
func (s *Server) ClientOptions(namespace string) client.Options {
	return client.Options{HostPort: s.Address, Namespace: namespace, Logger: quietLogger}
}

// Reachable reports whether a Temporal frontend at address answers
// CheckHealth within timeout (which bounds the dial and the call; no retry
// outlives it).
func Reachable(ctx context.Context, address string, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := client.DialContext(ctx, clientOptions(address, DefaultNamespace, timeout))
	if err != nil {
		return false
	}
	defer c.Close()
	_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
	return err == nil
}

// probeReady returns nil when a client connects to address, CheckHealth
// succeeds and every namespace can be described.
func probeReady(ctx context.Context, address string, namespaces []string) error {
	timeout := probeTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	opts := clientOptions(address, DefaultNamespace, timeout)
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer c.Close()
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		return err
	}
	nc, err := client.NewNamespaceClient(opts)
	if err != nil {
		return fmt.Errorf("namespace client: %w", err)
	}
	defer nc.Close()
	for _, ns := range namespaces {
		if _, err := nc.Describe(ctx, ns); err != nil {
			return fmt.Errorf("describe namespace %q: %w", ns, err)
		}
	}
	return nil
}

// FreeAddress returns "127.0.0.1:<port>" for a port that was free a moment
// ago (another process may still take it before it is used).
func FreeAddress() (string, error) {
	port, err := freePort("127.0.0.1")
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", port), nil
}

// freePort asks the kernel for a free TCP port on host.
func freePort(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("devserver: find a free port on %s: %w", host, err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

func freePortInt(host string) (int, error) {
	p, err := freePort(host)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(p)
}
