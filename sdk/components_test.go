package sdk_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"testing"

	"github.com/licentia/licentia/sdk"
)

// TestHashComponent holds the hash to its documented form: SHA-256 of
// product id ":" name ":" value, in lower-case hex; another product gets
// another hash of the same value.
func TestHashComponent(t *testing.T) {
	sum := sha256.Sum256([]byte("desk-app:board:abc123"))
	if got, want := sdk.HashComponent("desk-app", "board", "abc123"), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("HashComponent() = %s, want %s", got, want)
	}
	if sdk.HashComponent("desk-app", "board", "abc123") == sdk.HashComponent("other-app", "board", "abc123") {
		t.Error("two products hash one value alike")
	}
}

// TestComponentsAreHashes: what Components collects on this machine is at
// most the four names, each a 64-hex hash the server accepts; never a raw
// identifier.
func TestComponentsAreHashes(t *testing.T) {
	hashRE := regexp.MustCompile(`^[0-9a-f]{64}$`)
	known := map[string]bool{sdk.ComponentBoard: true, sdk.ComponentDisk: true, sdk.ComponentOSInstall: true, sdk.ComponentNetwork: true}
	for name, h := range sdk.Components("desk-app") {
		if !known[name] || !hashRE.MatchString(h) {
			t.Errorf("component %s = %q, want a known name and a 64-hex hash", name, h)
		}
	}
}
