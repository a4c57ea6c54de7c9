package main

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// keyRing hands out administration API keys in turn. The administration
// routes allow 300 requests a minute per key and route, so spreading the
// requests over n keys raises the rate a run can drive to n times that.
type keyRing struct {
	keys []string
	n    atomic.Uint64
}

func newKeyRing(keys []string) *keyRing { return &keyRing{keys: keys} }

// next returns the next key, going round the ring.
func (k *keyRing) next() string {
	i := k.n.Add(1) - 1
	return k.keys[i%uint64(len(k.keys))]
}

// size is the number of keys.
func (k *keyRing) size() int { return len(k.keys) }

// parseKeys gathers the keys of -key, a comma-separated list, and of
// -keys-file, one key a line (blank lines and lines starting with # are
// skipped), dropping repeats: a repeated key shares its limit, so it
// would not add to the budget.
func parseKeys(list, file string) ([]string, error) {
	var keys []string
	for k := range strings.SplitSeq(list, ",") {
		keys = append(keys, strings.TrimSpace(k))
	}
	if file != "" {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read keys: %w", err)
		}
		for line := range strings.Lines(string(raw)) {
			keys = append(keys, strings.TrimSpace(line))
		}
	}
	seen := make(map[string]bool)
	out := keys[:0]
	for _, k := range keys {
		if k == "" || strings.HasPrefix(k, "#") || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("give at least one API key with -key or -keys-file")
	}
	return out, nil
}
