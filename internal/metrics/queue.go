package metrics

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
)

// queueDepth is the number of webhook deliveries waiting to be sent, read
// from the database on each scrape rather than kept in memory: the queue is
// shared by every process, and only the database knows it whole.
type queueDepth struct {
	desc *prometheus.Desc
	read func(context.Context) (int64, error)
	log  *slog.Logger
}

func newQueueDepth(read func(context.Context) (int64, error), log *slog.Logger) *queueDepth {
	return &queueDepth{
		desc: prometheus.NewDesc("licentia_webhook_queue_depth",
			"Webhook deliveries pending: waiting for their first attempt or for a retry. Read from the database on each scrape.",
			nil, nil),
		read: read,
		log:  log,
	}
}

func (q *queueDepth) Describe(ch chan<- *prometheus.Desc) { ch <- q.desc }

// Collect reads the depth within QueueReadTimeout. When the read fails the
// series is left out of the scrape, so the rest still arrives and the gap
// shows (absent() in an alert), rather than failing the whole scrape.
func (q *queueDepth) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), QueueReadTimeout)
	defer cancel()
	n, err := q.read(ctx)
	if err != nil {
		q.log.Warn("webhook queue depth not read", "error", err.Error())
		return
	}
	ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(n))
}
