package sdk_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/licentia/licentia/sdk"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors")

const vectorsDir = "../testdata/vectors"

// vectorProduct is a product of the vector files, with its keys as hex.
type vectorProduct struct {
	ID            string   `json:"id"`
	KeyPrefix     string   `json:"key_prefix"`
	LicenceDomain string   `json:"licence_signing_domain"`
	VerdictDomain string   `json:"verdict_signing_domain"`
	PublicKeys    []string `json:"public_keys"`
}

func (p vectorProduct) product(t *testing.T) sdk.Product {
	t.Helper()
	out := sdk.Product{ID: p.ID, KeyPrefix: p.KeyPrefix, LicenceDomain: p.LicenceDomain, VerdictDomain: p.VerdictDomain}
	for _, h := range p.PublicKeys {
		pub, err := sdk.ParsePublicKey(h)
		if err != nil {
			t.Fatal(err)
		}
		out.PublicKeys = append(out.PublicKeys, pub)
	}
	return out
}

type licenceKeyVector struct {
	Name      string `json:"name"`
	Key       string `json:"key"`
	Outcome   string `json:"outcome"` // valid, licence_key_invalid, licence_wrong_product
	ProductID string `json:"product_id,omitempty"`
	LicenceID string `json:"licence_id,omitempty"`
}

type licenceKeyFile struct {
	Comment  string             `json:"comment"`
	Products []vectorProduct    `json:"products"`
	Vectors  []licenceKeyVector `json:"vectors"`
}

// seedKey is a fixed key for vectors: Ed25519 from SHA-256 of a label.
func seedKey(label string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte(label))
	return ed25519.NewKeyFromSeed(seed[:])
}

func hexPub(k ed25519.PrivateKey) string { return hex.EncodeToString(k.Public().(ed25519.PublicKey)) }

func mustSign(t *testing.T, priv ed25519.PrivateKey, domain, prefix, productID, licenceID string) string {
	t.Helper()
	k, err := sdk.SignLicenceKey(priv, domain, prefix, productID, licenceID)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// buildLicenceKeyVectors makes the licence-key vectors from fixed keys.
// Changing what it produces is a format change: it needs a new version.
func buildLicenceKeyVectors(t *testing.T) licenceKeyFile {
	cur, prev, retired, other, stranger := seedKey("vector/photo/current"), seedKey("vector/photo/previous"),
		seedKey("vector/photo/retired"), seedKey("vector/notes/current"), seedKey("vector/stranger")
	const lid = "0b7d4f1e-8c2a-4e6b-9f3d-5a1c7e9b2d4f"
	valid := mustSign(t, cur, "", "PHOTO", "photo-editor", lid)
	f := licenceKeyFile{
		Comment: "Licence-key format version 1 vectors (docs/licence-key-format.md). Verify each key against all products; outcome is valid, licence_key_invalid or licence_wrong_product.",
		Products: []vectorProduct{
			{ID: "photo-editor", KeyPrefix: "PHOTO", PublicKeys: []string{hexPub(cur), hexPub(prev)}},
			{ID: "notes", KeyPrefix: "NT2", LicenceDomain: "example.com/notes/licence", VerdictDomain: "example.com/notes/verdict", PublicKeys: []string{hexPub(other)}},
		},
	}
	add := func(name, key, outcome, productID, licenceID string) {
		f.Vectors = append(f.Vectors, licenceKeyVector{Name: name, Key: key, Outcome: outcome, ProductID: productID, LicenceID: licenceID})
	}
	add("current key", valid, "valid", "photo-editor", lid)
	add("current key, lower case, no dashes, surrounding whitespace", "  "+lowerNoDashes(valid)+"\n", "valid", "photo-editor", lid)
	add("previous key not retired", mustSign(t, prev, "", "PHOTO", "photo-editor", "7c0e2b9a-1d4f-4a8e-b6c3-2f5d8e1a9c7b"), "valid", "photo-editor", "7c0e2b9a-1d4f-4a8e-b6c3-2f5d8e1a9c7b")
	add("own signing domain", mustSign(t, other, "example.com/notes/licence", "NT2", "notes", lid), "valid", "notes", lid)
	add("retired key", mustSign(t, retired, "", "PHOTO", "photo-editor", lid), "licence_key_invalid", "", "")
	add("key of an unknown signer", mustSign(t, stranger, "", "PHOTO", "photo-editor", lid), "licence_key_invalid", "", "")
	add("wrong signing domain", mustSign(t, cur, "licentia/verdict/v1", "PHOTO", "photo-editor", lid), "licence_key_invalid", "", "")
	add("payload of notes behind the prefix of photo-editor", "PHOTO"+mustSign(t, other, "example.com/notes/licence", "NT2", "notes", lid)[3:], "licence_wrong_product", "", "")
	add("unknown prefix", "ZZZ"+valid[5:], "licence_key_invalid", "", "")
	add("one character changed", valid[:20]+flip(valid[20])+valid[21:], "licence_key_invalid", "", "")
	add("truncated", valid[:len(valid)-1], "licence_key_invalid", "", "")
	add("no separator", "PHOTO"+valid[6:], "licence_key_invalid", "", "")
	add("empty", "", "licence_key_invalid", "", "")
	return f
}

func lowerNoDashes(s string) string {
	b := []byte{}
	for i := range len(s) {
		c := s[i]
		if c == '-' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}

// flip returns another character of the alphabet.
func flip(c byte) string {
	if c == '7' {
		return "8"
	}
	return "7"
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "valid"
	case errors.Is(err, sdk.ErrLicenceWrongProduct):
		return "licence_wrong_product"
	case errors.Is(err, sdk.ErrLicenceKeyInvalid):
		return "licence_key_invalid"
	}
	return err.Error()
}

func TestLicenceKeyVectors(t *testing.T) {
	path := filepath.Join(vectorsDir, "licence-keys.json")
	if *update {
		writeJSON(t, path, buildLicenceKeyVectors(t))
	}
	var f licenceKeyFile
	readJSON(t, path, &f)
	var products []sdk.Product
	for _, p := range f.Products {
		products = append(products, p.product(t))
	}
	v, err := sdk.NewVerifier(products...)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, vec := range f.Vectors {
		t.Run(vec.Name, func(t *testing.T) {
			got, err := v.VerifyLicenceKey(vec.Key)
			if o := outcome(err); o != vec.Outcome {
				t.Fatalf("VerifyLicenceKey(%q) = %s, want %s", vec.Key, o, vec.Outcome)
			}
			if err == nil && (got.ProductID != vec.ProductID || got.LicenceID != vec.LicenceID) {
				t.Errorf("VerifyLicenceKey() = %s/%s, want %s/%s", got.ProductID, got.LicenceID, vec.ProductID, vec.LicenceID)
			}
		})
	}
	// The vectors are the format: the same inputs must give the same bytes.
	want := buildLicenceKeyVectors(t)
	for i, vec := range want.Vectors {
		if i < len(f.Vectors) && f.Vectors[i].Key != vec.Key {
			t.Errorf("vector %q: signing now gives %q, file has %q: a format change needs a new version", vec.Name, vec.Key, f.Vectors[i].Key)
		}
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./sdk -update to write the vectors)", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
