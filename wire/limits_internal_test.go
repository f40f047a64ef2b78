package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every ASCII byte alone, and a typical chat text, measure as encoding/json writes
// them.
func TestJSONStringBytesIsTheEncodedLength(t *testing.T) {
	for b := range 128 {
		s := string(rune(b))
		enc, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonStringBytes(s); got != len(enc)-2 {
			t.Errorf("byte %#x: %d, encoding/json writes %d", b, got, len(enc)-2)
		}
	}
	enc, _ := json.Marshal(chatText)
	if got := jsonStringBytes(chatText); got != len(enc)-2 {
		t.Errorf("chat text: %d, encoding/json writes %d", got, len(enc)-2)
	}
}

// chatText is a text of about 600 bytes, as chats hold: ASCII words, a few quotes,
// accented letters, HTML and a newline.
var chatText = strings.Repeat("the order shipped yesterday; please check whether the customer's \"priority\" flag is set — café naïve 猫 <b>bold</b> & more\n", 5)

func BenchmarkJSONStringBytes(b *testing.B) {
	b.SetBytes(int64(len(chatText)))
	for b.Loop() {
		jsonStringBytes(chatText)
	}
}
