package chatstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// node is one JSON value as read, with object members in order: what the shape check
// walks to name the field of a problem. Numbers keep their literal.
type node struct {
	kind  byte // '{' object, '[' array, '"' string, '0' number, 't' boolean, 'n' null
	str   string
	keys  []string // object members, in order
	vals  []*node
	elems []*node // array elements
}

// maxDepth bounds the nesting of a document, as encoding/json and jcs do.
const maxDepth = 10000

// parseTree reads b as one JSON value. A syntax error, a duplicate member name or data
// after the value is a *FieldError naming where it happened.
func parseTree(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	p := treeParser{dec: dec}
	root, err := p.value()
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fieldErr("", "has data after the document (byte offset "+strconv.FormatInt(dec.InputOffset(), 10)+")")
	}
	return root, nil
}

// treeParser builds a node tree from the decoder's tokens. The path of the value being
// read is kept as a stack of steps and written out only for an error.
type treeParser struct {
	dec  *json.Decoder
	path []step
}

// step is one step of a path: a member name, or an index when key is nil.
type step struct {
	key *string
	i   int
}

// maxPathLen bounds the length of a path in an error.
const maxPathLen = 200

func (p *treeParser) fail(problem string) error {
	var b strings.Builder
	for _, s := range p.path {
		if b.Len() > maxPathLen {
			b.WriteString("…")
			break
		}
		if s.key == nil {
			b.WriteString("[" + strconv.Itoa(s.i) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(*s.key)
	}
	return fieldErr(b.String(), problem)
}

func (p *treeParser) syntax(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return p.fail("is not valid JSON: the document ends early")
	}
	msg := err.Error()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg += " (byte offset " + strconv.FormatInt(se.Offset, 10) + ")"
	}
	return p.fail("is not valid JSON: " + msg)
}

func (p *treeParser) value() (*node, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if len(p.path) >= maxDepth {
			return nil, p.fail("is nested deeper than " + strconv.Itoa(maxDepth) + " levels")
		}
		if t == '{' {
			return p.object()
		}
		return p.array()
	case string:
		return &node{kind: '"', str: t}, nil
	case json.Number:
		return &node{kind: '0', str: string(t)}, nil
	case bool:
		return &node{kind: 't', str: strconv.FormatBool(t)}, nil
	default: // nil
		return &node{kind: 'n'}, nil
	}
}

func (p *treeParser) object() (*node, error) {
	n := &node{kind: '{'}
	seen := map[string]bool{}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.syntax(err)
		}
		key, _ := tok.(string)
		p.path = append(p.path, step{key: &key})
		if seen[key] {
			return nil, p.fail("appears twice")
		}
		seen[key] = true
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		n.keys, n.vals = append(n.keys, key), append(n.vals, v)
	}
	if _, err := p.dec.Token(); err != nil {
		return nil, p.syntax(err)
	}
	return n, nil
}

func (p *treeParser) array() (*node, error) {
	n := &node{kind: '['}
	for p.dec.More() {
		p.path = append(p.path, step{i: len(n.elems)})
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		n.elems = append(n.elems, v)
	}
	if _, err := p.dec.Token(); err != nil {
		return nil, p.syntax(err)
	}
	return n, nil
}

// what names the kind of n for an error message.
func (n *node) what() string {
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string (" + strconv.Quote(clip(n.str)) + ")"
	case '0':
		return "a number (" + clip(n.str) + ")"
	case 't':
		return "a boolean (" + n.str + ")"
	}
	return "null"
}

// get returns the member name of object n, or nil.
func (n *node) get(name string) *node {
	for i, k := range n.keys {
		if k == name {
			return n.vals[i]
		}
	}
	return nil
}

// clip shortens s for an error message to at most 40 bytes, cut at a character's
// boundary and with any bytes that are not UTF-8 replaced by U+FFFD: an error's text
// must be valid UTF-8 (it travels as a protobuf string in Temporal's failures).
func clip(s string) string {
	clipped := len(s) > 40
	if clipped {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if clipped {
		s += "…"
	}
	return s
}
