package chat

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzContentJSON: any input either fails to unmarshal as a Content, or marshals, and
// marshal → unmarshal → marshal gives the same bytes and the same Content. A content of
// an unknown type is written back exactly as it was read (trimmed of outer space).
func FuzzContentJSON(f *testing.F) {
	for _, seed := range []string{
		`{"type":"text","text":"hi"}`,
		`{"type":"text","text":""}`,
		`{"type":"text"}`,
		`{"type":"image","uri":"https://x/y.png"}`,
		`{"type":"image","data":"aGk=","mediaType":"image/png"}`,
		`{"type":"functionCall","callId":"c1","name":"lookup","arguments":"{\"q\":\"x\"}"}`,
		`{"type":"functionResult","callId":"c1","result":"","error":"boom"}`,
		`{"type":"audio","uri":"x","extra":{"k":[1,2]}}`,
		`{"type":"audio","text":{"lang":"en"},"data":[1,2]}`,
		`  {"type" : "video", "n": 1.50e2 }  `,
		`{"type":"html","body":"<b>&</b>\u2028"}`,
		`{"TYPE":"text","TEXT":"case"}`,
		`{"type":"text","text":"\ud800"}`,
		"{\"type\":\"note\",\"text\":\"\xff\"}",
		`{"type":"text","text":5}`,
		`{"text":"no type"}`,
		`{"type":""}`,
		`{"type":null}`,
		`{}`,
		`null`,
		`[]`,
		`"text"`,
		``,
		`{"type":"text","type":"audio"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Content
		if err := json.Unmarshal(data, &c); err != nil {
			return
		}
		if c.Type == "" {
			t.Fatalf("Unmarshal(%q) succeeded with no type", data)
		}
		if !c.Known() {
			direct, err := c.MarshalJSON()
			if err != nil {
				t.Fatalf("MarshalJSON of unknown %q: %v", data, err)
			}
			if want := bytes.TrimSpace(data); !bytes.Equal(direct, want) {
				t.Fatalf("unknown content altered:\n got %q\nwant %q", direct, want)
			}
		}
		first, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("Marshal of %#v (from %q): %v", c, data, err)
		}
		var again Content
		if err := json.Unmarshal(first, &again); err != nil {
			t.Fatalf("Unmarshal of own output %q: %v", first, err)
		}
		second, err := json.Marshal(again)
		if err != nil {
			t.Fatalf("second Marshal of %#v: %v", again, err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("not stable:\n first %q\nsecond %q", first, second)
		}
		if c.Known() && !reflect.DeepEqual(c, again) {
			t.Fatalf("known content changed in a round trip: %#v then %#v", c, again)
		}
		if c.Known() != again.Known() || c.Type != again.Type {
			t.Fatalf("type changed: %q then %q", c.Type, again.Type)
		}
	})
}
