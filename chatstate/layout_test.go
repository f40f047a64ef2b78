package chatstate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
)

// A message's member layout is written three times: chat.Message's and chat.Content's
// JSON (tags, Content.MarshalJSON), the encoder (encode.go) and the fast reader
// (fastread.go). These tests hold the last two to the first with a message whose every
// field, found by reflection, is set to a value of its own: a field added to
// chat.Message or chat.Content (or to a struct they come to hold) is covered without
// editing them.

// knownContentTypes are the content types of chat-state-v1.md; fastContentTypes those
// the fast reader reads itself (knownContent), the others going to encoding/json.
var (
	knownContentTypes = []string{chat.ContentText, chat.ContentImage, chat.ContentFunctionCall, chat.ContentFunctionResult}
	fastContentTypes  = []string{chat.ContentText, chat.ContentFunctionCall, chat.ContentFunctionResult}
)

// filler sets every exported field not tagged json:"-" to a value no other field has.
type filler struct{ n int }

func (f *filler) next() int { f.n++; return f.n }

// fill sets v (settable) to a non-zero value, recursively: each string, number and time
// distinct, bools true, one element in each slice and map, pointers to a filled value.
func (f *filler) fill(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Interface().(type) {
	case time.Time:
		v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 0, 0, f.next(), 123456789, time.UTC)))
		return
	case json.RawMessage:
		v.SetBytes([]byte(fmt.Sprintf(`{"n":%d}`, f.next())))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("v%d", f.next()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.next()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.next()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(f.next()) + 0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(t, v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		f.fill(t, v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		f.fill(t, k)
		f.fill(t, e)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if !sf.IsExported() || sf.Tag.Get("json") == "-" {
				continue
			}
			f.fill(t, v.Field(i))
		}
	default:
		t.Fatalf("layout test: cannot fill a %s; teach filler.fill this kind", v.Type())
	}
}

// fullMessage is a chat.Message with every field set, and one content of each known
// type with every field set (each type's JSON keeps only its own fields).
func fullMessage(t *testing.T) chat.Message {
	var f filler
	var m chat.Message
	f.fill(t, reflect.ValueOf(&m).Elem())
	m.Contents = nil
	for _, typ := range knownContentTypes {
		var c chat.Content
		f.fill(t, reflect.ValueOf(&c).Elem())
		c.Type = typ
		m.Contents = append(m.Contents, c)
	}
	return m
}

// parsed is b read as plain JSON values, for a comparison that ignores member order.
func parsed(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v), "%s", b)
	return v
}

// TestEncoderWritesEveryFieldAsEncodingJSON: the encoder writes the message that
// encoding/json writes, member for member.
func TestEncoderWritesEveryFieldAsEncodingJSON(t *testing.T) {
	m := fullMessage(t)
	want, err := json.Marshal(m)
	require.NoError(t, err)
	got, err := EncodeMessage(m)
	require.NoError(t, err)
	assert.Equal(t, parsed(t, want), parsed(t, got), "chatstate's encoder and chat.Message's JSON disagree:\nencoder       %s\nencoding/json %s", got, want)
}

// TestFastReaderReadsEveryField: the fast reader reads the encoder's bytes itself (no
// fallback) into what encoding/json reads, and that is the message that was written:
// every message field, and each content's fields of its type.
func TestFastReaderReadsEveryField(t *testing.T) {
	m := fullMessage(t)
	b, err := EncodeMessage(m)
	require.NoError(t, err)
	got, err := readMessage(b)
	require.NoError(t, err, "the fast reader does not read the encoder's layout: %s", b)

	var want chat.Message
	require.NoError(t, json.Unmarshal(b, &want))
	assert.Equal(t, want, got)

	// encoding/json keeps every field of the message itself.
	onlyMessage := func(m chat.Message) chat.Message { m.Contents = nil; return m }
	assert.Equal(t, onlyMessage(m), onlyMessage(got))
	require.Len(t, got.Contents, len(m.Contents))
	for i, c := range m.Contents {
		j, err := json.Marshal(c)
		require.NoError(t, err)
		var kept chat.Content // c as its type's JSON keeps it
		require.NoError(t, json.Unmarshal(j, &kept))
		assert.Equal(t, kept, got.Contents[i], "content of type %s", c.Type)
	}
}

// TestFastReaderReadsEachContentItself: each content type the fast reader claims is
// read by its own code (knownContent), not by the fallback to encoding/json, which
// would hide a drift behind a slower but right answer.
func TestFastReaderReadsEachContentItself(t *testing.T) {
	m := fullMessage(t)
	for _, c := range m.Contents {
		var e encoder
		require.NoError(t, e.content("message", 0, 0, c))
		r := reader{b: e.b}
		got, ok := r.knownContent()
		if !slices.Contains(fastContentTypes, c.Type) {
			assert.False(t, ok, "type %s is read by the fast reader: add it to fastContentTypes", c.Type)
			continue
		}
		require.True(t, ok, "the fast reader does not read its layout of a %s content: %s", c.Type, e.b)
		assert.Equal(t, len(e.b), r.i, "the fast reader stops inside %s", e.b)
		var want chat.Content
		require.NoError(t, json.Unmarshal(e.b, &want))
		assert.Equal(t, want, got)
	}
}
