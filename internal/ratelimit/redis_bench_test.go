package ratelimit_test

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/ratelimit"
)

// BenchmarkRedisAllowLoaded measures how long one count in Redis takes, as
// a request waits for it, while the process's CPUs are all busy: callers
// counting at once (a burst of requests) beside goroutines that only burn
// CPU (password hashing, TLS, rendering). The Redis limiter's default
// deadline is chosen from its p99, with a margin; see BENCHMARKS.md.
//
// busy is the number of CPU-burning goroutines per CPU, callers the
// number of callers per CPU. The limiter's own deadline is lifted, so the
// figures are the calls' whole times, not cut at the deadline.
func BenchmarkRedisAllowLoaded(b *testing.B) {
	for _, load := range []struct{ busy, callers int }{{0, 8}, {2, 8}, {4, 32}} {
		b.Run(fmt.Sprintf("busy=%dxCPU/callers=%dxCPU", load.busy, load.callers), func(b *testing.B) {
			benchmarkAllowLoaded(b, load.busy, load.callers)
		})
	}
}

func benchmarkAllowLoaded(b *testing.B, busy, callers int) {
	url := redisURL(b)
	r, err := ratelimit.NewRedis(ratelimit.RedisOptions{URL: url, Prefix: "licentia-bench:" + licentia.NewID() + ":", Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	rule := ratelimit.Rule{Name: "bench", Limit: 1 << 40, Window: time.Hour}

	var stop atomic.Bool
	var burners sync.WaitGroup
	for range busy * runtime.GOMAXPROCS(0) {
		burners.Go(func() {
			sum := sha256.Sum256(nil)
			for !stop.Load() {
				sum = sha256.Sum256(sum[:])
			}
		})
	}
	defer burners.Wait()
	defer stop.Store(true)

	var mu sync.Mutex
	var took []time.Duration
	var n atomic.Int64
	b.SetParallelism(callers)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			key := fmt.Sprintf("subject-%d", n.Add(1)%1000)
			t0 := time.Now()
			if _, err := r.Allow(b.Context(), rule, key); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		took = append(took, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	at := func(q float64) float64 {
		return float64(took[min(int(q*float64(len(took))), len(took)-1)]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(at(0.999), "p99.9-ms")
	b.ReportMetric(at(1), "max-ms")
}
