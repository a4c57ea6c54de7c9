package httpapi

import (
	"encoding/json"
	"testing"
)

// FuzzStatusAnswer holds the status route's hand-built answer to what
// encoding/json writes for it, and checks that a verdict it cannot write
// as it stands falls back to encoding/json.
func FuzzStatusAnswer(f *testing.F) {
	f.Add("djEuZXlKaGJHY2lPaUpGWkVSVFFTSjkuc2ln.c2ln", int64(3600), true)
	f.Add("v1.abc-_DEF", int64(0), false)
	f.Add(`quote"and\back<>&`, int64(-1), true)
	f.Add("caf\u00e9\u2028\x00\x7f", int64(1<<62), true)
	f.Fuzz(func(t *testing.T, verdict string, heartbeat int64, withHeartbeat bool) {
		a := statusAnswer{Verdict: verdict}
		if withHeartbeat {
			a.Heartbeat = &heartbeat
		}
		want, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		got, ok := a.appendJSON([]byte("kept"))
		if !ok {
			if string(got) != "kept" {
				t.Fatalf("appendJSON refused %q but appended: %q", verdict, got)
			}
			if verdictAlphabet(verdict) {
				t.Fatalf("appendJSON refused %q, which is base64url and dots", verdict)
			}
			return
		}
		if string(got[len("kept"):]) != string(want) {
			t.Fatalf("appendJSON = %s, encoding/json = %s", got[len("kept"):], want)
		}
	})
}

// verdictAlphabet reports whether s is made of the characters of a
// verdict: base64url and dots.
func verdictAlphabet(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
