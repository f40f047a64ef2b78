package chat_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat/chat"
)

// OpenAI's rule: a-z, A-Z, 0-9, "_" and "-", 1 to 64 of them.
func TestFunctionNamePatternIsOpenAIs(t *testing.T) {
	for _, ok := range []string{"a", "look_up-2", strings.Repeat("x", chat.MaxFunctionNameLen)} {
		assert.True(t, chat.FunctionNamePattern.MatchString(ok), ok)
	}
	for _, bad := range []string{"", "look up", "é", "a.b", strings.Repeat("x", chat.MaxFunctionNameLen+1)} {
		assert.False(t, chat.FunctionNamePattern.MatchString(bad), bad)
	}
}

func FuzzFunctionNameKeepsThePattern(f *testing.F) {
	for _, s := range []string{"Dr. Who?", "Jörg", strings.Repeat("é", 100), "\xff\xfe", "ok_name"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := chat.FunctionName(s)
		if s == "" {
			assert.Equal(t, "", got)
			return
		}
		assert.Regexp(t, chat.FunctionNamePattern, got)
		if chat.FunctionNamePattern.MatchString(s) {
			assert.Equal(t, s, got, "a name is kept as it is")
		}
	})
}
