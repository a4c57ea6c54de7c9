package postgres_test

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/store/postgres"
)

// TestOpenSilentServer: a server that accepts connections and never answers
// (a network partition) makes Open fail once the default connect timeout
// passes, where pgx alone would wait for as long as the silence lasts.
func TestOpenSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	done := make(chan error, 1)
	go func() {
		db, err := postgres.Open(t.Context(), "postgres://licentia@"+ln.Addr().String()+"/licentia?sslmode=disable")
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	// The guard is far above the connect timeout: it only ends a test that
	// would otherwise hang.
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Open() on a silent server succeeded, want an error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Open() on a silent server did not return")
	}
}
