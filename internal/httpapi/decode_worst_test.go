package httpapi

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// worstBody is a body of at most MaxBody bytes built to make a decoder work
// hard: deep, wide, long or full of escapes.
type worstBody struct {
	name string
	raw  []byte
}

// fill repeats unit between head and tail until the body is as close to
// MaxBody as whole units allow.
func fill(head, unit, tail string) []byte {
	n := (MaxBody - len(head) - len(tail)) / len(unit)
	return []byte(head + strings.Repeat(unit, n) + tail)
}

// nest opens n containers with open and closes them with close.
func nest(open, close string) []byte {
	n := MaxBody / (len(open) + len(close))
	return []byte(strings.Repeat(open, n) + strings.Repeat(close, n))
}

// manyKeys is one object with as many distinct names as fit.
func manyKeys() []byte {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; ; i++ {
		field := fmt.Sprintf(`"k%d":0`, i)
		if b.Len()+len(field)+2 > MaxBody {
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(field)
	}
	b.WriteString("}")
	return []byte(b.String())
}

// worstBodies are the bodies the decoder must handle in bounded time and
// memory. Each is refused or read; none may cost more than a few times its
// own size.
func worstBodies() []worstBody {
	return []worstBody{
		{"deep arrays", nest("[", "]")},
		{"deep objects", nest(`{"a":`, "}")},
		{"deep mixed", nest(`[{"a":`, "}]")},
		{"deep objects under 10,000", []byte(strings.Repeat(`{"a":`, 9999) + "1" + strings.Repeat("}", 9999))},
		{"many keys", manyKeys()},
		{"many duplicate keys", fill(`{"a":0`, `,"a":0`, "}")},
		{"many empty objects", fill(`{"\u0061":[{}`, `,{}`, "]}")},
		{"long string", fill(`{"\u0061":"`, "x", `"}`)},
		{"long name", fill(`{"`, "x", `":1}`)},
		{"many escapes", fill(`{"\u0061":"`, `\u00e9`, `"}`)},
		{"many escaped names", fill(`{"\u0061":{"\u0062":1`, `,"\u0062":1`, "}}")},
		{"many small numbers", fill(`{"a":[0`, ",1e1", "]}")},
		{"many invalid strings", fill("{\"a\":[\"\xff\"", ",\"\xff\"", "]}")},
	}
}

// decodeAlloc returns the bytes allocated by one parseBody of raw.
func decodeAlloc(raw []byte) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var is licentia.Issues
	parseBody(raw, &is, "a")
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// BenchmarkParseBodyWorst decodes each worst body of 64 KB.
func BenchmarkParseBodyWorst(b *testing.B) {
	for _, w := range worstBodies() {
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(w.raw)))
			for b.Loop() {
				var is licentia.Issues
				parseBody(w.raw, &is, "a")
			}
		})
	}
}
