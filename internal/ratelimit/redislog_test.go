package ratelimit_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/ratelimit"
)

// syncBuffer is a log destination safe for go-redis's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRedisLogsAsJSON: with Redis unreachable, what the Redis client logs
// arrives in the service's logger as JSON lines, never as go-redis's plain
// text, and without the URL's password.
func TestRedisLogsAsJSON(t *testing.T) {
	const password = "s3cret-redis-pw"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	logs := &syncBuffer{}
	r, err := ratelimit.NewRedis(ratelimit.RedisOptions{
		URL:    "redis://:" + password + "@" + addr + "/0",
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Allow(t.Context(), ratelimit.Admin, "key:k"); err == nil {
		t.Fatal("Allow() with Redis unreachable: no error")
	}
	// The client gives up dialling in the background, after its retries,
	// and logs then.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), addr) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	out := logs.String()
	if out == "" {
		t.Fatal("nothing the Redis client logged reached the logger")
	}
	if strings.Contains(out, password) {
		t.Errorf("log shows the Redis password:\n%s", out)
	}
	// go-redis has one logger for the process, so clients of other tests
	// running meanwhile may log here too: every line must be ours in
	// shape, and one must be about this client.
	named := false
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec struct {
			Level, Msg, Error string
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("log line %q is not JSON: %v", line, err)
			continue
		}
		if rec.Msg != "redis client" || rec.Level != "WARN" {
			t.Errorf("log line %q: want a WARN \"redis client\" line", line)
		}
		named = named || strings.Contains(rec.Error, addr)
	}
	if !named {
		t.Errorf("no log line names %s:\n%s", addr, out)
	}
}
