package metrics

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
)

// dbGauge is a count read from the database on each scrape rather than
// kept in memory (the webhook queue's depth, the leases in use): what it
// counts is shared by every process, and only the database knows it whole.
type dbGauge struct {
	desc *prometheus.Desc
	what string
	read func(context.Context) (int64, error)
	log  *slog.Logger
}

func newQueueDepth(read func(context.Context) (int64, error), log *slog.Logger) *dbGauge {
	return &dbGauge{
		desc: prometheus.NewDesc("licentia_webhook_queue_depth",
			"Webhook deliveries pending: waiting for their first attempt or for a retry. Read from the database on each scrape.",
			nil, nil),
		what: "webhook queue depth",
		read: read,
		log:  log,
	}
}

func newLeasesInUse(read func(context.Context) (int64, error), log *slog.Logger) *dbGauge {
	return &dbGauge{
		desc: prometheus.NewDesc("licentia_leases_in_use",
			"Leases of floating use in use (unexpired, of live activations), of every licence. Read from the database on each scrape.",
			nil, nil),
		what: "leases in use",
		read: read,
		log:  log,
	}
}

func (q *dbGauge) Describe(ch chan<- *prometheus.Desc) { ch <- q.desc }

// Collect reads the count within QueueReadTimeout. When the read fails the
// series is left out of the scrape, so the rest still arrives and the gap
// shows (absent() in an alert), rather than failing the whole scrape.
func (q *dbGauge) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), QueueReadTimeout)
	defer cancel()
	n, err := q.read(ctx)
	if err != nil {
		q.log.Warn(q.what+" not read", "error", err.Error())
		return
	}
	ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(n))
}
