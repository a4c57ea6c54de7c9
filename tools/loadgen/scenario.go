package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
)

// scenarios are the scenario names, in the order usage lists them.
var scenarios = []string{"status", "renew", "activate", "find", "find-q", "find-ref", "read", "issue", "revoke", "counts", "counts-product", "mixed"}

// scenarioOf returns the requests scenario makes on f. Administration
// requests take the keys in turn.
func scenarioOf(name string, f *fixture, keys *keyRing) (scenarioFunc, error) {
	admin := func(method, path string, body []byte) request {
		return request{method: method, path: path, body: body, key: keys.next()}
	}
	switch name {
	case "status":
		return func(seq uint64) request {
			return request{method: http.MethodPost, path: "/v1/activations/status", body: f.machines[seq%uint64(len(f.machines))]}
		}, nil
	case "renew":
		return func(seq uint64) request {
			return request{method: http.MethodPost, path: "/v1/leases/renew", body: f.leases[seq%uint64(len(f.leases))]}
		}, nil
	case "activate":
		// The licences take turns: new seats on one licence queue for its
		// row lock, which no real fleet of customers does.
		return func(seq uint64) request {
			key := f.licenceKeys[seq%uint64(len(f.licenceKeys))]
			return request{method: http.MethodPost, path: "/v1/activations", body: activateBody(key, fmt.Sprintf("lg-%s-a%d", f.runID, seq))}
		}, nil
	case "find":
		return func(seq uint64) request {
			return admin(http.MethodGet, "/v1/admin/licences?email="+url.QueryEscape(f.email(seq)), nil)
		}, nil
	case "find-q":
		return func(seq uint64) request {
			return admin(http.MethodGet, "/v1/admin/licences?q="+url.QueryEscape(f.prefix(seq)), nil)
		}, nil
	case "find-ref":
		return func(seq uint64) request {
			return admin(http.MethodGet, "/v1/admin/licences?product_id="+url.QueryEscape(f.productID)+"&external_ref="+url.QueryEscape(f.ref(seq)), nil)
		}, nil
	case "read":
		return func(seq uint64) request {
			return admin(http.MethodGet, "/v1/admin/licences/"+url.PathEscape(f.ids[seq%uint64(len(f.ids))]), nil)
		}, nil
	case "issue":
		return func(seq uint64) request {
			return admin(http.MethodPost, "/v1/admin/licences", mustJSON(map[string]any{
				"product_id": f.productID, "email": fmt.Sprintf("lg-issue-%d@%s.example", seq, f.runID),
			}))
		}, nil
	case "revoke":
		body := mustJSON(map[string]string{"reason": "loadgen"})
		return func(seq uint64) request {
			r := admin(http.MethodPost, "/v1/admin/licences/"+url.PathEscape(f.ids[seq%uint64(len(f.ids))])+"/revoke", body)
			r.onOK = f.countChanged
			return r
		}, nil
	case "counts":
		return func(uint64) request {
			return admin(http.MethodGet, "/v1/admin/licences/counts", nil)
		}, nil
	case "counts-product":
		path := "/v1/admin/licences/counts?product_id=" + url.QueryEscape(f.productID)
		return func(uint64) request { return admin(http.MethodGet, path, nil) }, nil
	case "mixed":
		return f.mixed(admin), nil
	}
	return nil, fmt.Errorf("unknown scenario %q: want one of %s", name, strings.Join(scenarios, ", "))
}

// email is the email of a licence to find: a random loaded one, or the
// issued ones in turn.
func (f *fixture) email(seq uint64) string {
	if f.dataset > 0 {
		return datasetEmail(rand.IntN(f.dataset))
	}
	return f.emails[seq%uint64(len(f.emails))]
}

// prefix is a search text matching a few licences: on a data set the
// 100 licences of a random datasetPrefix, otherwise a whole email, which
// is a prefix of itself.
func (f *fixture) prefix(seq uint64) string {
	if f.dataset > 0 {
		return datasetPrefix(rand.IntN((f.dataset + 99) / 100))
	}
	return f.emails[seq%uint64(len(f.emails))]
}

// ref is the external reference of a licence to find.
func (f *fixture) ref(seq uint64) string {
	if f.dataset > 0 {
		return datasetRef(rand.IntN(f.dataset))
	}
	return f.refs[seq%uint64(len(f.refs))]
}

// countChanged counts a revoke that changed its licence. Revoking a
// licence already revoked answers changed:false, which is no error.
func (f *fixture) countChanged(body []byte) {
	var out struct {
		Changed bool `json:"changed"`
	}
	if json.Unmarshal(body, &out) == nil && out.Changed {
		f.changed.Add(1)
	}
}

// mixedOps is the mixed scenario's cycle of ten requests: three issues,
// three activations of new machines, a revoke, a reinstate and two
// deactivations, all in one organization.
var mixedOps = [10]string{"issue", "activate", "issue", "activate", "revoke", "issue", "activate", "reinstate", "deactivate", "deactivate"}

// mixed returns the mixed scenario: every write an organization sees at
// once, which on PostgreSQL take row locks in one organization. Machines
// take seats on the even licences; the odd ones are revoked and
// reinstated in turn, so no activation meets a revoked licence. A
// deactivation frees the machine an activation of the same cycle took (or
// answers changed:false, when that activation is still on its way).
func (f *fixture) mixed(admin func(method, path string, body []byte) request) scenarioFunc {
	seats := (len(f.licenceKeys) + 1) / 2
	turns := max(len(f.ids)/2, 1)
	machine := func(seq uint64) (string, string) {
		key := f.licenceKeys[2*(seq%uint64(seats))]
		return key, fmt.Sprintf("lg-%s-x%d", f.runID, seq)
	}
	// The revoke and the reinstate of one cycle change the same licence.
	odd := func(seq uint64) string {
		if len(f.ids) < 2 {
			return f.ids[0]
		}
		return f.ids[1+2*((seq/10)%uint64(turns))]
	}
	reason := mustJSON(map[string]string{"reason": "loadgen"})
	return func(seq uint64) request {
		var r request
		switch op := mixedOps[seq%10]; op {
		case "issue":
			r = admin(http.MethodPost, "/v1/admin/licences", mustJSON(map[string]any{
				"product_id": f.productID, "email": fmt.Sprintf("lg-mixed-%d@%s.example", seq, f.runID),
			}))
		case "activate":
			key, m := machine(seq)
			r = request{method: http.MethodPost, path: "/v1/activations", body: activateBody(key, m)}
		case "revoke":
			r = admin(http.MethodPost, "/v1/admin/licences/"+url.PathEscape(odd(seq))+"/revoke", reason)
		case "reinstate":
			r = admin(http.MethodPost, "/v1/admin/licences/"+url.PathEscape(odd(seq))+"/reinstate", reason)
		case "deactivate":
			// The activation three or seven requests earlier in the cycle.
			back := uint64(7)
			if seq%10 == 9 {
				back = 3
			}
			key, m := machine(seq - back)
			r = request{method: http.MethodPost, path: "/v1/activations/deactivate",
				body: mustJSON(map[string]string{"licence_key": key, "machine_id": m})}
		}
		r.op = mixedOps[seq%10]
		return r
	}
}
