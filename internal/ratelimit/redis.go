package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// countScript counts one request in the fixed window holding the Redis
// server's own time, so every process counts in the same windows whatever
// their clocks say. It returns the count, the time left in the window and
// the window's start, in microseconds (a double holds them exactly for
// centuries). INCR and PEXPIRE run atomically in the script.
var countScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local size = tonumber(ARGV[1])
local start = now - (now % size)
local key = KEYS[1] .. ':' .. string.format('%d', start)
local n = redis.call('INCR', key)
if n == 1 then
  redis.call('PEXPIRE', key, math.floor(size / 1000) + 1000)
end
return {n, start + size - now, start}
`)

// releaseScript takes one from the count of one window's key, never below
// zero. A key gone with its window is left gone: DECR would make it anew,
// without an expiry.
var releaseScript = redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then
  redis.call('DECR', KEYS[1])
end
return n
`)

// DefaultRedisTimeout bounds each call to Redis unless RedisOptions says
// otherwise. A call that passes it is taken for an unreachable Redis, and
// the process counts on its own (see Fallback), so it must stay above what
// a busy process waits for Redis that is up: a call's p99 measured 0.13 to
// 0.22 s with the CPUs busy and up to 1.05 s with them overloaded, the
// slowest call 1.17 s (BENCHMARKS.md, "Shared rate limiter under load"),
// and the former 200 ms fell back under such load. About twice the worst
// p99 keeps the fallback for outages, where the wait costs little: a
// failed Redis is tried again once a second, and a refused connection
// fails at once.
const DefaultRedisTimeout = 2 * time.Second

// Redis is a Limiter shared by every process using one Redis server.
type Redis struct {
	client  *redis.Client
	prefix  string
	timeout time.Duration
}

// RedisOptions configure a Redis limiter.
type RedisOptions struct {
	URL string // redis://...
	// Prefix starts every key; by default "licentia:rl:".
	Prefix string
	// Timeout bounds each call; DefaultRedisTimeout unless set.
	Timeout time.Duration
	// Logger, when set, receives what the Redis client logs.
	Logger *slog.Logger
}

var _ Limiter = (*Redis)(nil)

// NewRedis returns a Redis limiter. It does not connect until used.
func NewRedis(o RedisOptions) (*Redis, error) {
	opts, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	if o.Prefix == "" {
		o.Prefix = "licentia:rl:"
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultRedisTimeout
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = o.Timeout, o.Timeout, o.Timeout
	opts.MaxRetries = 0
	if o.Logger != nil {
		// go-redis has one logger for the whole process; serve makes one
		// limiter, so it is this one's.
		redis.SetLogger(redisLogger{log: o.Logger, password: opts.Password})
	}
	return &Redis{client: redis.NewClient(opts), prefix: o.Prefix, timeout: o.Timeout}, nil
}

// Allow counts one request in Redis.
func (r *Redis) Allow(ctx context.Context, rule Rule, key string) (Result, error) {
	n, start, left, err := r.run(ctx, countScript, rule, key)
	if err != nil {
		return Result{}, err
	}
	return result(rule, n, start, left), nil
}

// Release takes one from the count of counted's window.
func (r *Redis) Release(ctx context.Context, rule Rule, key string, counted Result) error {
	if counted.Start.IsZero() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	k := fmt.Sprintf("%s:%d", r.key(rule, key), counted.Start.UnixMicro())
	if err := releaseScript.Run(ctx, r.client, []string{k}).Err(); err != nil {
		return fmt.Errorf("redis rate limit: %w", err)
	}
	return nil
}

// key is the Redis key of rule and key, less the window. The rule's name
// goes in with its length, so no name and key pair can spell another's.
func (r *Redis) key(rule Rule, key string) string {
	return fmt.Sprintf("%s%d:%s:%s", r.prefix, len(rule.Name), rule.Name, key)
}

// run runs a script on the key of rule and key, which answers a count, the
// microseconds left in the window and the window's start.
func (r *Redis) run(ctx context.Context, script *redis.Script, rule Rule, key string) (int64, time.Time, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	v, err := script.Run(ctx, r.client, []string{r.key(rule, key)}, rule.Window.Microseconds()).Int64Slice()
	if err != nil {
		return 0, time.Time{}, 0, fmt.Errorf("redis rate limit: %w", err)
	}
	if len(v) != 3 {
		return 0, time.Time{}, 0, fmt.Errorf("redis rate limit: unexpected answer %v", v)
	}
	return v[0], time.UnixMicro(v[2]).UTC(), time.Duration(v[1]) * time.Microsecond, nil
}

// Now reads the Redis server's clock, the one its windows are counted in.
func (r *Redis) Now(ctx context.Context) (time.Time, error) {
	return r.client.Time(ctx).Result()
}

// Ping reports whether Redis answers.
func (r *Redis) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	return r.client.Ping(ctx).Err()
}

// Close closes the connections.
func (r *Redis) Close() error { return r.client.Close() }
