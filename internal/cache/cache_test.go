package cache_test

import (
	"sync"
	"testing"

	"github.com/licentia/licentia/internal/cache"
)

func TestGetPut(t *testing.T) {
	c := cache.New[string, int](4)
	if _, ok := c.Get("a"); ok {
		t.Fatal("empty map found a")
	}
	c.Put("a", 1)
	c.Put("a", 2)
	if v, ok := c.Get("a"); !ok || v != 2 {
		t.Fatalf("Get(a) = %d, %v; want 2, true", v, ok)
	}
	c.Delete("a")
	if _, ok := c.Get("a"); ok {
		t.Fatal("deleted a still found")
	}
}

func TestBounded(t *testing.T) {
	c := cache.New[int, int](100)
	for i := range 1000 {
		c.Put(i, i)
		if c.Len() > 100 {
			t.Fatalf("after %d puts Len = %d, want at most 100", i+1, c.Len())
		}
	}
	if v, ok := c.Get(999); !ok || v != 999 {
		t.Fatalf("the newest entry is gone: %d, %v", v, ok)
	}
	// Replacing a present key evicts nothing.
	c.Put(999, 0)
	if c.Len() != 100 {
		t.Fatalf("Len = %d after replacing a present key, want 100", c.Len())
	}
}

func TestConcurrent(t *testing.T) {
	c := cache.New[int, int](64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				c.Put(g*10000+i, i)
				if v, ok := c.Get(g*10000 + i); ok && v != i {
					t.Errorf("Get = %d, want %d", v, i)
				}
			}
		})
	}
	wg.Wait()
	if c.Len() > 64 {
		t.Fatalf("Len = %d, want at most 64", c.Len())
	}
}
