package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
)

// The data loader fills one organization with licences named by number:
// licence n, for n in [0, N), has the email datasetEmail(n) and the
// external reference datasetRef(n), all in one product.

func datasetEmail(n int) string { return fmt.Sprintf("load-%07d@dataset.example", n) }

func datasetRef(n int) string { return fmt.Sprintf("load-%07d", n) }

// datasetPrefix is a search prefix matching the 100 licences numbered
// from 100*k: "load-00123" matches load-0012300 to load-0012399.
func datasetPrefix(k int) string { return fmt.Sprintf("load-%05d", k) }

// usesDataset reports whether scenario works on the loaded licences when
// there are some; status and activate always issue their own, since they
// need licence keys.
func usesDataset(scenario string) bool {
	switch scenario {
	case "find", "find-q", "find-ref", "read", "revoke", "counts", "counts-product", "issue":
		return true
	}
	return false
}

// sampleIDs learns the ids of n distinct random loaded licences by finding
// them by email, spread over the keys; a 429 waits for the window to reset.
func sampleIDs(ctx context.Context, c *client, keys *keyRing, dataset, n int) ([]string, error) {
	n = min(n, dataset)
	nums := rand.Perm(dataset)[:n]
	var mu sync.Mutex
	var ids []string
	err := parallel(n, func(i int) error {
		var out struct {
			Licences []struct {
				ID string `json:"id"`
			} `json:"licences"`
		}
		path := "/v1/admin/licences?email=" + url.QueryEscape(datasetEmail(nums[i]))
		if err := c.call(ctx, request{method: http.MethodGet, path: path, key: keys.next()}, false, &out); err != nil {
			return fmt.Errorf("sample licence ids: %w", err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, l := range out.Licences {
			ids = append(ids, l.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("sample licence ids: none of %d emails found; is the data set loaded in this organization?", n)
	}
	return ids, nil
}
