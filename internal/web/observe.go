package web

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/metrics"
)

// Observed is how a server's requests are watched: one access-log line
// each, naming the route pattern (never the path, which may hold a token),
// the request counted in the metrics by the same pattern, and panic
// recovery that still answers. Every server of the service shares it.
type Observed struct {
	Log   *slog.Logger
	Clock clock.Clock
	// Metrics counts requests and their latency; nil counts nothing.
	Metrics *metrics.Metrics
	// Server names the server in the metrics: "api", "console", "oauth"
	// or "mcp".
	Server string
	// Message starts each access-log line.
	Message string
	// Pattern names the route a request matched, "" for none.
	Pattern func(*http.Request) string
	// Fail answers a request whose handler panicked before answering.
	Fail func(w http.ResponseWriter, r *http.Request, panicValue any)
}

// Serve runs next for the request with id, recovering a panic and logging
// the outcome.
func (o Observed) Serve(w http.ResponseWriter, r *http.Request, id string, next http.Handler) {
	start := o.Clock.Now()
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			o.Log.LogAttrs(r.Context(), slog.LevelError, "panic", slog.String("request_id", id), slog.Any("panic", p))
			if sw.status == 0 {
				o.Fail(sw, r, p)
			}
		}
		end, pattern := o.Clock.Now(), sw.pattern
		took := end.Sub(start)
		if !sw.matched {
			pattern = o.Pattern(r)
		}
		o.access(r, end, pattern, sw.status, took, id)
		o.Metrics.Request(o.Server, pattern, r.Method, sw.status, took)
	}()
	next.ServeHTTP(sw, r)
}

// access writes a request's access-log line, timed at the request's end.
// It hands the record to the handler as Logger.LogAttrs would, less the
// call site, which Logger finds by walking the stack on every line and no
// handler of the service writes.
func (o Observed) access(r *http.Request, end time.Time, pattern string, status int, took time.Duration, id string) {
	ctx, h := r.Context(), o.Log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	// In the machine's zone, as slog times every other line.
	rec := slog.NewRecord(end.Local(), slog.LevelInfo, o.Message, 0)
	rec.AddAttrs(slog.String("method", r.Method), slog.String("pattern", pattern), slog.Int("status", status),
		slog.Float64("duration_ms", float64(took/time.Microsecond)/1000),
		slog.String("request_id", id))
	// Logger drops a handler's error too: a log has nowhere to report
	// that it cannot be written.
	_ = h.Handle(ctx, rec)
}

// statusWriter remembers the status for the access log, and the route
// pattern when the handler told it (Matched).
type statusWriter struct {
	http.ResponseWriter
	status  int
	pattern string
	matched bool
}

// Matched records the route pattern a handler found for its request (""
// for none), so that the access log and the metrics take it instead of
// routing the request again. w is the writer Observed.Serve handed down;
// any other writer is left alone.
func Matched(w http.ResponseWriter, pattern string) {
	if sw, ok := w.(*statusWriter); ok {
		sw.pattern, sw.matched = pattern, true
	}
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends what is buffered, for answers streamed as they are made.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
