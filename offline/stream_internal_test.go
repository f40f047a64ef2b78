package offline

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		"":                      nil,
		"   ":                   {"   "},
		"one":                   {"one"},
		"[offline] a: hi":       {"[offline]", " a:", " hi"},
		"  lead and trail \n":   {"  lead", " and", " trail \n"},
		"tabs\tand\nnew  lines": {"tabs", "\tand", "\nnew", "  lines"},
	} {
		assert.Equal(t, want, splitWords(in), "%q", in)
	}
}

func TestSplitRunes(t *testing.T) {
	assert.Nil(t, splitRunes("", 3))
	assert.Equal(t, []string{"abc", "def", "g"}, splitRunes("abcdefg", 3))
	assert.Equal(t, []string{"åäö", "€"}, splitRunes("åäö€", 3))
}

// FuzzSplitWords checks that streaming never changes a text: the pieces join to it, and
// each holds exactly one word.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"", " ", "a b", "  x\ty \n", "[offline] a: \u00a0 ok\u2003!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pieces := splitWords(s)
		if strings.Join(pieces, "") != s {
			t.Fatalf("pieces %q do not join to %q", pieces, s)
		}
		if len(strings.Fields(s)) == 0 {
			return
		}
		if len(pieces) != len(strings.Fields(s)) {
			t.Fatalf("%d pieces for %d words: %q", len(pieces), len(strings.Fields(s)), pieces)
		}
		for _, p := range pieces {
			if len(strings.Fields(p)) != 1 {
				t.Fatalf("piece %q of %q is not one word", p, s)
			}
		}
	})
}

// FuzzSplitRunes checks argument fragments join to the arguments and never split a rune.
func FuzzSplitRunes(f *testing.F) {
	f.Add(`{"city":"Malmö"}`, 3)
	f.Add("", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n <= 0 || n > 64 {
			return
		}
		pieces := splitRunes(s, n)
		if strings.Join(pieces, "") != s {
			t.Fatalf("pieces %q do not join to %q", pieces, s)
		}
		for _, p := range pieces {
			if p == "" || utf8.RuneCountInString(p) > n {
				t.Fatalf("piece %q of %q: want 1..%d runes", p, s, n)
			}
			if utf8.ValidString(s) && !utf8.ValidString(p) {
				t.Fatalf("piece %q splits a rune of %q", p, s)
			}
		}
	})
}
