package verifiers

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/sdk"
)

// seedKey is a fixed key: Ed25519 from SHA-256 of a label.
func seedKey(label string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte(label))
	return ed25519.NewKeyFromSeed(seed[:])
}

func hexPub(k ed25519.PrivateKey) string { return hex.EncodeToString(k.Public().(ed25519.PublicKey)) }

// productFile is a product as the API shows it, which the verifiers read.
type productFile struct {
	ID                 string   `json:"id"`
	KeyPrefix          string   `json:"key_prefix"`
	LicenceDomain      string   `json:"licence_signing_domain"`
	VerdictDomain      string   `json:"verdict_signing_domain"`
	PublicKey          string   `json:"public_key"`
	PreviousPublicKeys []string `json:"previous_public_keys"`
}

func (p productFile) product(t *testing.T) sdk.Product {
	t.Helper()
	out := sdk.Product{ID: p.ID, KeyPrefix: p.KeyPrefix, LicenceDomain: p.LicenceDomain, VerdictDomain: p.VerdictDomain}
	for _, h := range append([]string{p.PublicKey}, p.PreviousPublicKeys...) {
		pub, err := sdk.ParsePublicKey(h)
		if err != nil {
			t.Fatal(err)
		}
		out.PublicKeys = append(out.PublicKeys, pub)
	}
	return out
}

// TestVerifiersAgreeWithGo gives the Go SDK and both verifiers the same
// edited licence keys, and payloads edited at random and then signed, so
// that every way of reading them (white space, case, dashes, JSON syntax,
// field names and types, UTF-8) is compared, not only the signature.
func TestVerifiersAgreeWithGo(t *testing.T) {
	tls := tools(t)
	rng := rand.New(rand.NewPCG(17, 1))
	photoKey, notesKey := seedKey("verifiers/photo"), seedKey("verifiers/notes")
	photo := productFile{ID: "photo-editor", KeyPrefix: "PHOTO", PublicKey: hexPub(photoKey), PreviousPublicKeys: []string{}}
	notes := productFile{ID: "notes", KeyPrefix: "NT2", LicenceDomain: "example.com/notes/licence",
		VerdictDomain: "example.com/notes/verdict", PublicKey: hexPub(notesKey), PreviousPublicKeys: []string{}}

	t.Run("licence keys", func(t *testing.T) {
		const lid = "0b7d4f1e-8c2a-4e6b-9f3d-5a1c7e9b2d4f"
		valid, err := sdk.SignLicenceKey(photoKey, "", "PHOTO", "photo-editor", lid)
		if err != nil {
			t.Fatal(err)
		}
		other, err := sdk.SignLicenceKey(notesKey, "example.com/notes/licence", "NT2", "notes", lid)
		if err != nil {
			t.Fatal(err)
		}
		keys := []string{valid, other, "PHOTO" + other[3:], "NT2" + valid[5:], "", "_", "PHOTO_", " \u0085" + valid + "\u3000",
			"\ufeff" + valid, strings.ToLower(valid), strings.ReplaceAll(valid, "-", ""), strings.ReplaceAll(valid, "-", "--"),
			"ph\u0131to" + valid[5:], "PHOTO" + valid[5:] + "-", strings.Repeat("-", 400) + valid, valid + strings.Repeat("-", 400),
			"P" + valid[1:5] + "\u017f" + valid[6:], "\u017fHOTO" + valid[5:], "PHOTO__" + valid[6:], valid[:30] + " " + valid[30:]}
		for range 1500 {
			keys = append(keys, editKey(rng, valid))
		}
		v, err := sdk.NewVerifier(photo.product(t), notes.product(t))
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"key", "--product", writeProduct(t, "photo", photo), "--product", writeProduct(t, "notes", notes)}
		seen := map[string]int{}
		for _, key := range keys {
			o, _ := keyOutcome(v, key)
			seen[o]++
		}
		t.Logf("Go SDK outcomes: %v", seen)
		if seen["valid"] < 20 || seen["licence_wrong_product"] < 1 || seen["licence_key_invalid"] < 500 {
			t.Fatalf("the keys test too little: Go SDK outcomes %v", seen)
		}
		for _, tl := range tls {
			got := tl.batch(t, keys, args...)
			for i, key := range keys {
				want, k := keyOutcome(v, key)
				if got[i].Outcome != want {
					t.Errorf("%s: key %q: %s, Go SDK: %s", tl.name, key, got[i].Outcome, want)
					continue
				}
				if k != nil && (got[i].ProductID != k.ProductID || got[i].LicenceID != k.LicenceID || got[i].PublicKey != hex.EncodeToString(k.PublicKey)) {
					t.Errorf("%s: key %q: %+v, Go SDK: %+v", tl.name, key, got[i], k)
				}
			}
		}
	})

	t.Run("verdicts", func(t *testing.T) {
		payload := `{"format":1,"licence_id":"0b7d4f1e-8c2a-4e6b-9f3d-5a1c7e9b2d4f","product_id":"photo-editor",` +
			`"machine_id":"machine-1","activation_id":"5f0c9a7e-3b1d-4c8e-a2f6-9d4b7e1c3a5f","state":"active",` +
			`"expires_at":"2027-11-22T00:00:00.000Z","trial_ends_at":null,"major":3,"limit_kind":"seats","limit_count":2,` +
			`"issued_at":"2026-11-22T01:16:13.000Z","valid_until":"2026-11-29T01:16:13.000Z","key_fingerprint":"dd543d7e47b37c3d"}`
		good := signVerdict(photoKey, "", []byte(payload))
		parts := strings.Split(good, ".")
		verdicts := []string{good, signVerdict(notesKey, "", []byte(payload)), signVerdict(photoKey, sdk.DefaultLicenceDomain, []byte(payload)),
			" \u2028" + good + "\n", "\ufeff" + good, good + "=", good + ".", "v1." + parts[1][:7] + "\r\n" + parts[1][7:] + "." + parts[2],
			"v1." + strings.ReplaceAll(parts[1], "_", "/") + "." + parts[2], "V1" + good[2:]}
		for _, name := range []string{"format", "licence_id", "product_id", "state", "activation_id", "key_fingerprint", "major"} {
			for _, other := range []string{strings.ToUpper(name), strings.ReplaceAll(name, "s", "ſ"), strings.ReplaceAll(name, "k", "K"),
				strings.ReplaceAll(name, "i", "İ"), strings.ReplaceAll(name, "i", "ı"), strings.ReplaceAll(name, "_", "")} {
				renamed := strings.Replace(payload, `"`+name+`"`, `"`+other+`"`, 1)
				verdicts = append(verdicts, signVerdict(photoKey, "", []byte(renamed)),
					signVerdict(photoKey, "", []byte(payload[:len(payload)-1]+`,"`+other+`":null}`)))
			}
		}
		for range 1500 {
			verdicts = append(verdicts, signVerdict(photoKey, "", editPayload(rng, payload)))
		}
		// Features: an array of objects, the one field whose value nests,
		// and which Go reads into the elements of an earlier features
		// array when the name repeats.
		featured := payload[:len(payload)-1] + `,"features":[{"code":"export-pdf","expires_at":"2026-12-22T00:00:00.000Z"},{"code":"sso","expires_at":null}]}`
		for _, extra := range featureCases {
			verdicts = append(verdicts, signVerdict(photoKey, "", []byte(payload[:len(payload)-1]+","+extra+"}")))
		}
		for range 700 {
			verdicts = append(verdicts, signVerdict(photoKey, "", editPayload(rng, featured)))
		}
		for range 300 {
			verdicts = append(verdicts, editEncoding(rng, good))
		}
		p := photo.product(t)
		seen := map[string]int{}
		for _, s := range verdicts {
			o, _ := verdictOutcome(t, p, s)
			seen[o]++
		}
		t.Logf("Go SDK outcomes: %v", seen)
		if seen["valid"] < 200 || seen["verdict_invalid"] < 500 {
			t.Fatalf("the verdicts test too little: Go SDK outcomes %v", seen)
		}
		path := writeProduct(t, "photo", photo)
		for _, tl := range tls {
			got := tl.batch(t, verdicts, "verdict", "--product", path)
			for i, s := range verdicts {
				want, payload := verdictOutcome(t, p, s)
				if got[i].Outcome != want {
					t.Errorf("%s: verdict %q: %s, Go SDK: %s", tl.name, s, got[i].Outcome, want)
					continue
				}
				if diff := cmp.Diff(payload, got[i].Verdict); want == "valid" && diff != "" {
					t.Errorf("%s: verdict %q: payload (-Go SDK +%s):\n%s", tl.name, s, tl.name, diff)
				}
			}
		}
	})
}

func signVerdict(priv ed25519.PrivateKey, domain string, payload []byte) string {
	if domain == "" {
		domain = sdk.DefaultVerdictDomain
	}
	msg := append([]byte(domain+"\x00verdict\x00"), payload...)
	b64 := base64.RawURLEncoding
	return "v1." + b64.EncodeToString(payload) + "." + b64.EncodeToString(ed25519.Sign(priv, msg))
}

// keyPieces are what an edit of a key puts in: its alphabet in both cases,
// the look-alikes it leaves out, separators, white space inside and out,
// and non-ASCII letters whose upper case is ASCII.
var keyPieces = []string{"0", "7", "A", "z", "I", "L", "O", "U", "i", "l", "o", "u", "-", "--", "_", " ", "\t", "\n",
	"\u0085", "\u00a0", "\u3000", "\ufeff", "\u0131", "\u017f", "\u212a", "é", "\x00"}

func editKey(rng *rand.Rand, key string) string {
	for range 1 + rng.IntN(3) {
		i := rng.IntN(len(key) + 1)
		switch rng.IntN(5) {
		case 0: // replace a character
			if i < len(key) {
				key = key[:i] + keyPieces[rng.IntN(len(keyPieces))] + key[i+1:]
			}
		case 1: // insert
			key = key[:i] + keyPieces[rng.IntN(len(keyPieces))] + key[i:]
		case 2: // delete
			if i < len(key) {
				key = key[:i] + key[i+1:]
			}
		case 3: // change the case of what follows
			key = key[:i] + strings.ToLower(key[i:])
		default: // cut
			key = key[:i]
		}
	}
	// A cut may split a character: the verifiers get text, so Go must too.
	return strings.ToValidUTF8(key, "\ufffd")
}

// featureCases are features members that test how each way of writing them
// is read: types, null, case, repeats.
var featureCases = []string{`"features":[]`, `"features":null`, `"features":{}`, `"features":"sso"`, `"features":[1]`,
	`"features":[null]`, `"features":[[]]`, `"features":[{"code":1}]`, `"features":[{"expires_at":false}]`,
	`"features":[{"CODE":"a","Expireſ_At":"x","extra":[[{}]]}]`, `"features":[{"code":"b"},{"code":"a"}]`,
	`"features":[{"code":"a","code":"b","expires_at":"x","expires_at":null}]`,
	`"features":[{"code":"a","expires_at":"x"},{"code":"b","expires_at":"y"}],"features":[{"code":"c"}],"features":[{},{}]`,
	`"features":[{"code":"a","expires_at":"x"}],"features":null,"features":[{"code":"c"}]`,
	`"features":[{"code":"a","expires_at":"x"}],"features":[],"features":[{}]`,
	`"features":[{"code":"a","expires_at":"x"}],"FEATURES":[null]`, `"features":[{"code":"a"}],"features":true`}

// payloadPieces are what an edit of a payload puts in: JSON's syntax,
// numbers, escapes, other spellings of the fields' names, and bytes that
// are not UTF-8.
var payloadPieces = []string{"{", "}", "[", "]", ",", ":", `"`, " ", "\n", "\t", "\x0b", "0", "1", "-", "-0", ".5", "e3", "E+2",
	"1.0", "null", "true", "false", "NaN", `\`, `\u0041`, `\ud800`, `\udc00`, `\ud83d\ude00`, `\"`, `\/`, `\x`, "\x01",
	"\x80", "\xc3\xa9", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "ſ", "K", "İ", `"format":2`, `"format":1`,
	`"FORMAT":1`, `"state":"revoked"`, `"State":null`, `"activation_id":null`, `"major":"3"`, `"major":9223372036854775807`,
	`"major":9223372036854775808`, `"limit_count":1e2`, `"product_id":"notes"`, `"x":[[{"y":[]}]]`, `"expires_at":false`,
	`"features":[]`, `"features":null`, `"Features":[null,{"code":"z"}]`, `{"code":"a"}`, `{"code":null}`, `"code":"x"`,
	`{"expires_at":"2030-01-01T00:00:00Z"}`, `"expires_at":null`}

func editPayload(rng *rand.Rand, payload string) []byte {
	b := []byte(payload)
	for range 1 + rng.IntN(3) {
		i := rng.IntN(len(b) + 1)
		piece := payloadPieces[rng.IntN(len(payloadPieces))]
		switch rng.IntN(4) {
		case 0: // replace a byte
			if i < len(b) {
				b = append(b[:i:i], append([]byte(piece), b[i+1:]...)...)
			}
		case 1: // insert
			b = append(b[:i:i], append([]byte(piece), b[i:]...)...)
		case 2: // delete a few bytes
			j := min(len(b), i+1+rng.IntN(4))
			b = append(b[:i:i], b[j:]...)
		default: // add a member before the closing brace
			if len(b) > 0 && b[len(b)-1] == '}' {
				b = append(b[:len(b)-1:len(b)-1], []byte(","+piece+"}")...)
			}
		}
	}
	return b
}

// editEncoding changes a verdict's text around its signature: a character
// of either part, a line break, padding, white space.
func editEncoding(rng *rand.Rand, s string) string {
	pieces := []string{"A", "-", "_", "+", "/", "=", "\r", "\n", "\r\n", " ", ".", "\u0085"}
	i := rng.IntN(len(s) + 1)
	piece := pieces[rng.IntN(len(pieces))]
	if rng.IntN(2) == 0 && i < len(s) {
		return s[:i] + piece + s[i+1:]
	}
	return s[:i] + piece + s[i:]
}
