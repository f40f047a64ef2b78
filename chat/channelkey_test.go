package chat

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// chatHistoryKey is ChannelKey("chat_history", "reducer=none"), computed outside Go with
//
//	printf 'chat_history:reducer=none' | openssl dgst -sha256 -binary | base64
//
// It pins the key across processes, machines and versions: exported documents carry it.
const chatHistoryKey = "VPhvGtW9akoov6Uj70Sea9zWv9a7V4qLKaV/VCpB15I="

func TestChannelKey(t *testing.T) {
	independent := func(s string) string {
		h := sha256.New()
		h.Write([]byte(s))
		return base64.StdEncoding.EncodeToString(h.Sum(nil))
	}
	tests := []struct {
		name   string
		parts  []string
		joined string // what the parts hash as
		want   string // a literal, when pinned; else computed from joined
	}{
		{"chat history, pinned", []string{ChannelChatHistory, "reducer=none"}, "chat_history:reducer=none", chatHistoryKey},
		{"three parts, pinned", []string{"a", "b", "c"}, "a:b:c", "sO4E+IDE/0JhR54ueCK3QQruTHFZ9Bha1bDYijErSV4="},
		{"no parts is the empty string", nil, "", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
		{"one part", []string{"chat_history"}, "chat_history", ""},
		{"service thread with endpoint", []string{"responses_thread", "reducer=none", "endpoint=https://api.openai.com/v1"},
			"responses_thread:reducer=none:endpoint=https://api.openai.com/v1", ""},
		{"empty parts keep their separators", []string{"", "x", ""}, ":x:", ""},
		{"UTF-8", []string{"canal", "résumé=ü"}, "canal:résumé=ü", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ChannelKey(tt.parts...)
			if want := independent(tt.joined); got != want {
				t.Errorf("ChannelKey(%q) = %s, want base64(sha256(%q)) = %s", tt.parts, got, tt.joined, want)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("ChannelKey(%q) = %s, want pinned %s", tt.parts, got, tt.want)
			}
			if len(got) != 44 || !strings.HasSuffix(got, "=") {
				t.Errorf("ChannelKey(%q) = %s, want 44 characters of padded standard base64", tt.parts, got)
			}
			if _, err := base64.StdEncoding.DecodeString(got); err != nil {
				t.Errorf("ChannelKey(%q) = %s is not standard base64: %v", tt.parts, got, err)
			}
		})
	}
}

func TestChannelKeyDistinguishesParts(t *testing.T) {
	pairs := [][2][]string{
		{{"chat_history", "reducer=none"}, {"chat_history", "reducer=summary"}},
		{{"chat_history", "reducer=none"}, {"reducer=none", "chat_history"}},
		{{"a", "b"}, {"ab"}},
		{{"t", "reducer=none", "endpoint=https://a/v1"}, {"t", "reducer=none", "endpoint=https://b/v1"}},
	}
	for _, p := range pairs {
		if a, b := ChannelKey(p[0]...), ChannelKey(p[1]...); a == b {
			t.Errorf("ChannelKey(%q) == ChannelKey(%q) = %s", p[0], p[1], a)
		}
	}
}

// channelKeyChildEnv makes TestChannelKeyChildProcess print keys instead of skipping.
const channelKeyChildEnv = "AGENTCHAT_CHANNELKEY_CHILD"

// crossProcessParts are hashed by the child process and by this one.
var crossProcessParts = [][]string{
	{ChannelChatHistory, "reducer=none"},
	{"responses_thread", "reducer=none", "endpoint=http://localhost:11434/v1"},
	{"x"},
}

// TestChannelKeyChildProcess is the child of TestChannelKeyAcrossProcesses; run
// directly it does nothing.
func TestChannelKeyChildProcess(t *testing.T) {
	if os.Getenv(channelKeyChildEnv) != "1" {
		t.Skip("runs only as the child of TestChannelKeyAcrossProcesses")
	}
	for i, parts := range crossProcessParts {
		fmt.Printf("channelkey %d %s\n", i, ChannelKey(parts...))
	}
}

func TestChannelKeyAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChannelKeyChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), channelKeyChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	got := map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var i int
		var key string
		if n, _ := fmt.Sscanf(sc.Text(), "channelkey %d %s", &i, &key); n == 2 {
			got[i] = key
		}
	}
	if len(got) != len(crossProcessParts) {
		t.Fatalf("child printed %d keys, want %d:\n%s", len(got), len(crossProcessParts), out)
	}
	for i, parts := range crossProcessParts {
		if want := ChannelKey(parts...); got[i] != want {
			t.Errorf("ChannelKey(%q) = %s in the child, %s here", parts, got[i], want)
		}
	}
	if got[0] != chatHistoryKey {
		t.Errorf("child's chat_history key = %s, want pinned %s", got[0], chatHistoryKey)
	}
}
