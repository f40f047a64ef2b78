package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/agentchat/agentchat/wire"
)

// stdinArg is the argument, or --file value, that reads a message from standard input.
const stdinArg = "-"

// messageText is the text of send's turn: the arguments joined with spaces; or, with
// file set (or the one argument "-"), the contents of that file ("-": standard input),
// less one final line break, so that `echo hi | starter send -` sends "hi". It reads at
// most wire.MaxMessageBytesLimit bytes (1 MiB) and refuses a longer input, an empty
// one, and one that is not UTF-8, with an error that names where it came from.
func messageText(args []string, file string, in io.Reader) (string, error) {
	if file == "" && len(args) == 1 && args[0] == stdinArg {
		file, args = stdinArg, nil
	}
	if file == "" {
		if len(args) == 0 {
			return "", errors.New(`send needs the message text, e.g. starter send "Hello, how are you?" (or --file F, or - for standard input)`)
		}
		return strings.Join(args, " "), nil
	}
	if len(args) > 0 {
		return "", fmt.Errorf("give the message as arguments or with --file, not both (arguments %q)", strings.Join(args, " "))
	}
	from := "file " + file
	if file == stdinArg {
		from = "standard input"
		if in == nil {
			in = strings.NewReader("")
		}
	} else {
		f, err := os.Open(file)
		if err != nil {
			return "", fmt.Errorf("message: %w", err)
		}
		defer f.Close()
		in = f
	}
	b, err := io.ReadAll(io.LimitReader(in, wire.MaxMessageBytesLimit+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("message from %s: %w", from, err)
	case len(b) > wire.MaxMessageBytesLimit:
		return "", fmt.Errorf("message from %s: over %d bytes (MaxMessageBytesLimit, the most a chat accepts)", from, wire.MaxMessageBytesLimit)
	case !utf8.Valid(b):
		return "", fmt.Errorf("message from %s: not UTF-8 text", from)
	}
	text := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if text == "" {
		return "", fmt.Errorf("message from %s: empty", from)
	}
	return text, nil
}
