package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestKeyRing(t *testing.T) {
	k := newKeyRing([]string{"a", "b", "c"})
	var got []string
	for range 7 {
		got = append(got, k.next())
	}
	if want := []string{"a", "b", "c", "a", "b", "c", "a"}; !slices.Equal(got, want) {
		t.Errorf("next() x7 = %v, want %v", got, want)
	}
}

func TestParseKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte("# bench keys\nlic_c\n\n  lic_b  \nlic_d"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, list, file string
		want             []string
	}{
		{"list", "lic_a, lic_b,,lic_a", "", []string{"lic_a", "lic_b"}},
		{"file", "", file, []string{"lic_c", "lic_b", "lic_d"}},
		{"both", "lic_a,lic_b", file, []string{"lic_a", "lic_b", "lic_c", "lic_d"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseKeys(tt.list, tt.file)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("parseKeys(%q, %q) = %v, %v; want %v", tt.list, tt.file, got, err, tt.want)
			}
		})
	}
	if _, err := parseKeys(" , ", ""); err == nil {
		t.Error("parseKeys(no keys) error = nil")
	}
	if _, err := parseKeys("", filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("parseKeys(missing file) error = nil")
	}
}
