package main

import (
	"encoding/json"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestDatasetNames(t *testing.T) {
	if got, want := datasetEmail(123), "load-0000123@dataset.example"; got != want {
		t.Errorf("datasetEmail(123) = %q, want %q", got, want)
	}
	if got, want := datasetRef(999999), "load-0999999"; got != want {
		t.Errorf("datasetRef(999999) = %q, want %q", got, want)
	}
	// The prefix of block 123 is the common start of licences 12300 to 12399.
	p := datasetPrefix(123)
	if !strings.HasPrefix(datasetEmail(12300), p) || !strings.HasPrefix(datasetEmail(12399), p) || strings.HasPrefix(datasetEmail(12400), p) || strings.HasPrefix(datasetEmail(1230), p) {
		t.Errorf("datasetPrefix(123) = %q does not match exactly licences 12300-12399", p)
	}
}

func TestDatasetScenarios(t *testing.T) {
	f := &fixture{dataset: 1000, productID: "ds", ids: []string{"id0", "id1", "id2"}}
	keys := newKeyRing([]string{"k1", "k2"})
	for _, tt := range []struct {
		scenario, method string
		path             *regexp.Regexp
	}{
		{"find", "GET", regexp.MustCompile(`^/v1/admin/licences\?email=load-0000[0-9]{3}%40dataset\.example$`)},
		{"find-q", "GET", regexp.MustCompile(`^/v1/admin/licences\?q=load-0000[0-9]$`)},
		{"find-ref", "GET", regexp.MustCompile(`^/v1/admin/licences\?product_id=ds&external_ref=load-0000[0-9]{3}$`)},
		{"read", "GET", regexp.MustCompile(`^/v1/admin/licences/id[0-2]$`)},
		{"revoke", "POST", regexp.MustCompile(`^/v1/admin/licences/id[0-2]/revoke$`)},
		{"counts", "GET", regexp.MustCompile(`^/v1/admin/licences/counts$`)},
		{"counts-product", "GET", regexp.MustCompile(`^/v1/admin/licences/counts\?product_id=ds$`)},
		{"issue", "POST", regexp.MustCompile(`^/v1/admin/licences$`)},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			sc, err := scenarioOf(tt.scenario, f, keys)
			if err != nil {
				t.Fatal(err)
			}
			var gotKeys []string
			for seq := range uint64(50) {
				r := sc(seq)
				if r.method != tt.method || !tt.path.MatchString(r.path) {
					t.Fatalf("request %d = %s %s, want %s %v", seq, r.method, r.path, tt.method, tt.path)
				}
				gotKeys = append(gotKeys, r.key)
			}
			if !slices.Equal(gotKeys[:4], []string{"k1", "k2", "k1", "k2"}) {
				t.Errorf("keys = %v, want k1 and k2 in turn", gotKeys[:4])
			}
		})
	}
	// Licences 0 to 999 make ten prefix blocks; over many requests find-q
	// asks for all of them and nothing else.
	sc, _ := scenarioOf("find-q", f, keys)
	seen := make(map[string]bool)
	for seq := range uint64(2000) {
		q, _ := url.ParseQuery(strings.TrimPrefix(sc(seq).path, "/v1/admin/licences?"))
		seen[q.Get("q")] = true
	}
	if len(seen) != 10 || !seen["load-00000"] || !seen["load-00009"] {
		t.Errorf("find-q searched %d prefixes, want load-00000 to load-00009", len(seen))
	}
}

func TestRevokeCountsChanged(t *testing.T) {
	f := &fixture{ids: []string{"a", "b"}}
	sc, err := scenarioOf("revoke", f, newKeyRing([]string{"k"}))
	if err != nil {
		t.Fatal(err)
	}
	r := sc(0)
	if string(r.body) != `{"reason":"loadgen"}` {
		t.Errorf("revoke body = %s", r.body)
	}
	for _, body := range []string{`{"licence":{},"changed":true}`, `{"licence":{},"changed":false}`, `{"changed":true}`, `not json`} {
		r.onOK([]byte(body))
	}
	if got := f.changed.Load(); got != 2 {
		t.Errorf("changed = %d, want 2", got)
	}
}

func TestOwnScenarios(t *testing.T) {
	f := &fixture{runID: "run", productID: "p", licenceKeys: []string{"KEY"}, emails: []string{"lg-0@run.example", "lg-1@run.example"},
		refs: []string{"lg-run-0", "lg-run-1"}, machines: [][]byte{[]byte("m0"), []byte("m1"), []byte("m2")}}
	keys := newKeyRing([]string{"k"})
	sc, _ := scenarioOf("status", f, keys)
	var bodies []string
	for seq := range uint64(6) {
		r := sc(seq)
		if r.key != "" || r.path != "/v1/activations/status" {
			t.Errorf("status request = %+v, want a public status check", r)
		}
		bodies = append(bodies, string(r.body))
	}
	if want := []string{"m0", "m1", "m2", "m0", "m1", "m2"}; !slices.Equal(bodies, want) {
		t.Errorf("status bodies = %v, want the machines in turn %v", bodies, want)
	}
	f.leases = [][]byte{[]byte("l0"), []byte("l1")}
	sc, _ = scenarioOf("renew", f, keys)
	if r0, r1, r2 := sc(0), sc(1), sc(2); r0.path != "/v1/leases/renew" || r0.key != "" ||
		string(r0.body) != "l0" || string(r1.body) != "l1" || string(r2.body) != "l0" {
		t.Errorf("renew requests %+v %+v %+v, want public renewals of the leases in turn", r0, r1, r2)
	}
	sc, _ = scenarioOf("activate", f, keys)
	if a, b := string(sc(1).body), string(sc(2).body); a == b || !strings.Contains(a, `"licence_key":"KEY"`) {
		t.Errorf("activate bodies %s and %s: want a new machine each on the licence", a, b)
	}
	f.licenceKeys = []string{"K0", "K1"}
	f.leases = [][]byte{[]byte("l0"), []byte("l1")}
	sc, _ = scenarioOf("renew", f, keys)
	if r0, r1, r2 := sc(0), sc(1), sc(2); r0.path != "/v1/leases/renew" || r0.key != "" ||
		string(r0.body) != "l0" || string(r1.body) != "l1" || string(r2.body) != "l0" {
		t.Errorf("renew requests %+v %+v %+v, want public renewals of the leases in turn", r0, r1, r2)
	}
	sc, _ = scenarioOf("activate", f, keys)
	if a, b := string(sc(2).body), string(sc(3).body); !strings.Contains(a, `"licence_key":"K0"`) || !strings.Contains(b, `"licence_key":"K1"`) {
		t.Errorf("activate bodies %s and %s: want the licences in turn", a, b)
	}
	for _, tt := range []struct{ scenario, want string }{
		{"find", "/v1/admin/licences?email=lg-1%40run.example"},
		{"find-q", "/v1/admin/licences?q=lg-1%40run.example"},
		{"find-ref", "/v1/admin/licences?product_id=p&external_ref=lg-run-1"},
	} {
		sc, _ := scenarioOf(tt.scenario, f, keys)
		if got := sc(1).path; got != tt.want {
			t.Errorf("%s path = %q, want %q", tt.scenario, got, tt.want)
		}
	}
}

// TestMixedScenario: one cycle of ten requests issues three licences,
// activates three new machines on even licences, revokes and reinstates one
// odd licence, and deactivates two of the cycle's machines.
func TestMixedScenario(t *testing.T) {
	f := &fixture{runID: "run", productID: "p", licenceKeys: []string{"K0", "K1", "K2", "K3"}, ids: []string{"i0", "i1", "i2", "i3"}}
	sc, err := scenarioOf("mixed", f, newKeyRing([]string{"k"}))
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	activated := map[string]bool{}
	var changed []string
	for seq := range uint64(20) {
		r := sc(seq)
		ops[r.op]++
		switch r.op {
		case "issue":
			if r.path != "/v1/admin/licences" || r.key == "" {
				t.Errorf("issue request = %+v", r)
			}
		case "activate", "deactivate":
			var body struct {
				LicenceKey string `json:"licence_key"`
				MachineID  string `json:"machine_id"`
			}
			if err := json.Unmarshal(r.body, &body); err != nil {
				t.Fatal(err)
			}
			if body.LicenceKey != "K0" && body.LicenceKey != "K2" {
				t.Errorf("%s on %s, want an even licence", r.op, body.LicenceKey)
			}
			m := body.LicenceKey + "/" + body.MachineID
			if r.op == "activate" {
				activated[m] = true
			} else if !activated[m] {
				t.Errorf("seq %d deactivates %s, which no earlier request activated", seq, m)
			}
		case "revoke", "reinstate":
			changed = append(changed, r.path)
		}
	}
	if want := map[string]int{"issue": 6, "activate": 6, "revoke": 2, "reinstate": 2, "deactivate": 4}; !maps.Equal(ops, want) {
		t.Errorf("ops = %v, want %v", ops, want)
	}
	want := []string{"/v1/admin/licences/i1/revoke", "/v1/admin/licences/i1/reinstate", "/v1/admin/licences/i3/revoke", "/v1/admin/licences/i3/reinstate"}
	if !slices.Equal(changed, want) {
		t.Errorf("status changes %v, want %v", changed, want)
	}
}
