package chat

import (
	"fmt"
	"regexp"
)

// MaxFunctionNameLen is the longest function name, and message author name, OpenAI
// takes, in bytes.
const MaxFunctionNameLen = 64

// functionNameChars are the characters of a function name.
const functionNameChars = `a-zA-Z0-9_-`

// FunctionNamePattern is what OpenAI takes as a function name, and as a message's
// author name (OpenAI API reference: "must be a-z, A-Z, 0-9, or contain underscores
// and dashes, with a maximum length of 64"). Tool names, the function calls of a
// history and the names sent to a model keep it.
var FunctionNamePattern = regexp.MustCompile(fmt.Sprintf(`^[%s]{1,%d}$`, functionNameChars, MaxFunctionNameLen))

var notFunctionNameChar = regexp.MustCompile(`[^` + functionNameChars + `]`)

// FunctionName returns s made a function name: each character outside
// FunctionNamePattern's becomes "_", and the result is cut to MaxFunctionNameLen. It
// matches FunctionNamePattern unless s is empty. (The result is ASCII: the cut splits
// no character.)
func FunctionName(s string) string {
	s = notFunctionNameChar.ReplaceAllString(s, "_")
	return s[:min(len(s), MaxFunctionNameLen)]
}
