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
// Blank lines are skipped. An answer without a JSON-RPC code gets one (withCode).
//
// The session ends when In ends (or fails) or the client closes it. At the end of In
// it first answers every request it read: the session ends once each answer is
// written to Out, a write to Out fails, the connection closes or the context ends.
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
	c := &lineConn{in: t.In, out: t.Out, lines: make(chan lineOrErr), closed: make(chan struct{}),
		calls: map[jsonrpc.ID]string{}, answered: make(chan struct{}, 1)}
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

	mu          sync.Mutex
	calls       map[jsonrpc.ID]string // the method of each request read and not answered yet
	initialized bool                  // initialize was answered with a result
	writeFailed bool                  // a write to out failed: no answer will reach the client
	answered    chan struct{}         // signalled after each answer written or failed
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
			return nil, c.drain(ctx, next.err)
		}
		msg, r := decodeLine(next.line)
		if r == nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				c.mu.Lock()
				if _, dup := c.calls[req.ID]; !dup { // the SDK refuses a duplicate id under id null
					c.calls[req.ID] = req.Method
				}
				c.mu.Unlock()
			}
			return msg, nil
		}
		if err := c.writeLine(r.encode()); err != nil {
			return nil, err
		}
	}
}

// drain waits until every request read has its answer written (or a write failed,
// the connection closed, ctx ended), and returns end, the error that ended the input,
// or ctx's error.
func (c *lineConn) drain(ctx context.Context, end error) error {
	for {
		c.mu.Lock()
		done := len(c.calls) == 0 || c.writeFailed
		c.mu.Unlock()
		if done {
			return end
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.closed:
			return end
		case <-c.answered:
		}
	}
}

// Write writes msg as one line; an answer without a JSON-RPC code gets one
// (withCode).
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	res, isAnswer := msg.(*jsonrpc.Response)
	if isAnswer {
		c.mu.Lock()
		method, initialized := c.calls[res.ID], c.initialized
		c.mu.Unlock()
		msg = coded(res, method, initialized, "")
	}
	err := c.write(ctx, msg)
	if isAnswer {
		c.mu.Lock()
		if method := c.calls[res.ID]; method == "initialize" && res.Error == nil && err == nil {
			c.initialized = true
		}
		delete(c.calls, res.ID)
		c.writeFailed = c.writeFailed || err != nil
		c.mu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return err
}

func (c *lineConn) write(ctx context.Context, msg jsonrpc.Message) error {
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
