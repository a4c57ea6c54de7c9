package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// fixture is what setup created for a scenario.
type fixture struct {
	runID     string
	productID string
	keys      []string // licence keys
	ids       []string // licence ids
	emails    []string
	machines  []string // status: one activated machine per worker
}

// call sends one setup request and decodes a 2xx answer into out,
// waiting and retrying while the server answers 429.
func (c *client) call(ctx context.Context, req request, forwarded bool, out any) error {
	for {
		status, code, raw, err := c.do(ctx, req, forwarded)
		if err != nil {
			return fmt.Errorf("%s %s: %w", req.method, req.path, err)
		}
		if status == http.StatusTooManyRequests {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(2 * time.Second):
			}
			continue
		}
		if status < 200 || status >= 300 {
			return fmt.Errorf("%s %s: %d %s: %s", req.method, req.path, status, code, strings.TrimSpace(string(raw)))
		}
		if out == nil {
			return nil
		}
		return json.Unmarshal(raw, out)
	}
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

// setup creates a product and the licences scenario needs through the
// administration API.
func setup(ctx context.Context, c *client, key, scenario string, workers, licences int, forwarded bool) (*fixture, error) {
	f := &fixture{runID: randomID(8)}
	f.productID = "loadgen-" + f.runID
	prefix := "L" + strings.ToUpper(randomID(5))
	err := c.call(ctx, request{method: http.MethodPost, path: "/v1/admin/products", key: key, body: mustJSON(map[string]any{
		"id": f.productID, "name": "Loadgen " + f.runID, "key_prefix": prefix, "current_major": 1,
	})}, false, nil)
	if err != nil {
		return nil, fmt.Errorf("create product: %w", err)
	}
	n := 0
	switch scenario {
	case "status", "activate":
		n = 1
	case "find", "read":
		n = licences
	}
	if err := f.issue(ctx, c, key, n); err != nil {
		return nil, err
	}
	if scenario == "status" {
		f.machines = make([]string, workers)
		for w := range workers {
			f.machines[w] = fmt.Sprintf("lg-%s-w%d", f.runID, w)
			err := c.call(ctx, request{method: http.MethodPost, path: "/v1/activations", body: activateBody(f.keys[0], f.machines[w])}, true, nil)
			if err != nil {
				return nil, fmt.Errorf("activate machine %d: %w", w, err)
			}
		}
	}
	return f, nil
}

// issue issues n machines licences of the highest limit, eight at a time.
func (f *fixture) issue(ctx context.Context, c *client, key string, n int) error {
	f.keys, f.ids, f.emails = make([]string, n), make([]string, n), make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			email := fmt.Sprintf("lg-%d@%s.example", i, f.runID)
			var out struct {
				Licence struct {
					ID string `json:"id"`
				} `json:"licence"`
				LicenceKey string `json:"licence_key"`
			}
			err := c.call(ctx, request{method: http.MethodPost, path: "/v1/admin/licences", key: key, body: mustJSON(map[string]any{
				"product_id": f.productID, "email": email, "limit_kind": "machines", "limit_count": int64(4294967295),
			})}, false, &out)
			if err != nil {
				errs <- fmt.Errorf("issue licence %d: %w", i, err)
				return
			}
			f.keys[i], f.ids[i], f.emails[i] = out.LicenceKey, out.Licence.ID, email
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func activateBody(key, machine string) []byte {
	return mustJSON(map[string]string{
		"licence_key": key, "machine_id": machine, "label": "loadgen", "os": "linux", "app_version": "1.0.0",
	})
}

// scenarioOf returns the requests scenario makes on f.
func scenarioOf(name string, f *fixture, key string) (scenarioFunc, error) {
	switch name {
	case "status":
		bodies := make([][]byte, len(f.machines))
		for w, m := range f.machines {
			bodies[w] = mustJSON(map[string]string{"licence_key": f.keys[0], "machine_id": m})
		}
		return func(w int, _ uint64) request {
			return request{method: http.MethodPost, path: "/v1/activations/status", body: bodies[w%len(bodies)]}
		}, nil
	case "activate":
		return func(_ int, seq uint64) request {
			return request{method: http.MethodPost, path: "/v1/activations", body: activateBody(f.keys[0], fmt.Sprintf("lg-%s-%d", f.runID, seq))}
		}, nil
	case "find":
		return func(_ int, seq uint64) request {
			return request{method: http.MethodGet, path: "/v1/admin/licences?email=" + url.QueryEscape(f.emails[seq%uint64(len(f.emails))]), key: key}
		}, nil
	case "read":
		return func(_ int, seq uint64) request {
			return request{method: http.MethodGet, path: "/v1/admin/licences/" + url.PathEscape(f.ids[seq%uint64(len(f.ids))]), key: key}
		}, nil
	case "issue":
		return func(_ int, seq uint64) request {
			return request{method: http.MethodPost, path: "/v1/admin/licences", key: key, body: mustJSON(map[string]any{
				"product_id": f.productID, "email": fmt.Sprintf("lg-issue-%d@%s.example", seq, f.runID),
			})}
		}, nil
	}
	return nil, fmt.Errorf("unknown scenario %q: want status, activate, find, read or issue", name)
}
