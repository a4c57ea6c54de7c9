package sdk_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/licentia/licentia/sdk"
)

type verdictVector struct {
	Name    string       `json:"name"`
	Verdict string       `json:"verdict"`
	Outcome string       `json:"outcome"` // valid or invalid
	Payload *sdk.Verdict `json:"payload,omitempty"`
}

type verdictFile struct {
	Comment string          `json:"comment"`
	Product vectorProduct   `json:"product"`
	Vectors []verdictVector `json:"vectors"`
}

func buildVerdictVectors(t *testing.T) verdictFile {
	cur, prev := seedKey("vector/photo/current"), seedKey("vector/photo/previous")
	f := verdictFile{
		Comment: "Verdict format version 1 vectors (docs/verdict-format.md). Verify each verdict against the product; valid ones carry their payload.",
		Product: vectorProduct{ID: "photo-editor", KeyPrefix: "PHOTO", PublicKeys: []string{hexPub(cur), hexPub(prev)}},
	}
	sign := func(priv []byte, domain string, v sdk.Verdict) string {
		s, err := sdk.SignVerdict(priv, domain, v)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	valid := func(name string, v sdk.Verdict, key []byte) {
		s := sign(key, "", v)
		got, err := sdk.VerifyVerdict(s, f.Product.product(t))
		if err != nil {
			t.Fatal(err)
		}
		f.Vectors = append(f.Vectors, verdictVector{Name: name, Verdict: s, Outcome: "valid", Payload: got})
	}
	active := sampleVerdict()
	valid("active, live seat", active, cur)
	trial := sampleVerdict()
	trial.State, trial.TrialEndsAt, trial.ExpiresAt = sdk.StateTrial, ptr("2026-12-06T00:00:00.000Z"), ptr("2026-12-06T00:00:00.000Z")
	trial.ValidUntil = "2026-11-29T01:16:13.000Z"
	valid("trial", trial, cur)
	revoked := sampleVerdict()
	revoked.State, revoked.ActivationID = sdk.StateRevoked, nil
	valid("revoked, no live seat, signed by the previous key", revoked, prev)
	featured := sampleVerdict()
	featured.Features = []sdk.VerdictFeature{{Code: "export-pdf", ExpiresAt: ptr("2026-12-22T00:00:00.000Z")}, {Code: "sso"}}
	valid("active with features, one until a date", featured, cur)
	wide := sampleVerdict()
	for i := range 200 {
		f := sdk.VerdictFeature{Code: fmt.Sprintf("feature-%03d", i)}
		if i%4 == 0 {
			f.ExpiresAt = ptr("2027-11-22T00:00:00.000Z")
		}
		wide.Features = append(wide.Features, f)
	}
	valid("200 features", wide, cur)
	good := sign(cur, "", active)
	f.Vectors = append(f.Vectors,
		verdictVector{Name: "signed by an unknown key", Verdict: sign(seedKey("vector/stranger"), "", active), Outcome: "invalid"},
		verdictVector{Name: "signed in the licence-key domain", Verdict: sign(cur, sdk.DefaultLicenceDomain, active), Outcome: "invalid"},
		verdictVector{Name: "signature of another verdict", Verdict: good[:len(good)-86] + sign(cur, "", revoked)[len(sign(cur, "", revoked))-86:], Outcome: "invalid"},
		verdictVector{Name: "unknown version", Verdict: "v9" + good[2:], Outcome: "invalid"},
	)
	return f
}

func TestVerdictVectors(t *testing.T) {
	path := filepath.Join(vectorsDir, "verdicts.json")
	if *update {
		writeJSON(t, path, buildVerdictVectors(t))
	}
	var f verdictFile
	readJSON(t, path, &f)
	p := f.Product.product(t)
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, vec := range f.Vectors {
		t.Run(vec.Name, func(t *testing.T) {
			got, err := sdk.VerifyVerdict(vec.Verdict, p)
			if (err == nil) != (vec.Outcome == "valid") {
				t.Fatalf("VerifyVerdict() = %v, want %s", err, vec.Outcome)
			}
			if err == nil {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(vec.Payload)
				if string(g) != string(w) {
					t.Errorf("payload = %s, want %s", g, w)
				}
			}
		})
	}
}
