package verifiers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/servetest"
	"github.com/licentia/licentia/internal/store/storetest"
	"github.com/licentia/licentia/sdk"
)

// call sends a request and decodes the answer into out, wanting status.
func call(t *testing.T, s *servetest.Service, want int, method, path, key string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, s.Base+path, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, raw, err)
		}
	}
}

// TestVerifiersOnServer issues licence keys and verdicts through the API,
// on SQLite and on PostgreSQL, and has both verifiers check them with the
// products as the API shows them: the Go SDK's outcome for each, tampered
// copies refused, and the verdicts judged as the Go client judges them.
func TestVerifiersOnServer(t *testing.T) {
	tls := tools(t)
	t.Run("sqlite", func(t *testing.T) { verifyIssued(t, tls, servetest.Start(t, "")) })
	t.Run("postgres", func(t *testing.T) { verifyIssued(t, tls, servetest.Start(t, storetest.PostgresURL(t))) })
}

type productAnswer struct {
	Product productFile `json:"product"`
}

type issuedAnswer struct {
	Licence struct {
		ID string `json:"id"`
	} `json:"licence"`
	LicenceKey string `json:"licence_key"`
}

type verdictAnswer struct {
	Verdict string `json:"verdict"`
}

func verifyIssued(t *testing.T, tls []tool, s *servetest.Service) {
	s.Operator(t, "org", "create", "--name", "Acme Software", "--slug", "acme", "--plan", "studio", "--owner-email", "owner@acme.example")
	scopes := strings.Join([]string{string(licentia.ScopeProductsRead), string(licentia.ScopeProductsWrite),
		string(licentia.ScopeLicencesRead), string(licentia.ScopeLicencesWrite)}, ",")
	key, _ := s.Operator(t, "apikey", "create", "--org", "acme", "--scopes", scopes, "--name", "verifiers")["key"].(string)

	// Two products: one on the default signing domains, one on its own.
	call(t, s, http.StatusCreated, "POST", "/v1/admin/products", key,
		map[string]any{"id": "desk-app", "name": "Desk App", "key_prefix": "DESK", "current_major": 2}, nil)
	call(t, s, http.StatusCreated, "POST", "/v1/admin/products", key,
		map[string]any{"id": "notes", "name": "Notes", "key_prefix": "NT2", "current_major": 1,
			"licence_signing_domain": "example.com/notes/licence", "verdict_signing_domain": "example.com/notes/verdict"}, nil)
	var desk, notes issuedAnswer
	call(t, s, http.StatusCreated, "POST", "/v1/admin/licences", key,
		map[string]any{"product_id": "desk-app", "email": "buyer@example.com", "limit_count": 2}, &desk)
	call(t, s, http.StatusCreated, "POST", "/v1/admin/licences", key,
		map[string]any{"product_id": "notes", "email": "buyer@example.com", "limit_count": 1}, &notes)
	// After a rotation the licence reads with a new key, and the old one
	// still verifies under the previous public key.
	call(t, s, http.StatusOK, "POST", "/v1/admin/products/desk-app/rotate-signing-key", key, map[string]any{}, nil)
	var rotated issuedAnswer
	call(t, s, http.StatusOK, "GET", "/v1/admin/licences/"+desk.Licence.ID, key, nil, &rotated)
	if rotated.LicenceKey == desk.LicenceKey {
		t.Fatal("the licence key did not change with the signing key")
	}
	var deskProduct, notesProduct productAnswer
	call(t, s, http.StatusOK, "GET", "/v1/admin/products/desk-app", key, nil, &deskProduct)
	call(t, s, http.StatusOK, "GET", "/v1/admin/products/notes", key, nil, &notesProduct)
	deskFile, notesFile := writeProduct(t, "desk", deskProduct), writeProduct(t, "notes", notesProduct)

	// Verdicts: a machine's seat on each product, then the desk licence revoked.
	var deskVerdict, notesVerdict, revokedVerdict verdictAnswer
	machine := map[string]any{"machine_id": "machine-0001", "label": "Ada's laptop", "os": "linux", "app_version": "2.0.1"}
	call(t, s, http.StatusCreated, "POST", "/v1/activations", "", with(machine, "licence_key", rotated.LicenceKey), &deskVerdict)
	call(t, s, http.StatusCreated, "POST", "/v1/activations", "", with(machine, "licence_key", notes.LicenceKey), &notesVerdict)
	call(t, s, http.StatusOK, "POST", "/v1/admin/licences/"+desk.Licence.ID+"/revoke", key, map[string]any{"reason": "refunded"}, nil)
	call(t, s, http.StatusOK, "POST", "/v1/activations/status", "",
		map[string]any{"licence_key": rotated.LicenceKey, "machine_id": "machine-0001"}, &revokedVerdict)

	deskSDK, notesSDK := deskProduct.Product.product(t), notesProduct.Product.product(t)
	v, err := sdk.NewVerifier(deskSDK, notesSDK)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("licence keys", func(t *testing.T) {
		keys := []string{rotated.LicenceKey, desk.LicenceKey, notes.LicenceKey, strings.ToLower(rotated.LicenceKey),
			"DESK" + notes.LicenceKey[3:]}
		want := []result{
			{Outcome: "valid", ProductID: "desk-app", LicenceID: desk.Licence.ID, PublicKey: deskProduct.Product.PublicKey},
			{Outcome: "valid", ProductID: "desk-app", LicenceID: desk.Licence.ID, PublicKey: deskProduct.Product.PreviousPublicKeys[0]},
			{Outcome: "valid", ProductID: "notes", LicenceID: notes.Licence.ID, PublicKey: notesProduct.Product.PublicKey},
			{Outcome: "valid", ProductID: "desk-app", LicenceID: desk.Licence.ID, PublicKey: deskProduct.Product.PublicKey},
			{Outcome: "licence_wrong_product"},
		}
		// Every character of each valid key's body replaced by three others,
		// and below every character of each verdict by another.
		for _, k := range keys[:3] {
			for _, edited := range substitutions(k, strings.IndexByte(k, '_')+1, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 3) {
				keys = append(keys, edited)
				want = append(want, result{Outcome: "licence_key_invalid"})
			}
		}
		for i, k := range keys {
			if got, _ := keyOutcome(v, k); got != want[i].Outcome {
				t.Fatalf("Go SDK: key %q: %s, want %s", k, got, want[i].Outcome)
			}
		}
		for _, tl := range tls {
			got := tl.batch(t, keys, "key", "--product", deskFile, "--product", notesFile)
			for i := range keys {
				if diff := cmp.Diff(want[i], got[i]); diff != "" {
					t.Errorf("%s: key %q (-want +got):\n%s", tl.name, keys[i], diff)
				}
			}
		}
	})

	t.Run("verdicts", func(t *testing.T) {
		verdicts := []string{deskVerdict.Verdict, revokedVerdict.Verdict}
		for _, vd := range verdicts[:2] {
			verdicts = append(verdicts, substitutions(vd, 3, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 1)...)
		}
		verdicts = append(verdicts, notesVerdict.Verdict) // another product's
		for _, tl := range tls {
			got := tl.batch(t, verdicts, "verdict", "--product", deskFile)
			for i, vd := range verdicts {
				want, payload := verdictOutcome(t, deskSDK, vd)
				if (want == "valid") != (i < 2) {
					t.Fatalf("Go SDK: verdict %d: %s", i, want)
				}
				if got[i].Outcome != want {
					t.Errorf("%s: verdict %q: %s, want %s", tl.name, vd, got[i].Outcome, want)
				} else if want == "valid" && !equalJSON(got[i].Verdict, payload) {
					t.Errorf("%s: verdict payload %v, Go SDK: %v", tl.name, got[i].Verdict, payload)
				}
			}
			if got := tl.batch(t, []string{notesVerdict.Verdict}, "verdict", "--product", notesFile); got[0].Outcome != "valid" {
				t.Errorf("%s: a verdict of a product on its own signing domain: %s", tl.name, got[0].Outcome)
			}
		}
	})

	t.Run("judged", func(t *testing.T) {
		yes, no := true, false
		now := time.Now().UTC().Format(time.RFC3339)
		check := []string{"verdict", "--product", deskFile, "--machine-id", "machine-0001", "--licence-id", desk.Licence.ID, "--now", now, "--major", "2"}
		for _, tl := range tls {
			got := tl.batch(t, []string{deskVerdict.Verdict, revokedVerdict.Verdict}, check...)
			if g := got[0]; g.Outcome != "valid" || *g.Valid != yes || g.Reason != "" || *g.Seated != yes || *g.Stale != no {
				t.Errorf("%s: the active verdict: %+v, want valid, seated, not stale", tl.name, g)
			}
			if g := got[1]; g.Outcome != "valid" || *g.Valid != no || g.Reason != "revoked" {
				t.Errorf("%s: the revoked verdict: %+v, want not valid, reason revoked", tl.name, g)
			}
			newer := tl.batch(t, []string{deskVerdict.Verdict}, append(check[:len(check)-1:len(check)-1], "3")...)
			if g := newer[0]; *g.Valid != no || g.Reason != "newer_major" {
				t.Errorf("%s: the verdict for major 3: %+v, want reason newer_major", tl.name, g)
			}
			other := tl.batch(t, []string{deskVerdict.Verdict}, "verdict", "--product", deskFile, "--machine-id", "machine-0002", "--licence-id", desk.Licence.ID)
			if other[0].Outcome != "verdict_mismatch" {
				t.Errorf("%s: the verdict on another machine: %s, want verdict_mismatch", tl.name, other[0].Outcome)
			}
		}
	})
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for mk, mv := range m {
		out[mk] = mv
	}
	return out
}

// substitutions are s with each character of the alphabet from start on
// replaced by the n that follow it in the alphabet, in turn.
func substitutions(s string, start int, alphabet string, n int) []string {
	var out []string
	for i := start; i < len(s); i++ {
		at := strings.IndexByte(alphabet, s[i])
		if at < 0 {
			continue
		}
		for k := 1; k <= n; k++ {
			out = append(out, s[:i]+string(alphabet[(at+k)%len(alphabet)])+s[i+1:])
		}
	}
	return out
}

func equalJSON(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
