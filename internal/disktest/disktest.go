// Package disktest holds what tests use to run the service on a full disk.
package disktest

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// Fill writes path until its disk has no room left.
func Fill(t testing.TB, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the disk: %v", err)
			}
			return
		}
	}
}
