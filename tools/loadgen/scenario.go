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
var scenarios = []string{"status", "activate", "find", "find-q", "find-ref", "read", "issue", "revoke", "counts", "counts-product"}

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
