package providertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/providers"
)

// The suite every adapter runs, so that the three map the providers' answers
// and check signatures alike. RunClient covers Account and Product, RunVerify
// the signature refusals, FuzzVerify and FuzzParse the bodies of the fuzz
// targets each adapter package declares (the fuzz engine needs them there).

// SuiteTimeout stands in for providers.Timeout so a hanging fake ends fast.
const SuiteTimeout = 200 * time.Millisecond

// Fake is what the suite asks of a provider's fake: Stripe, Paddle and
// LemonSqueezy are all one.
type Fake interface {
	URL() string
	SetOutcome(o Outcome)
}

// ClientCase describes one adapter to RunClient.
type ClientCase[F Fake] struct {
	// Key is the key the fake accepts; OtherKey a well-formed one it
	// refuses.
	Key, OtherKey string
	// Product is an id the fake knows; OtherProduct one it does not.
	Product, OtherProduct string
	// NewFake starts the provider's fake, accepting Key and knowing Product.
	NewFake func(t testing.TB) F
	// NewClient builds the adapter against baseURL.
	NewClient func(baseURL string, timeout time.Duration) providers.Client
	// Account is what Account answers for Key from the fake.
	Account func(fake F) providers.Account
}

// RunClient checks what Account and Product report for every answer of the
// provider's API and for a network failure, and that no error carries the
// key.
func RunClient[F Fake](t *testing.T, c ClientCase[F]) {
	t.Helper()
	t.Run("Account", func(t *testing.T) {
		for _, tt := range []struct {
			name    string
			outcome Outcome
			key     string
			wantErr error
		}{
			{"ok", OK, c.Key, nil},
			{"unknown key", OK, c.OtherKey, providers.ErrTokenRefused},
			{"401", TokenRefused, c.Key, providers.ErrTokenRefused},
			{"403", PermissionDenied, c.Key, providers.ErrPermissionDenied},
			{"404", NotFound, c.Key, providers.ErrUnavailable},
			{"500", ServerError, c.Key, providers.ErrUnavailable},
			{"hang", Hang, c.Key, providers.ErrUnavailable},
		} {
			t.Run(tt.name, func(t *testing.T) {
				fake := c.NewFake(t)
				fake.SetOutcome(tt.outcome)
				acct, err := c.NewClient(fake.URL(), SuiteTimeout).Account(t.Context(), tt.key)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Account() error = %v, want %v", err, tt.wantErr)
				}
				if err != nil {
					noKey(t, "Account", err, tt.key)
					return
				}
				if want := c.Account(fake); *acct != want {
					t.Errorf("Account() = %+v, want %+v", acct, want)
				}
			})
		}
		t.Run("network error", func(t *testing.T) {
			_, err := c.NewClient(closedURL(), SuiteTimeout).Account(t.Context(), c.Key)
			if !errors.Is(err, providers.ErrUnavailable) {
				t.Fatalf("Account() error = %v, want ErrUnavailable", err)
			}
			noKey(t, "Account", err, c.Key)
		})
	})
	t.Run("Product", func(t *testing.T) {
		for _, tt := range []struct {
			name    string
			outcome Outcome
			product string
			wantErr error
		}{
			{"ok", OK, c.Product, nil},
			{"unknown product", OK, c.OtherProduct, providers.ErrNoSuchProduct},
			{"401", TokenRefused, c.Product, providers.ErrTokenRefused},
			{"403", PermissionDenied, c.Product, providers.ErrPermissionDenied},
			{"404", NotFound, c.Product, providers.ErrNoSuchProduct},
			{"500", ServerError, c.Product, providers.ErrUnavailable},
			{"hang", Hang, c.Product, providers.ErrUnavailable},
		} {
			t.Run(tt.name, func(t *testing.T) {
				fake := c.NewFake(t)
				fake.SetOutcome(tt.outcome)
				err := c.NewClient(fake.URL(), SuiteTimeout).Product(t.Context(), c.Key, tt.product)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Product() error = %v, want %v", err, tt.wantErr)
				}
				if err != nil {
					noKey(t, "Product", err, c.Key)
				}
			})
		}
		t.Run("network error", func(t *testing.T) {
			err := c.NewClient(closedURL(), SuiteTimeout).Product(t.Context(), c.Key, c.Product)
			if !errors.Is(err, providers.ErrUnavailable) {
				t.Fatalf("Product() error = %v, want ErrUnavailable", err)
			}
			noKey(t, "Product", err, c.Key)
		})
	})
}

func noKey(t *testing.T, call string, err error, key string) {
	t.Helper()
	if strings.Contains(err.Error(), key) {
		t.Errorf("%s() error %q carries the key", call, err)
	}
}

// closedURL is the address of a server that no longer listens.
func closedURL() string {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

// Header is one value of a signature header, named for the test.
type Header struct {
	Name, Value string
}

// VerifyCase describes one adapter's signature scheme to RunVerify.
type VerifyCase struct {
	// Verifier is the adapter.
	Verifier providers.Webhooks
	// Header is the header the provider signs in.
	Header string
	// Secret is the endpoint's secret; Body an event signed under it.
	Secret string
	Body   []byte
	// Sign is the provider's signature of body under secret at a time.
	Sign func(body []byte, secret string, at time.Time) string
	// NewRequest is the provider's sender: a request signed under secret.
	NewRequest func(ctx context.Context, url, secret string, at time.Time, body []byte) (*http.Request, error)
	// Timestamped is set for schemes that sign a timestamp: a signature
	// within providers.SignatureTolerance is accepted, one outside refused.
	Timestamped bool
	// Accept and Refuse are the scheme's own header values, beyond the
	// ones every scheme shares, that Verify must accept or refuse.
	Accept, Refuse []Header
}

// VerifyNow is the time RunVerify verifies at.
var VerifyNow = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// RunVerify checks that Verify accepts the provider's signature and refuses
// every failure with ErrSignatureInvalid: no header, a malformed one, another
// secret, an empty secret, a changed body and, for timestamped schemes, a
// timestamp outside the tolerance.
func RunVerify(t *testing.T, c VerifyCase) {
	t.Helper()
	now := VerifyNow
	good := c.Sign(c.Body, c.Secret, now)
	tampered := append(append([]byte(nil), c.Body...), ' ')
	type check struct {
		name   string
		header string
		body   []byte
		secret string
		ok     bool
	}
	checks := []check{
		{"valid", good, c.Body, c.Secret, true},
		{"wrong secret", c.Sign(c.Body, c.Secret+"_other", now), c.Body, c.Secret, false},
		{"tampered body", good, tampered, c.Secret, false},
		{"another body's signature", c.Sign([]byte("{}"), c.Secret, now), c.Body, c.Secret, false},
		{"empty secret", c.Sign(c.Body, "", now), c.Body, "", false},
		{"missing", "", c.Body, c.Secret, false},
		{"malformed", "garbage", c.Body, c.Secret, false},
	}
	if c.Timestamped {
		checks = append(checks,
			check{"within tolerance", c.Sign(c.Body, c.Secret, now.Add(-4*time.Minute)), c.Body, c.Secret, true},
			check{"slightly ahead", c.Sign(c.Body, c.Secret, now.Add(time.Minute)), c.Body, c.Secret, true},
			check{"stale", c.Sign(c.Body, c.Secret, now.Add(-6*time.Minute)), c.Body, c.Secret, false},
			check{"far ahead", c.Sign(c.Body, c.Secret, now.Add(6*time.Minute)), c.Body, c.Secret, false},
		)
	}
	for _, h := range c.Accept {
		checks = append(checks, check{h.Name, h.Value, c.Body, c.Secret, true})
	}
	for _, h := range c.Refuse {
		checks = append(checks, check{h.Name, h.Value, c.Body, c.Secret, false})
	}
	for _, tt := range checks {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.header != "" {
				h.Set(c.Header, tt.header)
			}
			err := c.Verifier.Verify(h, tt.body, tt.secret, now)
			if tt.ok && err != nil {
				t.Fatalf("Verify() = %v, want nil", err)
			}
			if !tt.ok && !errors.Is(err, providers.ErrSignatureInvalid) {
				t.Fatalf("Verify() = %v, want ErrSignatureInvalid", err)
			}
		})
	}
	t.Run("request from sender", func(t *testing.T) {
		req, err := c.NewRequest(t.Context(), "http://127.0.0.1/hook", c.Secret, now, c.Body)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Verifier.Verify(req.Header, c.Body, c.Secret, now); err != nil {
			t.Fatalf("Verify() = %v, want nil", err)
		}
	})
}

// maxFuzzBody matches the webhook route's 64 KB body limit.
const maxFuzzBody = 64 << 10

// FuzzVerify is the body of an adapter's FuzzVerify: seeded with the case's
// signed body and with sigs, it checks that Verify answers nil or
// ErrSignatureInvalid, and for schemes without a timestamp that it accepts
// only the body's own signature.
func FuzzVerify(f *testing.F, c VerifyCase, sigs ...string) {
	f.Helper()
	now := VerifyNow
	f.Add(c.Body, c.Sign(c.Body, c.Secret, now))
	for _, sig := range sigs {
		f.Add([]byte("{}"), sig)
		f.Add([]byte(""), sig)
	}
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		if len(body) > maxFuzzBody || len(sig) > 4096 {
			return
		}
		err := c.Verifier.Verify(http.Header{c.Header: {sig}}, body, c.Secret, now)
		if err != nil && !errors.Is(err, providers.ErrSignatureInvalid) {
			t.Fatalf("Verify() = %v, want nil or ErrSignatureInvalid", err)
		}
		// Hex is read in either case: an upper-case signature is the same.
		if err == nil && !c.Timestamped && !strings.EqualFold(sig, c.Sign(body, c.Secret, now)) {
			t.Fatalf("Verify() accepted %q, not the body's signature", sig)
		}
	})
}

// FuzzParse is the body of an adapter's FuzzParse: seeded with bodies, it
// checks that Parse answers an event with an id and a kind, or
// ErrEventMalformed, or ErrUnavailable.
func FuzzParse(f *testing.F, w providers.Webhooks, apiKey string, bodies ...[]byte) {
	f.Helper()
	for _, b := range bodies {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > maxFuzzBody {
			return
		}
		ev, err := w.Parse(t.Context(), body, apiKey)
		if err != nil {
			if !errors.Is(err, providers.ErrEventMalformed) && !errors.Is(err, providers.ErrUnavailable) {
				t.Fatalf("Parse() error = %v, want ErrEventMalformed or ErrUnavailable", err)
			}
			return
		}
		if ev.ID == "" || ev.Kind == "" {
			t.Fatalf("Parse() = %+v: an event needs an id and a kind", ev)
		}
	})
}
