package keyring_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat/keyring"
)

// DecodeStrict finds a name given twice at any depth, and only then: equal names in
// different objects, or in objects of one array, are not twice.
func TestDecodeStrictFindsNamesGivenTwiceAtAnyDepth(t *testing.T) {
	for _, ok := range []string{
		`{"a":[{"x":1},{"x":2}],"b":{"x":{"x":[1,{"x":null}]}},"c":"x"}`,
		`{}`, `[]`, `{"a":[]}`, ` {"a":{}} `,
	} {
		var v any
		assert.NoError(t, keyring.DecodeStrict([]byte(ok), &v), ok)
	}
	for file, want := range map[string]string{
		`{"a":1,"b":2,"a":3}`:               `"a" given twice`,
		`{"a":{"b":1,"b":1}}`:               `a: "b" given twice`,
		`{"a":[{"x":1},{"y":1,"y":2}]}`:     `a: "y" given twice`,
		`{"a":{"b":{"c":[],"c":{}}},"d":1}`: `a.b: "c" given twice`,
		`{"a":1} {"a":1}`:                   "text after the JSON object",
		`{"a":1`:                            "unexpected EOF",
	} {
		var v any
		err := keyring.DecodeStrict([]byte(file), &v)
		if assert.Error(t, err, file) {
			assert.Contains(t, err.Error(), want, file)
		}
	}
}
