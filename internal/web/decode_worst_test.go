package web

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
// memory, whether it reads or refuses them.
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

// worstAlloc bounds what one parseBody of at most MaxBody bytes may
// allocate. The costliest bodies report an issue every few bytes (some
// 13,000 of them) and need about 4 MB; before nesting was bounded, 64 KB of
// brackets took 2.3 GB.
const worstAlloc = 8 << 20

// allocBound is what parseBody may allocate for a body of n bytes: a fixed
// part plus a constant factor of its size, never more than worstAlloc.
func allocBound(n int) uint64 {
	return min(1<<20+128*uint64(n), worstAlloc)
}

// minDecodeAlloc is the least of three decodeAllocs, so that an allocation
// made meanwhile by another goroutine of the test binary does not count.
func minDecodeAlloc(raw []byte) uint64 {
	least := decodeAlloc(raw)
	for range 2 {
		least = min(least, decodeAlloc(raw))
	}
	return least
}

// TestParseBodyWorst: each worst body of 64 KB is decoded within a few MB,
// and the deep ones are refused where they pass 32 levels.
func TestParseBodyWorst(t *testing.T) {
	deep := map[string]string{
		"deep arrays":  strings.Repeat("/0", maxDepth),
		"deep objects": strings.Repeat("/a", maxDepth),
		"deep mixed":   strings.Repeat("/0/a", maxDepth/2),
	}
	for _, w := range worstBodies() {
		t.Run(w.name, func(t *testing.T) {
			if len(w.raw) > MaxBody {
				t.Fatalf("body of %d bytes, over MaxBody", len(w.raw))
			}
			if got, bound := minDecodeAlloc(w.raw), allocBound(len(w.raw)); got > bound {
				t.Errorf("parseBody(%s) allocated %d bytes, want at most %d", w.name, got, bound)
			}
			if path, ok := deep[w.name]; ok {
				var is licentia.Issues
				parseBody(w.raw, &is, "a")
				want := licentia.Issues{{Path: path, Message: "is nested deeper than 32 levels"}}
				if diff := cmp.Diff(want, is); diff != "" {
					t.Errorf("parseBody(%s) issues mismatch (-want +got):\n%s", w.name, diff)
				}
			}
		})
	}
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
