package chatmcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LineTransport is MCP's stdio transport (one JSON-RPC message a line, UTF-8, on In
// and Out) that outlives bad input: a line that is not a JSON-RPC message gets a
// JSON-RPC error on Out (see decodeLine: -32700 for text that is not JSON, -32600
// for JSON that is not a message or is a batch) and the session reads the next line.
// Blank lines are skipped. The session ends when In ends or the client closes it.
type LineTransport struct {
	In  io.ReadCloser
	Out io.Writer
}

// Stdio is the LineTransport on the process's standard input and output.
func Stdio() *LineTransport { return &LineTransport{In: os.Stdin, Out: os.Stdout} }

// Connect starts reading In; the connection's Close closes In.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	if t.In == nil || t.Out == nil {
		return nil, errors.New("chatmcp: LineTransport needs In and Out")
	}
	c := &lineConn{in: t.In, out: t.Out, lines: make(chan lineOrErr), closed: make(chan struct{})}
	go c.readLines()
	return c, nil
}

type lineOrErr struct {
	line []byte
	err  error
}

// lineConn is one session's connection: a goroutine reads lines, Read decodes them.
type lineConn struct {
	in        io.ReadCloser
	out       io.Writer
	writeMu   sync.Mutex // one whole line at a time on out
	lines     chan lineOrErr
	closed    chan struct{}
	closeOnce sync.Once
}

// readLines sends every non-blank line of in, then the error that ended it (io.EOF
// at the end), unless the connection closes first.
func (c *lineConn) readLines() {
	r := bufio.NewReader(c.in)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			select {
			case c.lines <- lineOrErr{line: line}:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			select {
			case c.lines <- lineOrErr{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// Read returns the next message; lines that are not messages are answered here.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var next lineOrErr
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case next = <-c.lines:
		}
		if next.err != nil {
			return nil, next.err
		}
		msg, r := decodeLine(next.line)
		if r == nil {
			return msg, nil
		}
		if err := c.writeLine(r.encode()); err != nil {
			return nil, err
		}
	}
}

// Write writes msg as one line.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("chatmcp: encode a message: %w", err)
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return errors.New("chatmcp: write on a closed connection")
	default:
	}
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// Close ends the connection and closes In; it may be called more than once.
func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = c.in.Close()
	})
	return err
}

// SessionID is "": a stdio connection is one session.
func (c *lineConn) SessionID() string { return "" }
