package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeAPI answers the administration and activation requests setup makes
// and records who made them.
type fakeAPI struct {
	mu          sync.Mutex
	keyUse      map[string]int
	addrs       map[string]bool
	activations map[string][]string // licence key -> machines
	emails      []string
	trustXFF    bool
}

func newFakeAPI(t *testing.T) (*fakeAPI, *client) {
	api := &fakeAPI{keyUse: map[string]int{}, addrs: map[string]bool{}, activations: map[string][]string{}, trustXFF: true}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return api, newClient(srv.URL, 8)
}

func (a *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if k := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "); k != "" {
		a.keyUse[k]++
	}
	var in map[string]any
	json.NewDecoder(r.Body).Decode(&in)
	switch {
	case r.Method == "POST" && r.URL.Path == "/v1/admin/products":
		w.WriteHeader(201)
	case r.Method == "POST" && r.URL.Path == "/v1/admin/licences":
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"licence":{"id":"id-%s"},"licence_key":"KEY-%s"}`, in["email"], in["email"])
	case r.Method == "POST" && r.URL.Path == "/v1/activations":
		addr := r.Header.Get("X-Forwarded-For")
		if !a.trustXFF || a.addrs[addr] {
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error":{"code":"rate_limited"}}`)
			return
		}
		a.addrs[addr] = true
		key := in["licence_key"].(string)
		a.activations[key] = append(a.activations[key], in["machine_id"].(string))
		w.WriteHeader(201)
	case r.Method == "POST" && r.URL.Path == "/v1/leases":
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"lease":{"id":"lease-%s"},"verdict":"v"}`, in["machine_id"])
	case r.Method == "GET" && r.URL.Path == "/v1/admin/licences":
		email := r.URL.Query().Get("email")
		a.emails = append(a.emails, email)
		fmt.Fprintf(w, `{"licences":[{"id":"id-%s"}]}`, email)
	default:
		w.WriteHeader(404)
	}
}

func TestSetupStatus(t *testing.T) {
	api, c := newFakeAPI(t)
	keys := newKeyRing([]string{"k1", "k2", "k3"})
	f, err := setup(t.Context(), c, keys, setupConfig{scenario: "status", licences: 3, machines: 10})
	if err != nil {
		t.Fatal(err)
	}
	// One product and three licences, spread over the three keys.
	if api.keyUse["k1"]+api.keyUse["k2"]+api.keyUse["k3"] != 4 || api.keyUse["k1"] == 0 || api.keyUse["k2"] == 0 || api.keyUse["k3"] == 0 {
		t.Errorf("key use = %v, want four requests over all three keys", api.keyUse)
	}
	// Ten machines, each from its own address, spread over the licences.
	if len(api.addrs) != 10 {
		t.Errorf("activations came from %d addresses, want 10", len(api.addrs))
	}
	for key, ms := range api.activations {
		if len(ms) < 3 || len(ms) > 4 {
			t.Errorf("licence %s got %d machines, want 3 or 4 of the 10", key, len(ms))
		}
	}
	if len(f.machines) != 10 {
		t.Fatalf("fixture holds %d machines, want 10", len(f.machines))
	}
	distinct := map[string]bool{}
	for _, b := range f.machines {
		distinct[string(b)] = true
	}
	if len(distinct) != 10 {
		t.Errorf("status bodies name %d machines, want 10", len(distinct))
	}
}

// TestSetupRenew: every activated machine takes a lease, and each renewal
// body names the machine, its licence key and its own lease.
func TestSetupRenew(t *testing.T) {
	_, c := newFakeAPI(t)
	f, err := setup(t.Context(), c, newKeyRing([]string{"k"}), setupConfig{scenario: "renew", licences: 2, machines: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.leases) != 5 {
		t.Fatalf("fixture holds %d leases, want 5", len(f.leases))
	}
	for i, b := range f.leases {
		var body map[string]string
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		if body["lease_id"] != "lease-"+body["machine_id"] || body["licence_key"] == "" || len(body) != 3 {
			t.Errorf("renewal body %d = %s, want the machine's key, machine and lease", i, b)
		}
	}
}

func TestSetupRefusesUntrustedAddresses(t *testing.T) {
	api, c := newFakeAPI(t)
	api.trustXFF = false
	_, err := setup(t.Context(), c, newKeyRing([]string{"k"}), setupConfig{scenario: "status", licences: 1, machines: 2})
	if err == nil || !strings.Contains(err.Error(), "LICENTIA_TRUSTED_PROXIES") {
		t.Errorf("setup() error = %v, want one naming LICENTIA_TRUSTED_PROXIES", err)
	}
}

func TestSetupDatasetSample(t *testing.T) {
	api, c := newFakeAPI(t)
	keys := newKeyRing([]string{"k1", "k2", "k3"})
	f, err := setup(t.Context(), c, keys, setupConfig{scenario: "read", dataset: 1000, datasetProduct: "ds", sample: 30})
	if err != nil {
		t.Fatal(err)
	}
	if f.productID != "ds" || f.dataset != 1000 || len(f.ids) != 30 {
		t.Errorf("fixture product, dataset, ids = %q, %d, %d; want ds, 1000, 30", f.productID, f.dataset, len(f.ids))
	}
	seen := map[string]bool{}
	for _, e := range api.emails {
		if !strings.HasPrefix(e, "load-") || !strings.HasSuffix(e, "@dataset.example") || seen[e] {
			t.Errorf("sampled email %q: want distinct loaded emails", e)
		}
		seen[e] = true
	}
	if want := map[string]int{"k1": 10, "k2": 10, "k3": 10}; fmt.Sprint(api.keyUse) != fmt.Sprint(want) {
		t.Errorf("key use = %v, want %v", api.keyUse, want)
	}
	// Scenarios that need nothing learnt make no request at setup.
	api.emails = nil
	if _, err := setup(t.Context(), c, keys, setupConfig{scenario: "find", dataset: 1000, datasetProduct: "ds", sample: 30}); err != nil || len(api.emails) != 0 {
		t.Errorf("setup(find) = %v with %d finds, want none", err, len(api.emails))
	}
}
