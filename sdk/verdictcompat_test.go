package sdk_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/licentia/licentia/sdk"
	"github.com/licentia/licentia/sdk/internal/v1reader"
)

// TestPreviousReaderAcceptsVerdicts runs the verdict reader as released
// before verdicts carried features (a frozen copy, v1reader) on every
// vector: it accepts and refuses the same verdicts as today's reader, and
// reads every field it knows alike, so applications built with an older
// SDK keep working when their licences gain features.
func TestPreviousReaderAcceptsVerdicts(t *testing.T) {
	var f verdictFile
	readJSON(t, filepath.Join(vectorsDir, "verdicts.json"), &f)
	p := f.Product.product(t)
	old := v1reader.Product{ID: p.ID, VerdictDomain: p.VerdictDomain, PublicKeys: p.PublicKeys}
	featured := 0
	for _, vec := range f.Vectors {
		t.Run(vec.Name, func(t *testing.T) {
			got, err := v1reader.VerifyVerdict(vec.Verdict, old)
			if (err == nil) != (vec.Outcome == "valid") {
				t.Fatalf("previous VerifyVerdict() = %v, want %s", err, vec.Outcome)
			}
			if err != nil {
				return
			}
			if len(vec.Payload.Features) > 0 {
				featured++
			}
			known := *vec.Payload
			known.Features = nil
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(known)
			if string(g) != string(w) {
				t.Errorf("previous reader's payload = %s, want %s", g, w)
			}
		})
	}
	if featured == 0 {
		t.Error("no vector carries features")
	}
}

// TestVerdictWithManyFeatures: a verdict with 200 features stays under the
// format's 16 KB, which readers refuse past.
func TestVerdictWithManyFeatures(t *testing.T) {
	var f verdictFile
	readJSON(t, filepath.Join(vectorsDir, "verdicts.json"), &f)
	for _, vec := range f.Vectors {
		if vec.Payload == nil || len(vec.Payload.Features) != 200 {
			continue
		}
		if n := len(vec.Verdict); n >= 16384 {
			t.Errorf("verdict with 200 features is %d bytes, want under 16384", n)
		}
		if _, err := sdk.VerifyVerdict(vec.Verdict, f.Product.product(t)); err != nil {
			t.Errorf("VerifyVerdict(200 features) error = %v", err)
		}
		return
	}
	t.Error("no vector with 200 features")
}
