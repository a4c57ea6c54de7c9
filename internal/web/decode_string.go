package web

import (
	"unicode/utf16"
	"unicode/utf8"
)

// str reads a string starting at its opening quote. It reports bad when the
// string holds invalid UTF-8 or an escaped surrogate that is not part of a
// pair, which encoding/json would silently replace with U+FFFD. With decode,
// it also returns the decoded string: raw itself when it holds no escape.
func (w *walk) str(decode bool) (s []byte, bad bool) {
	w.i++ // "
	start, escaped := w.i, false
	for {
		if w.i >= len(w.raw) {
			w.stop("", msgNotJSON)
			return nil, false
		}
		c := w.raw[w.i]
		switch {
		case c == '"':
			s = w.raw[start:w.i]
			w.i++
			if decode && escaped {
				s = unescape(s)
			}
			return s, bad
		case c < 0x20:
			w.stop("", msgNotJSON)
			return nil, false
		case c == '\\':
			escaped = true
			ok, lone := w.escape()
			if !ok {
				w.stop("", msgNotJSON)
				return nil, false
			}
			bad = bad || lone
		case c < utf8.RuneSelf:
			w.i++
		default:
			r, size := utf8.DecodeRune(w.raw[w.i:])
			if r == utf8.RuneError && size == 1 {
				bad = true
			}
			w.i += size
		}
	}
}

// escape reads the escape at w.i. It reports whether the escape is valid
// JSON, and lone when it is a \u escape of half a surrogate pair without
// its other half.
func (w *walk) escape() (ok, lone bool) {
	if w.i+1 >= len(w.raw) {
		return false, false
	}
	switch w.raw[w.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		w.i += 2
		return true, false
	case 'u':
	default:
		return false, false
	}
	r, ok := hex4(w.raw[w.i+2:])
	if !ok {
		return false, false
	}
	w.i += 6
	if !utf16.IsSurrogate(r) {
		return true, false
	}
	if r >= 0xdc00 {
		return true, true // a low half first
	}
	if w.i+1 < len(w.raw) && w.raw[w.i] == '\\' && w.raw[w.i+1] == 'u' {
		if lo, ok := hex4(w.raw[w.i+2:]); ok && lo >= 0xdc00 && lo <= 0xdfff {
			w.i += 6
			return true, false
		}
	}
	return true, true
}

// hex4 decodes the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// unescape decodes the body of a string that str found valid JSON, as
// encoding/json does: a lone surrogate becomes U+FFFD.
func unescape(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			out = append(out, s[i])
			i++
			continue
		}
		c := s[i+1]
		i += 2
		switch c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := hex4(s[i:])
			i += 4
			if utf16.IsSurrogate(r) {
				lo, ok := rune(0), false
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					lo, ok = hex4(s[i+2:])
				}
				if d := utf16.DecodeRune(r, lo); ok && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default: // " \ /
			out = append(out, c)
		}
	}
	return out
}
