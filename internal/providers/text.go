package providers

import (
	"context"
	"errors"
	"sync/atomic"
	"unicode/utf8"
)

// ErrTextInvalid reports an answer of a provider's API that holds text
// IsText refuses, read without a TextWatch.
var ErrTextInvalid = errors.New("the provider sent text that is not valid UTF-8")

// TextWatch notes that an answer of a provider's API, read while an event
// was parsed, held text IsText refuses. The answer is decoded all the
// same, each such text becoming U+FFFD, so the event can be held rather
// than refused: the caller treats every string holding U+FFFD as
// unreadable and stores none of them (a held order with reason
// text_invalid).
type TextWatch struct{ invalid atomic.Bool }

type textWatchKey struct{}

// WatchText returns ctx carrying a new TextWatch, which API calls made
// with it report to.
func WatchText(ctx context.Context) (context.Context, *TextWatch) {
	w := &TextWatch{}
	return context.WithValue(ctx, textWatchKey{}, w), w
}

// Invalid reports whether an answer read under the watch held text IsText
// refuses.
func (w *TextWatch) Invalid() bool { return w.invalid.Load() }

// noteInvalidText reports invalid text to ctx's TextWatch and whether
// there was one to report to.
func noteInvalidText(ctx context.Context) bool {
	w, ok := ctx.Value(textWatchKey{}).(*TextWatch)
	if ok {
		w.invalid.Store(true)
	}
	return ok
}

// IsText reports whether b, a provider's JSON, holds only text that
// encoding/json reads as sent: valid UTF-8, and no \u escape of a
// surrogate that is not half of a pair. encoding/json replaces either with
// U+FFFD without an error, so a checkout's email of invalid bytes would
// otherwise issue a licence for "\ufffd\ufffd@example.com". Run it on the
// raw bytes, before anything is decoded.
func IsText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	// A backslash appears only in strings in JSON that decodes, and each
	// escapes the byte after it, so an escaped backslash is skipped whole.
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++
		if i >= len(b) || b[i] != 'u' {
			continue
		}
		r := hex4(b, i+1)
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false
		case r >= 0xD800 && r <= 0xDBFF:
			// A high surrogate must be followed at once by an escaped low one.
			if i+6 >= len(b) || b[i+5] != '\\' || b[i+6] != 'u' {
				return false
			}
			if lo := hex4(b, i+7); lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 10
		}
	}
	return true
}

// hex4 reads the four hexadecimal digits at b[i:], or -1 when there are
// not four; encoding/json refuses such an escape itself.
func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}
