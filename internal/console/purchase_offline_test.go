package console_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/sdk"
)

// upload posts the customer page's offline form: email, order id and,
// unless file is nil, the request file.
func (c *client) upload(t *testing.T, email, orderID string, file []byte) answer {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	_ = mw.WriteField("email", email)
	_ = mw.WriteField("order_id", orderID)
	if file != nil {
		fw, err := mw.CreateFormFile("request", "licentia-offline-request.json")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(file)
	}
	mw.Close()
	return c.raw(t, "/console/purchase/offline", mw.FormDataContentType(), b.Bytes())
}

// raw posts body as it is, with contentType.
func (c *client) raw(t *testing.T, path, contentType string, body []byte) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	var out bytes.Buffer
	if _, err := out.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: out.String()}
}

// app is an application of productID on machineID, keeping its record
// under t.TempDir(); it never reaches the service.
func (e *env) app(t *testing.T, productID, machineID string) *sdk.Client {
	t.Helper()
	p, err := e.store.Product(t.Context(), e.org.ID, productID)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sdk.NewClient(sdk.Config{
		BaseURL: "https://licensing.invalid",
		Product: sdk.Product{ID: p.ID, KeyPrefix: p.KeyPrefix, LicenceDomain: p.LicenceSigningDomain,
			VerdictDomain: p.VerdictSigningDomain, PublicKeys: []ed25519.PublicKey{p.CurrentKey().PublicKey}},
		Major: 1, MachineID: machineID, Store: sdk.FileStore(filepath.Join(t.TempDir(), "licence.json")), Now: e.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCustomerPageOfflineActivation: the customer page takes the request
// file an application wrote on a computer without internet access, once
// the buyer proves the purchase, and offers the activation answer as a
// download the application imports. A wrong order id, another purchase's
// key, a missing, malformed or oversized file, and a revoked licence are
// refused on the page, and take no seat.
func TestCustomerPageOfflineActivation(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies = loopbackProxy
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		l := e.sell(t, "desk-app", "buyer@example.com", "ord_2001")
		view, err := e.admin.Licence(t.Context(), e.org.ID, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		key := *view.Key
		other := e.issue(t, e.org.ID, "desk-app", "someone@example.com")

		app := e.app(t, "desk-app", "lab-pc")
		request, err := app.OfflineRequest(key, sdk.Machine{Label: "Lab PC", OS: "windows", AppVersion: "1.2.0"})
		if err != nil {
			t.Fatal(err)
		}
		lookup := e.buyer("198.51.100.30").post(t, "/console/purchase", map[string][]string{"email": {"buyer@example.com"}, "order_id": {"ord_2001"}})
		for _, want := range []string{`action="/console/purchase/offline"`, `enctype="multipart/form-data"`, `name="request" type="file"`} {
			if !strings.Contains(lookup.body, want) {
				t.Errorf("purchase page lacks %q", want)
			}
		}

		seatFree := func(t *testing.T) {
			t.Helper()
			as, err := e.store.Activations(t.Context(), e.org.ID, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(as) != 0 {
				t.Errorf("a refused upload took a seat: %+v", as)
			}
		}
		otherFile, _ := json.Marshal(sdk.OfflineRequest{Format: sdk.OfflineRequestFormat, LicenceKey: *other.Key, MachineID: "lab-pc"})
		for i, tt := range []struct {
			name    string
			orderID string
			file    []byte
			status  int
			want    string
		}{
			{"wrong order id", "ord_9999", request, http.StatusNotFound, "No purchase matches"},
			{"no file", "ord_2001", nil, http.StatusBadRequest, "Choose the request file"},
			{"not JSON", "ord_2001", []byte("licence please"), http.StatusBadRequest, "the body is not valid JSON"},
			{"another format", "ord_2001", bytes.Replace(request, []byte("request/1"), []byte("request/9"), 1), http.StatusBadRequest, "must be " + sdk.OfflineRequestFormat},
			{"unknown field", "ord_2001", bytes.Replace(request, []byte(`"format"`), []byte(`"extra":1,"format"`), 1), http.StatusBadRequest, "unknown field"},
			{"another purchase's key", "ord_2001", otherFile, http.StatusNotFound, "another purchase"},
			{"oversized file", "ord_2001", append(bytes.Clone(request), bytes.Repeat([]byte(" "), sdk.MaxOfflineFile)...), http.StatusRequestEntityTooLarge, "over 65,536 bytes"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				c := e.buyer("198.51.100." + string(rune('1'+i)))
				a := c.upload(t, "buyer@example.com", tt.orderID, tt.file)
				wantStatus(t, tt.name, a, tt.status)
				if !strings.Contains(a.body, tt.want) || a.header.Get("Content-Disposition") != "" {
					t.Errorf("%s: page lacks %q or offers a download:\n%s", tt.name, tt.want, a.body)
				}
				seatFree(t)
			})
		}
		t.Run("form over the bound", func(t *testing.T) {
			a := e.buyer("198.51.100.60").raw(t, "/console/purchase/offline", "multipart/form-data; boundary=x", bytes.Repeat([]byte("x"), 90000))
			wantStatus(t, "oversized form", a, http.StatusRequestEntityTooLarge)
			seatFree(t)
		})
		t.Run("not multipart", func(t *testing.T) {
			a := e.buyer("198.51.100.61").post(t, "/console/purchase/offline", map[string][]string{"email": {"buyer@example.com"}, "order_id": {"ord_2001"}})
			wantStatus(t, "urlencoded form", a, http.StatusBadRequest)
			seatFree(t)
		})

		a := e.buyer("198.51.100.70").upload(t, "buyer@example.com", "ord_2001", request)
		wantStatus(t, "upload", a, http.StatusOK)
		if got := a.header.Get("Content-Disposition"); got != `attachment; filename="licentia-offline-answer.json"` {
			t.Errorf("Content-Disposition = %q, want an attachment", got)
		}
		if got := a.header.Get("Content-Type"); got != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", got)
		}
		if _, err := app.ImportOfflineAnswer([]byte(strings.Replace(a.body, `"lab-pc"`, `"lab-pd"`, 1))); !errors.Is(err, sdk.ErrVerdictMismatch) {
			t.Errorf("ImportOfflineAnswer() of an edited answer error = %v, want ErrVerdictMismatch", err)
		}
		got, err := app.ImportOfflineAnswer([]byte(a.body))
		if err != nil {
			t.Fatalf("ImportOfflineAnswer() error = %v", err)
		}
		if got.LicenceID != l.ID || got.MachineID != "lab-pc" || got.Label != "Lab PC" {
			t.Errorf("imported activation = %+v, want lab-pc of %s", got, l.ID)
		}
		if st := app.State(); !st.Valid || !st.Seated {
			t.Errorf("State() after the import = %+v, want valid and seated", st)
		}
		as, err := e.store.Activations(t.Context(), e.org.ID, l.ID)
		if err != nil || len(as) != 1 || as[0].MachineID != "lab-pc" {
			t.Errorf("activations = %+v, %v; want lab-pc's seat", as, err)
		}
		audit, err := e.store.LicenceAudit(t.Context(), e.org.ID, l.ID)
		if err != nil || audit[len(audit)-1].Action != licentia.AuditActivationCreated {
			t.Errorf("audit = %+v, %v; want the activation last", audit, err)
		}

		if _, err := e.admin.RevokeLicence(t.Context(), licentia.OperatorActor, e.org.ID, l.ID, admin.Reason("chargeback")); err != nil {
			t.Fatal(err)
		}
		revoked := e.buyer("198.51.100.71").upload(t, "buyer@example.com", "ord_2001",
			bytes.Replace(request, []byte(`"lab-pc"`), []byte(`"lab-pe"`), 1))
		wantStatus(t, "upload for a revoked licence", revoked, http.StatusForbidden)
		if !strings.Contains(revoked.body, "The licence was revoked.") || revoked.header.Get("Content-Disposition") != "" {
			t.Errorf("a refusal offers a download, or does not say why:\n%s", revoked.body)
		}
	})
}
