package chatstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// appendString appends s as an RFC 8785 string: '"' and '\' escaped, \b \f \n \r \t in
// their short forms, other control characters as \u00xx (lowercase hex), everything
// else as UTF-8. Invalid UTF-8 becomes U+FFFD, as encoding/json writes it, so the result
// equals jcs.Transform of json.Marshal(s).
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// canonicalObject returns the RFC 8785 form of raw, which must be one JSON object; empty
// raw is {}. Numbers must survive canonicalization unchanged in value (I-JSON: RFC 8785
// writes every number as an IEEE 754 double), so that a state or an unknown content is
// never silently altered.
func canonicalObject(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return []byte("{}"), nil
	}
	if !utf8.Valid(raw) {
		return nil, errors.New("is not valid UTF-8")
	}
	c, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("is not canonicalizable JSON (RFC 8785): %v", err)
	}
	if c[0] != '{' {
		return nil, fmt.Errorf("is %s, not a JSON object", jsonKind(c[0]))
	}
	if err := checkNumbers(raw); err != nil {
		return nil, err
	}
	return c, nil
}

// jsonKind names the kind of a JSON value by its first byte.
func jsonKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// checkNumbers checks that every number in b, valid JSON, keeps its value when RFC 8785
// writes it (12345678901234567890 would become 12345678901234567000).
func checkNumbers(b []byte) error {
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"': // skip the string
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			i++
		case c == '-' || '0' <= c && c <= '9':
			j := i + 1
			for j < len(b) && strings.IndexByte("+-.eE0123456789", b[j]) >= 0 {
				j++
			}
			if err := checkNumber(string(b[i:j])); err != nil {
				return err
			}
			i = j
		default:
			i++
		}
	}
	return nil
}

func checkNumber(n string) error {
	f, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return fmt.Errorf("holds the number %.40s, out of range for RFC 8785 (IEEE 754 double)", n)
	}
	if c, err := jcs.NumberToJSON(f); err != nil || !sameDecimal(n, c) {
		return fmt.Errorf("holds the number %.40s, which RFC 8785 (IEEE 754 double) cannot keep exactly", n)
	}
	return nil
}

// sameDecimal reports whether two JSON number literals denote the same decimal value.
func sameDecimal(a, b string) bool {
	na, ea, oka := normalDecimal(a)
	nb, eb, okb := normalDecimal(b)
	return oka && okb && na == nb && ea == eb
}

// normalDecimal returns a JSON number literal as sign+significant digits and a power of
// ten: "-12.50e1" → ("-125", 0). Zero is ("0", 0) whatever its sign.
func normalDecimal(s string) (digits string, exp int, ok bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, e, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		if len(strings.TrimLeft(e, "+-")) > 6 {
			return "", 0, false
		}
		n, err := strconv.Atoi(strings.TrimPrefix(e, "+"))
		if err != nil {
			return "", 0, false
		}
		exp = n
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	exp -= len(frac)
	digits = strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return "0", 0, true
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	if neg {
		trimmed = "-" + trimmed
	}
	return trimmed, exp, true
}
