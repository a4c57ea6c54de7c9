package metrics_test

import (
	"testing"
	"time"

	"github.com/licentia/licentia/internal/metrics"
)

// BenchmarkRecordStatusCheck measures what one status check adds with
// metrics on: its request counted by server, pattern, method and status,
// its latency observed, and its activation result counted.
func BenchmarkRecordStatusCheck(b *testing.B) {
	m := metrics.New(metrics.Options{})
	b.ReportAllocs()
	for b.Loop() {
		m.Request("api", "POST /v1/activations/status", "POST", 200, 40*time.Microsecond)
		m.Activation(metrics.RouteStatus, metrics.ResultOK)
	}
}

// BenchmarkRecordStatusCheckParallel is BenchmarkRecordStatusCheck from
// every core at once, as a loaded server records: the series are shared.
func BenchmarkRecordStatusCheckParallel(b *testing.B) {
	m := metrics.New(metrics.Options{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Request("api", "POST /v1/activations/status", "POST", 200, 40*time.Microsecond)
			m.Activation(metrics.RouteStatus, metrics.ResultOK)
		}
	})
}
