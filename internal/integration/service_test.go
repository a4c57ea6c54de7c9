package integration

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/licentia/licentia/internal/store/storetest"
)

const (
	// redisURLVar names the variable holding the URL of the Redis server
	// tests use.
	redisURLVar = "LICENTIA_TEST_REDIS_URL"
	// redisDB is the Redis database these tests count in. serve's key prefix
	// is fixed, so the tests keep to a database no other test uses and empty
	// it once per run, leaving no count of an earlier run behind.
	redisDB = 15
	// baseURL is every process's LICENTIA_BASE_URL.
	baseURL = "https://licentia.example.org"
	// scopes are the API key scopes the tests use.
	scopes = "organization:read,products:read,products:write,licences:read,licences:write,webhooks:read,webhooks:write"
	// startTimeout bounds a process's start, migrations included.
	startTimeout = 30 * time.Second
)

// client calls the processes. Its timeout is far above any answer's time, so
// it only ends a call to a process that hangs.
var client = &http.Client{Timeout: 15 * time.Second}

// service is one Licentia service: a PostgreSQL schema, a master key file
// and the configuration every process started on it shares.
type service struct {
	env map[string]string
}

// newService creates an empty schema (dropped when the test ends) and a
// master key, and returns the service's configuration. It skips the test,
// naming the variable, when PostgreSQL is not configured.
func newService(t *testing.T) *service {
	t.Helper()
	dbURL := storetest.PostgresURL(t)
	if binary == "" {
		t.Fatal("the licentia binary was not built")
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "master.key")
	key := make([]byte, 32) // a master key is 32 random bytes
	rand.Read(key)
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return &service{env: map[string]string{
		"LICENTIA_DATABASE_URL":    dbURL,
		"LICENTIA_DATA_DIR":        dir,
		"LICENTIA_MASTER_KEY_FILE": keyFile,
		"LICENTIA_BASE_URL":        baseURL,
	}}
}

var flushRedis sync.Once

// useRedis points the service at the tests' Redis database and returns a
// client of it. It skips the test when Redis is not configured.
func (s *service) useRedis(t *testing.T) *redis.Client {
	t.Helper()
	raw := os.Getenv(redisURLVar)
	if raw == "" {
		t.Skipf("%s is not set", redisURLVar)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		// The URL may hold a password: never print it.
		t.Fatalf("%s is not a redis:// URL", redisURLVar)
	}
	u.Path = fmt.Sprintf("/%d", redisDB)
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		t.Fatalf("%s: %v", redisURLVar, err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	flushRedis.Do(func() {
		if err := rdb.FlushDB(t.Context()).Err(); err != nil {
			t.Fatalf("flush Redis database %d: %v", redisDB, err)
		}
	})
	s.env["LICENTIA_REDIS_URL"] = u.String()
	return rdb
}

// environ is the environment of a command: this process's own without any
// LICENTIA_ variable, then the service's, then extra.
func (s *service) environ(extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LICENTIA_") {
			env = append(env, kv)
		}
	}
	for _, m := range []map[string]string{s.env, extra} {
		for k, v := range m {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// operator runs an operator command and decodes the one JSON object it
// prints.
func (s *service) operator(t *testing.T, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = s.environ(nil)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("licentia %s: %v, stderr %s", strings.Join(args, " "), err, stderr.String())
	}
	var obj map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &obj); err != nil {
		t.Fatalf("licentia %s: stdout %q: %v", strings.Join(args, " "), stdout.String(), err)
	}
	return obj
}

// newOrg creates an organization on the studio plan and an API key with
// scopes, through the operator commands, and returns the key.
func (s *service) newOrg(t *testing.T, slug string) string {
	t.Helper()
	s.operator(t, "org", "create", "--name", slug, "--slug", slug, "--plan", "studio", "--owner-email", "owner@"+slug+".example")
	k := s.operator(t, "apikey", "create", "--org", slug, "--name", "integration", "--scopes", scopes)
	key, _ := k["key"].(string)
	if key == "" {
		t.Fatalf("apikey create printed no key: %v", k)
	}
	return key
}

// process is one `licentia serve` of a service.
type process struct {
	name string
	addr string // host:port it listens on
	env  []string
	log  *logBuffer

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
}

// start starts a serve process on a free port, with extra settings on top
// of the service's. The process is killed when the test ends; its log is
// shown if the test failed, and a data race it reports fails the test.
func (s *service) start(t *testing.T, name string, extra map[string]string) *process {
	t.Helper()
	p := &process{name: name, addr: freeAddr(t), log: &logBuffer{}}
	p.env = s.environ(extra)
	p.env = append(p.env, "LICENTIA_LISTEN="+p.addr)
	p.launch(t)
	t.Cleanup(func() {
		p.kill()
		out := p.log.String()
		if i := strings.Index(out, "WARNING: DATA RACE"); i >= 0 {
			t.Errorf("serve %s reported a data race:\n%s", p.name, out[i:min(len(out), i+8000)])
		} else if t.Failed() {
			t.Logf("serve %s log (last lines):\n%s", p.name, lastLines(out, 40))
		}
	})
	return p
}

// freeAddr returns a loopback address with a port nothing listens on. A
// process's port must be known before it starts, so it cannot be :0.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func (p *process) launch(t *testing.T) {
	t.Helper()
	cmd := exec.Command(binary, "serve")
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start serve %s: %v", p.name, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited
}

// kill ends the process at once, as kill -9 does, and waits for it.
func (p *process) kill() {
	p.cmd.Process.Kill()
	<-p.exited
}

// restart starts the process again, on the same address with the same
// settings, after it was killed.
func (p *process) restart(t *testing.T) {
	t.Helper()
	fmt.Fprintf(p.log, "--- restarted ---\n")
	p.launch(t)
}

// url is the address of path on the process.
func (p *process) url(path string) string { return "http://" + p.addr + path }

// waitReady waits until each process's /readyz answers 200.
func waitReady(t *testing.T, ps ...*process) {
	t.Helper()
	for _, p := range ps {
		p.waitFor(t, "/readyz")
	}
}

// waitFor polls path until it answers 200, failing at once if the process
// exits.
func (p *process) waitFor(t *testing.T, path string) {
	t.Helper()
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-p.exited:
			if p.portTaken() {
				// Another program took the port between freeAddr and the
				// process's start: start again on another, which a process
				// restarted later keeps.
				p.addr = freeAddr(t)
				p.env = append(p.env, "LICENTIA_LISTEN="+p.addr)
				fmt.Fprintf(p.log, "--- port taken, moved to %s ---\n", p.addr)
				p.launch(t)
				continue
			}
			t.Fatalf("serve %s exited while starting:\n%s", p.name, lastLines(p.log.String(), 40))
		default:
		}
		resp, err := c.Get(p.url(path))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve %s: %s did not answer 200 within %v (last: %v)", p.name, path, startTimeout, describe(resp, err))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// portTaken reports whether the process's last start failed because its
// address was in use.
func (p *process) portTaken() bool {
	out := p.log.String()
	if i := strings.LastIndex(out, "--- "); i >= 0 {
		out = out[i:]
	}
	return strings.Contains(out, "address already in use")
}

func describe(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}

// answer is a process's answer to one call.
type answer struct {
	status int
	header http.Header
	body   map[string]any
}

// code is the error code of an error answer, or "".
func (a answer) code() string {
	e, _ := a.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// object returns the object named name in the answer.
func (a answer) object(name string) map[string]any {
	o, _ := a.body[name].(map[string]any)
	return o
}

// call sends a request to the process with key as bearer (none when empty)
// and body as JSON (none when nil); header holds extra name, value pairs.
func (p *process) call(t *testing.T, method, path, key string, body any, header ...string) answer {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, p.url(path), r)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s on %s: %v", method, path, p.name, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s on %s: read answer: %v", method, path, p.name, err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		t.Fatalf("%s %s on %s: answer %q is not a JSON object: %v", method, path, p.name, raw, err)
	}
	return a
}

// must is call for a request that must answer status.
func (p *process) must(t *testing.T, status int, method, path, key string, body any) answer {
	t.Helper()
	a := p.call(t, method, path, key, body)
	if a.status != status {
		t.Fatalf("%s %s on %s: status %d %v, want %d", method, path, p.name, a.status, a.body, status)
	}
	return a
}

// createProduct creates a product with the given id and key prefix.
func createProduct(t *testing.T, p *process, key, id, prefix string) map[string]any {
	t.Helper()
	a := p.must(t, http.StatusCreated, "POST", "/v1/admin/products", key, map[string]any{
		"id": id, "name": id, "key_prefix": prefix, "current_major": 1,
	})
	return a.object("product")
}

// issueLicence issues a licence for 100 machines and returns its id and key.
func issueLicence(t *testing.T, p *process, key, productID, email string) (id, licenceKey string) {
	t.Helper()
	a := p.must(t, http.StatusCreated, "POST", "/v1/admin/licences", key, map[string]any{
		"product_id": productID, "email": email, "limit_kind": "machines", "limit_count": 100,
	})
	id, _ = a.object("licence")["id"].(string)
	licenceKey, _ = a.body["licence_key"].(string)
	if id == "" || licenceKey == "" {
		t.Fatalf("issue licence on %s: answer %v lacks the id or the key", p.name, a.body)
	}
	return id, licenceKey
}

// eventually calls cond every interval until it reports true, and returns
// how long that took; it fails the test when timeout passes first.
func eventually(t *testing.T, what string, timeout, interval time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("%s: %v", what, t.Context().Err())
		case <-tick.C:
		}
	}
	return time.Since(start)
}

// freshWindow waits, when less than margin is left in the one-minute
// rate-limit window holding now, for the next window to start, so a series
// of counted requests falls in one window.
func freshWindow(t *testing.T, now time.Time, margin time.Duration) {
	t.Helper()
	left := time.Minute - time.Duration(now.UnixNano()%int64(time.Minute))
	if left >= margin {
		return
	}
	t.Logf("%v left in the rate-limit window; waiting for the next", left.Round(time.Millisecond))
	select {
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	case <-time.After(left + 250*time.Millisecond):
	}
}

// logBuffer collects a process's output; the exec package writes to it
// from its own goroutine.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// sortedKeys lists a map's keys in order, for messages.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
