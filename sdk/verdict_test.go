package sdk_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/sdk"
)

func pubs(keys ...ed25519.PrivateKey) []ed25519.PublicKey {
	var out []ed25519.PublicKey
	for _, k := range keys {
		out = append(out, k.Public().(ed25519.PublicKey))
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func sampleVerdict() sdk.Verdict {
	return sdk.Verdict{
		LicenceID: testLicenceID, ProductID: "photo-editor", MachineID: "machine-1",
		ActivationID: ptr("5f0c9a7e-3b1d-4c8e-a2f6-9d4b7e1c3a5f"), State: sdk.StateActive,
		ExpiresAt: ptr("2027-11-22T00:00:00.000Z"), Major: 3, LimitKind: "seats", LimitCount: 2,
		IssuedAt: "2026-11-22T01:16:13.000Z", ValidUntil: "2026-11-29T01:16:13.000Z",
	}
}

func TestVerdictRoundTrip(t *testing.T) {
	priv := seedKey("vector/photo/current")
	p := sdk.Product{ID: "photo-editor", KeyPrefix: "PHOTO", PublicKeys: pubs(seedKey("vector/photo/previous"), priv)}
	s, err := sdk.SignVerdict(priv, "", sampleVerdict())
	if err != nil {
		t.Fatal(err)
	}
	got, err := sdk.VerifyVerdict(s, p)
	if err != nil {
		t.Fatalf("VerifyVerdict() = %v", err)
	}
	want := sampleVerdict()
	want.Format, want.KeyFingerprint = sdk.VerdictFormat, sdk.Fingerprint(priv.Public().(ed25519.PublicKey))
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("VerifyVerdict() mismatch (-want +got):\n%s", diff)
	}
}

func TestVerdictRefused(t *testing.T) {
	priv := seedKey("vector/photo/current")
	p := sdk.Product{ID: "photo-editor", KeyPrefix: "PHOTO", PublicKeys: pubs(priv)}
	good, _ := sdk.SignVerdict(priv, "", sampleVerdict())
	otherProduct := sampleVerdict()
	otherProduct.ProductID = "notes"
	wrongProduct, _ := sdk.SignVerdict(priv, "", otherProduct)
	otherDomain, _ := sdk.SignVerdict(priv, "licentia/licence-key/v1", sampleVerdict())
	stranger, _ := sdk.SignVerdict(seedKey("vector/stranger"), "", sampleVerdict())
	parts := strings.Split(good, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	edited := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), `"revoked"`, `"active"`, 1)+" ")) + "." + parts[2]
	for _, tt := range []struct{ name, verdict string }{
		{"empty", ""},
		{"edited payload", edited},
		{"another product's verdict", wrongProduct},
		{"signed in another domain", otherDomain},
		{"unknown signer", stranger},
		{"wrong version tag", "v2" + good[2:]},
		{"padding added", good + "="},
		{"two parts", parts[0] + "." + parts[1]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := sdk.VerifyVerdict(tt.verdict, p); !errors.Is(err, sdk.ErrVerdictInvalid) {
				t.Errorf("VerifyVerdict() = %v, want ErrVerdictInvalid", err)
			}
		})
	}
}

// A licence-key signature never passes as a verdict's and the other way
// round, even when a maker gives both the same domain.
func TestDomainSeparation(t *testing.T) {
	priv := seedKey("vector/photo/current")
	const domain = "example.com/same"
	p := sdk.Product{ID: "photo-editor", KeyPrefix: "PHOTO", LicenceDomain: domain, VerdictDomain: domain, PublicKeys: pubs(priv)}
	v, _ := sdk.NewVerifier(p)
	key, _ := sdk.SignLicenceKey(priv, domain, "PHOTO", "photo-editor", testLicenceID)
	if _, err := v.VerifyLicenceKey(key); err != nil {
		t.Fatal(err)
	}
	k, _ := sdk.ParseLicenceKey(key)
	forged := "v1." + base64.RawURLEncoding.EncodeToString([]byte(`{}`)) + "." + base64.RawURLEncoding.EncodeToString(k.Signature[:])
	if _, err := sdk.VerifyVerdict(forged, p); err == nil {
		t.Error("a licence-key signature passed as a verdict")
	}
}

func FuzzVerifyVerdict(f *testing.F) {
	priv := seedKey("vector/photo/current")
	p := sdk.Product{ID: "photo-editor", KeyPrefix: "PHOTO", PublicKeys: pubs(priv)}
	good, _ := sdk.SignVerdict(priv, "", sampleVerdict())
	for _, s := range []string{good, "", "v1..", "v1.e30.", good[:len(good)-2]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := sdk.VerifyVerdict(s, p)
		if err == nil && s != good && strings.TrimSpace(s) != good {
			t.Fatalf("fuzzed verdict %q verified: %+v", s, v)
		}
	})
}

func BenchmarkSignVerdict(b *testing.B) {
	priv := seedKey("vector/photo/current")
	v := sampleVerdict()
	for b.Loop() {
		if _, err := sdk.SignVerdict(priv, "", v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyVerdict(b *testing.B) {
	priv := seedKey("vector/photo/current")
	p := sdk.Product{ID: "photo-editor", KeyPrefix: "PHOTO", PublicKeys: pubs(priv)}
	s, _ := sdk.SignVerdict(priv, "", sampleVerdict())
	for b.Loop() {
		if _, err := sdk.VerifyVerdict(s, p); err != nil {
			b.Fatal(err)
		}
	}
}
