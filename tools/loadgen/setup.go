package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// fixture is what a scenario works on: what setup created, or the
// licences of a loaded data set.
type fixture struct {
	runID     string
	productID string
	dataset   int // licences loaded by the data loader; 0 when setup issued its own

	licenceKeys []string
	ids         []string
	emails      []string
	refs        []string
	machines    [][]byte // status and renew: bodies of the activated machines
	leases      [][]byte // renew: bodies naming each machine's lease

	changed atomic.Int64 // revokes that changed a licence
}

// call sends one setup request and decodes a 2xx answer into out. A 429
// on an administration route waits as long as the answer asks and tries
// again; on a public route it fails, since setup spreads those over
// client addresses and a 429 means the server does not trust them.
func (c *client) call(ctx context.Context, req request, forwarded bool, out any) error {
	for {
		a, err := c.send(ctx, req, forwarded)
		if err != nil {
			return fmt.Errorf("%s %s: %w", req.method, req.path, err)
		}
		if a.status == http.StatusTooManyRequests && req.key == "" {
			return fmt.Errorf("%s %s: 429 from a public route: start the server with LICENTIA_TRUSTED_PROXIES=127.0.0.1/32", req.method, req.path)
		}
		if a.status == http.StatusTooManyRequests {
			if !sleepUntil(ctx, time.Now().Add(max(a.retryAfter, time.Second))) {
				return ctx.Err()
			}
			continue
		}
		if a.status < 200 || a.status >= 300 {
			return fmt.Errorf("%s %s: %d %s: %s", req.method, req.path, a.status, a.code, strings.TrimSpace(string(a.body)))
		}
		if out == nil {
			return nil
		}
		return json.Unmarshal(a.body, out)
	}
}

// parallel runs f(i) for i in [0, n), eight at a time, until one fails,
// and returns the first error.
func parallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	var first error
	var once sync.Once
	var failed atomic.Bool
	sem := make(chan struct{}, 8)
	for i := range n {
		sem <- struct{}{}
		if failed.Load() {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := f(i); err != nil {
				once.Do(func() { first = err })
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	return first
}

// randomID returns n random lowercase letters.
func randomID(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

func mustJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

// setupConfig is what setup needs to know.
type setupConfig struct {
	scenario       string
	licences       int // licences to issue
	machines       int // machines to activate for status
	dataset        int // licences loaded; 0 to issue our own
	datasetProduct string
	sample         int // licence ids to learn of the data set, for read and revoke
}

// setup prepares the fixture of a scenario through the administration
// API: on a loaded data set it only learns licence ids, for read and
// revoke; otherwise it creates a product and issues what the scenario
// needs.
func setup(ctx context.Context, c *client, keys *keyRing, sc setupConfig) (*fixture, error) {
	f := &fixture{runID: randomID(8)}
	if sc.dataset > 0 && usesDataset(sc.scenario) {
		f.dataset, f.productID = sc.dataset, sc.datasetProduct
		if sc.scenario == "read" || sc.scenario == "revoke" {
			ids, err := sampleIDs(ctx, c, keys, sc.dataset, sc.sample)
			if err != nil {
				return nil, err
			}
			f.ids = ids
		}
		return f, nil
	}
	if sc.scenario == "counts" {
		return f, nil
	}
	if err := f.createProduct(ctx, c, keys); err != nil {
		return nil, err
	}
	n := sc.licences
	if sc.scenario == "issue" {
		n = 1
	}
	if err := f.issue(ctx, c, keys, n); err != nil {
		return nil, err
	}
	switch sc.scenario {
	case "status":
		return f, f.activate(ctx, c, sc.machines)
	case "renew":
		if err := f.activate(ctx, c, sc.machines); err != nil {
			return nil, err
		}
		return f, f.lease(ctx, c)
	}
	return f, nil
}

func (f *fixture) createProduct(ctx context.Context, c *client, keys *keyRing) error {
	f.productID = "loadgen-" + f.runID
	prefix := "L" + strings.ToUpper(randomID(5))
	err := c.call(ctx, request{method: http.MethodPost, path: "/v1/admin/products", key: keys.next(), body: mustJSON(map[string]any{
		"id": f.productID, "name": "Loadgen " + f.runID, "key_prefix": prefix, "current_major": 1,
	})}, false, nil)
	if err != nil {
		return fmt.Errorf("create product: %w", err)
	}
	return nil
}

// issue issues n machines licences of the highest limit.
func (f *fixture) issue(ctx context.Context, c *client, keys *keyRing, n int) error {
	f.licenceKeys, f.ids, f.emails, f.refs = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	return parallel(n, func(i int) error {
		email := fmt.Sprintf("lg-%d@%s.example", i, f.runID)
		ref := fmt.Sprintf("lg-%s-%d", f.runID, i)
		var out struct {
			Licence struct {
				ID string `json:"id"`
			} `json:"licence"`
			LicenceKey string `json:"licence_key"`
		}
		err := c.call(ctx, request{method: http.MethodPost, path: "/v1/admin/licences", key: keys.next(), body: mustJSON(map[string]any{
			"product_id": f.productID, "email": email, "external_ref": ref,
			"limit_kind": "machines", "limit_count": int64(4294967295),
		})}, false, &out)
		if err != nil {
			return fmt.Errorf("issue licence %d: %w", i, err)
		}
		f.licenceKeys[i], f.ids[i], f.emails[i], f.refs[i] = out.LicenceKey, out.Licence.ID, email, ref
		return nil
	})
}

// activate activates n machines, machine i on licence i modulo the
// licences issued, each from its own client address, and keeps the
// status bodies that name them.
func (f *fixture) activate(ctx context.Context, c *client, n int) error {
	f.machines = make([][]byte, n)
	return parallel(n, func(i int) error {
		key, machine := f.licenceKeys[i%len(f.licenceKeys)], fmt.Sprintf("lg-%s-m%d", f.runID, i)
		err := c.call(ctx, request{method: http.MethodPost, path: "/v1/activations", body: activateBody(key, machine)}, true, nil)
		if err != nil {
			return fmt.Errorf("activate machine %d: %w", i, err)
		}
		f.machines[i] = mustJSON(map[string]string{"licence_key": key, "machine_id": machine})
		return nil
	})
}

// lease takes a lease for each activated machine, each from its own
// client address, and keeps the renewal bodies that name them.
func (f *fixture) lease(ctx context.Context, c *client) error {
	f.leases = make([][]byte, len(f.machines))
	return parallel(len(f.machines), func(i int) error {
		var seat map[string]string
		if err := json.Unmarshal(f.machines[i], &seat); err != nil {
			return err
		}
		var out struct {
			Lease struct {
				ID string `json:"id"`
			} `json:"lease"`
		}
		if err := c.call(ctx, request{method: http.MethodPost, path: "/v1/leases", body: f.machines[i]}, true, &out); err != nil {
			return fmt.Errorf("take a lease for machine %d: %w", i, err)
		}
		seat["lease_id"] = out.Lease.ID
		f.leases[i] = mustJSON(seat)
		return nil
	})
}

func activateBody(key, machine string) []byte {
	return mustJSON(map[string]string{
		"licence_key": key, "machine_id": machine, "label": "loadgen", "os": "linux", "app_version": "1.0.0",
	})
}
