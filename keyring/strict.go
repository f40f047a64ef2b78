package keyring

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DecodeStrict decodes the JSON of a key file into v, refusing what encoding/json lets
// pass: a member name given twice in one object (JSON keeps the last, so the file
// would hold another key than the one its reader sees first), a field v lacks, and
// anything after the one JSON value. Errors name the problem, never a value.
func DecodeStrict(data []byte, v any) error {
	if err := noDuplicateNames(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("text after the JSON object")
	}
	return nil
}

// noDuplicateNames walks data's tokens and reports the first object member name given
// twice (the path to it, e.g. keys: "k1"). Syntax errors are left to the decoder.
func noDuplicateNames(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*object
	var path string // of the value that follows: its member name, or its array's path
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var top *object
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.isKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				markValueDone(stack)
				continue
			}
			name, _ := tok.(string)
			if top.names[name] {
				if top.path == "" {
					return fmt.Errorf("%q given twice", name)
				}
				return fmt.Errorf("%s: %q given twice", top.path, name)
			}
			top.names[name] = true
			top.isKey = false
			path = join(top.path, name)
			continue
		}
		if top != nil && top.names == nil {
			path = top.path // an element of an array
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &object{path: path, names: map[string]bool{}, isKey: true})
		case json.Delim('['):
			stack = append(stack, &object{path: path})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			markValueDone(stack)
		default:
			markValueDone(stack)
		}
	}
}

// object is an object or array noDuplicateNames is inside of.
type object struct {
	path  string
	names map[string]bool // nil for an array
	isKey bool            // the next token is a member name or the object's end
}

// markValueDone makes the innermost object, if it is one, expect a name again.
func markValueDone(stack []*object) {
	if n := len(stack); n > 0 && stack[n-1].names != nil {
		stack[n-1].isKey = true
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// ShowID returns id quoted for an error message, unless it is base64 of 32 bytes
// (the size of every key of these files: AES-256 keys, Ed25519 seeds and public keys),
// which is a key written in the id's place: then only its length.
func ShowID(id string) string {
	if b, err := base64.StdEncoding.DecodeString(id); err == nil && len(b) == KeyBytes {
		return fmt.Sprintf("(%d characters, not shown: it reads as a key)", len(id))
	}
	return fmt.Sprintf("%q", id)
}

// ValidID reports whether id is a valid key id: 1 to 64 of A-Z a-z 0-9 . _ -, as
// ids travel in payload metadata, envelopes and error messages.
func ValidID(id string) bool { return keyIDPattern.MatchString(id) }
