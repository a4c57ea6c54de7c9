package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/build"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/logbatch"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/mcpserver"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/oauth"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/store"
)

// shutdownGrace is how long requests in flight may take to finish after
// SIGTERM.
const shutdownGrace = 30 * time.Second

// App is a running service: storage, operations and the HTTP server.
type App struct {
	cfg      config.Config
	log      *slog.Logger
	closeLog func() error // writes the log's waiting lines (logWriter)
	store    store.Store
	release  func() error // lets go of the database's lock file (holdDatabase)
	listener net.Listener
	http     *http.Server
	// debug and metrics are the profiler's and the metrics' servers, nil
	// when not configured.
	debug   *sideServer
	metrics *sideServer
	jobs    []job
	// mail sends the invitations of the admin service.
	mail mail.Sender
}

// NewApp wires the service from env and starts listening. When it fails,
// it closes what it had opened, newest first.
func NewApp(ctx context.Context, env Env) (_ *App, err error) {
	var closers []func() error
	defer func() {
		if err != nil {
			for _, c := range slices.Backward(closers) {
				c()
			}
		}
	}()
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return nil, err
	}
	logOut, closeLog := logWriter(env.Stderr)
	closers = append(closers, closeLog)
	log := slog.New(slog.NewJSONHandler(logOut, nil))
	plans, err := loadPlans(cfg)
	if err != nil {
		return nil, err
	}
	release, err := holdDatabase(cfg)
	if err != nil {
		return nil, err
	}
	closers = append(closers, release)
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	closers = append(closers, st.Close)
	master, err := loadMasterKey(ctx, cfg, st, log)
	if err != nil {
		return nil, err
	}
	ops, err := newOperations(ctx, cfg, log, st, plans, master)
	if err != nil {
		return nil, err
	}
	doors, err := newFrontDoors(cfg, ops)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	closers = append(closers, ln.Close)
	debug, metricsSrv, err := listenSide(cfg, ops.metrics, log, &closers)
	if err != nil {
		return nil, err
	}
	a := &App{cfg: cfg, log: log, closeLog: closeLog, store: st, release: release, listener: ln, debug: debug, metrics: metricsSrv, mail: ops.mail,
		jobs: jobs(st, ops.admin, ops.activation, ops.cat, ops.worker, ops.mailer, doors.console, doors.portal, doors.oauth, doors.api, ops.clock),
		http: newHTTPServer(doors.handler(), log)}
	log.Info("licentia listening", "addr", ln.Addr().String(), "build", build.Read(), "config", cfg.Redacted())
	// Warned once the service starts, so that a start refused for another
	// reason prints that reason alone.
	if w := cfg.BaseURLWarning(); w != "" {
		log.Warn(w, "base_url", cfg.BaseURL)
	}
	return a, nil
}

// newHTTPServer is the server of the service's address, with the API's
// timeouts.
func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       httpapi.ReadTimeout,
		WriteTimeout:      httpapi.WriteTimeout,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// mount serves the web console at /console/ (and / redirecting
// there), the customer portal at /portal/, the MCP server at /mcp, the authorization server's metadata and
// endpoints, with /oauth/authorize in the console, whose sessions it needs,
// and the API everywhere else.
func mount(api, console, customers, assistants, authz http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.Handle("/console/", console)
	mux.Handle("/portal/", customers)
	mux.Handle("GET /{$}", console)
	mux.Handle(mcpserver.Path, assistants)
	mux.Handle("/oauth/", authz)
	mux.Handle("/oauth/authorize", console)
	mux.Handle("/.well-known/oauth-authorization-server", authz)
	mux.Handle("/.well-known/oauth-protected-resource", authz)
	mux.Handle("/.well-known/oauth-protected-resource"+oauth.ResourcePath, authz)
	return mux
}

// Addr is the address the service listens on.
func (a *App) Addr() string { return a.listener.Addr().String() }

// DebugAddr is the profiler's address, or "" without LICENTIA_DEBUG_LISTEN.
func (a *App) DebugAddr() string { return sideAddr(a.debug) }

// MetricsAddr is the metrics' address, or "" without
// LICENTIA_METRICS_LISTEN.
func (a *App) MetricsAddr() string { return sideAddr(a.metrics) }

func sideAddr(d *sideServer) string {
	if d == nil {
		return ""
	}
	return d.listener.Addr().String()
}

// Run serves until ctx is done, then stops taking connections and lets the
// requests in flight finish.
func (a *App) Run(ctx context.Context) error {
	// The jobs stop before Run returns, so that Close never closes the
	// storage under a step in progress.
	jobCtx, stopJobs := context.WithCancel(ctx)
	waitJobs := runJobs(jobCtx, a.log, a.jobs)
	defer func() {
		stopJobs()
		waitJobs()
	}()
	errc := make(chan error, 1)
	go func() { errc <- a.http.Serve(a.listener) }()
	for _, d := range []*sideServer{a.debug, a.metrics} {
		if d == nil {
			continue
		}
		stop, done := make(chan struct{}), make(chan error, 1)
		go func() { done <- d.serve(stop) }()
		defer func() {
			close(stop)
			if err := <-done; err != nil {
				a.log.Warn(d.name+" stopped", "err", err)
			}
		}()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := a.http.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// Close releases the listener, when Run has not, the storage and its lock
// file.
func (a *App) Close() error {
	err := a.listener.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	for _, d := range []*sideServer{a.debug, a.metrics} {
		if d != nil {
			err = errors.Join(err, d.close())
		}
	}
	// The log last, so that the lines of the steps before it are written.
	return errors.Join(err, a.store.Close(), a.release(), a.closeLog())
}

// logWriter is where serve writes its log, and how to close it: lines to
// a file or a pipe (the process's stderr) go out in batches (see
// logbatch), lines to anything else, a test's buffer, as written.
func logWriter(out io.Writer) (io.Writer, func() error) {
	if _, ok := out.(*os.File); !ok {
		return out, func() error { return nil }
	}
	w := logbatch.New(out)
	return w, w.Close
}

// serveGCPercent is the garbage collector's target when GOGC is unset.
// Go's default, 100, collects every time the heap doubles; at thousands of
// status checks a second the small live heap doubled several times a
// second, and collections held the p99. At 200 they come half as often, for
// a heap of up to three times the live data instead of two.
const serveGCPercent = 200

// gcPercent is the target serve sets, or -1 to keep the one GOGC set.
func gcPercent(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		return -1
	}
	return serveGCPercent
}

func serveCommand(ctx context.Context, args []string, env Env) error {
	if _, err := parseFlags(newFlags("serve"), args); err != nil {
		return err
	}
	if p := gcPercent(env.Getenv); p >= 0 {
		debug.SetGCPercent(p)
	}
	app, err := NewApp(ctx, env)
	if err != nil {
		return err
	}
	defer app.Close()
	return app.Run(ctx)
}

// outboxDir is where mail is written without LICENTIA_SMTP_URL.
func outboxDir(cfg config.Config) string { return filepath.Join(cfg.DataDir, "outbox") }

// newSender returns the SMTP sender of LICENTIA_SMTP_URL, or the outbox in
// the data directory, and says at start which one mail goes to.
func newSender(cfg config.Config, log *slog.Logger) (mail.Sender, error) {
	if cfg.SMTPURL == "" {
		dir := outboxDir(cfg)
		log.Info("mail goes to the outbox "+dir+"; set LICENTIA_SMTP_URL to send it", "outbox", dir)
		return mail.NewOutbox(dir, cfg.MailFrom), nil
	}
	s, err := mail.NewSMTP(mail.SMTPOptions{URL: cfg.SMTPURL, From: cfg.MailFrom})
	if err != nil {
		return nil, fmt.Errorf("LICENTIA_SMTP_URL: %w", err)
	}
	log.Info("mail goes to the SMTP server", "smtp", cfg.Redacted()["smtp"])
	return s, nil
}

// newLimiter returns the in-memory limiter, or with LICENTIA_REDIS_URL the
// Redis limiter shared by every process, falling back to counting in memory
// while Redis is unreachable, which m and the log show; ready then reports
// whether Redis answers.
func newLimiter(cfg config.Config, clk clock.Clock, log *slog.Logger, m *metrics.Metrics) (ratelimit.Limiter, func() error, error) {
	local := ratelimit.NewMemory(clk)
	if cfg.RedisURL == "" {
		return local, nil, nil
	}
	r, err := ratelimit.NewRedis(ratelimit.RedisOptions{URL: cfg.RedisURL, Logger: log})
	if err != nil {
		return nil, nil, fmt.Errorf("LICENTIA_REDIS_URL: %w", err)
	}
	ready := func() error {
		if err := r.Ping(context.Background()); err != nil {
			return errors.New("the shared rate limiter (Redis) does not answer; limits are counted per process")
		}
		return nil
	}
	return ratelimit.NewFallback(r, local, clk, log, m), ready, nil
}
