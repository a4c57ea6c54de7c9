package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/console"
	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/mcpserver"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/oauth"
	"github.com/licentia/licentia/internal/portal"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/webhooks"
)

// openStore opens the configured engine and applies pending migrations.
// A SQLite database whose files other users could reach is warned about.
// PostgreSQL reports transactions it runs again to log.
func openStore(ctx context.Context, cfg config.Config, log *slog.Logger) (store.Store, error) {
	if path, ok := strings.CutPrefix(cfg.DatabaseURL, "sqlite:"); ok {
		files, err := sqlite.Protect(path)
		if err != nil {
			return nil, err
		}
		for _, name := range files.Tightened {
			log.Warn("database file was open to other users; it is now readable by its owner only", "path", name)
		}
		for _, name := range files.Unsafe {
			log.Warn("other users can change the database's directory, or read a database file whose mode could not be changed; give it to the service's user only", "path", name)
		}
		return sqlite.Open(ctx, path)
	}
	if strings.HasPrefix(cfg.DatabaseURL, "postgres://") || strings.HasPrefix(cfg.DatabaseURL, "postgresql://") {
		db, err := postgres.Open(ctx, cfg.DatabaseURL)
		if err != nil {
			return nil, err
		}
		db.SetLogger(log)
		return db, nil
	}
	return nil, fmt.Errorf("open store: unsupported database URL")
}

// warnLogger is the log of the operator commands: warnings and errors only,
// on w.
func warnLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// loadPlans returns the default plans or those of LICENTIA_PLANS_FILE.
func loadPlans(cfg config.Config) (licentia.Plans, error) {
	if cfg.PlansFile == "" {
		return licentia.DefaultPlans(), nil
	}
	f, err := os.Open(cfg.PlansFile)
	if err != nil {
		return nil, namedFileError("", "LICENTIA_PLANS_FILE", cfg.PlansFile, err)
	}
	defer f.Close()
	return licentia.ReadPlans(f)
}

// operator is what the operator commands need.
type operator struct {
	store store.Store
	admin *admin.Service
	// baseURLDefaulted is set when LICENTIA_BASE_URL is unset, so that the
	// addresses printed are the listen address's.
	baseURLDefaulted bool
}

func openOperator(ctx context.Context, env Env) (*operator, error) {
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return nil, err
	}
	plans, err := loadPlans(cfg)
	if err != nil {
		return nil, err
	}
	log := warnLogger(env.Stderr)
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	return &operator{store: st, admin: admin.New(admin.Options{Store: st, Clock: clock.System{}, Plans: plans, Keys: signing.NewKeyring(nil),
		PublicURL: cfg.PublicURL(), Logger: log})}, nil
}

// openSealingOperator is openOperator with the master key, the base URL
// and the payment providers' adapters, for the commands that seal
// credentials. The key is found as serve finds it, so the first command
// may generate it.
func openSealingOperator(ctx context.Context, env Env) (*operator, error) {
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return nil, err
	}
	plans, err := loadPlans(cfg)
	if err != nil {
		return nil, err
	}
	log := warnLogger(env.Stderr)
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	master, err := loadMasterKey(ctx, cfg, st, log)
	if err != nil {
		st.Close()
		return nil, err
	}
	svc := admin.New(admin.Options{Store: st, Clock: clock.System{}, Plans: plans, Keys: signing.NewKeyringFile(master, masterKeyPath(cfg)),
		BaseURL: cfg.BaseURL, PublicURL: cfg.PublicURL(), Providers: newProviders(cfg), Logger: log})
	return &operator{store: st, admin: svc, baseURLDefaulted: cfg.BaseURLDefaulted}, nil
}

func (o *operator) Close() error { return o.store.Close() }

// operations are the services the front doors and the jobs call, and what
// they share.
type operations struct {
	store      store.Store
	clock      clock.Clock
	log        *slog.Logger
	metrics    *metrics.Metrics
	cat        *signing.Catalogue
	mail       mail.Sender
	admin      *admin.Service
	worker     *webhooks.Worker
	mailer     *courier.Worker
	limiter    ratelimit.Limiter
	ready      func() error
	purchases  *purchase.Service
	auth       *auth.Authenticator
	activation *activation.Service
	keys       *signing.Keyring
}

// newOperations wires the operations on st, with the signing keys sealed
// under master.
func newOperations(ctx context.Context, cfg config.Config, log *slog.Logger, st store.Store, plans licentia.Plans,
	master *signing.MasterKey) (*operations, error) {
	clk := clock.System{}
	// Without LICENTIA_METRICS_LISTEN nothing is counted: a nil Metrics
	// records nothing.
	var m *metrics.Metrics
	if cfg.MetricsListen != "" {
		m = metrics.New(metrics.Options{PendingDeliveries: st.CountPendingDeliveries, Logger: log,
			LeasesInUse: func(ctx context.Context) (int64, error) { return st.CountLeasesInUse(ctx, clk.Now()) }})
	}
	keys := signing.NewKeyringFile(master, masterKeyPath(cfg))
	cat := signing.NewCatalogue(st, clk, log)
	if err := cat.Refresh(ctx); err != nil {
		return nil, err
	}
	warnProviderAddresses(cfg, log)
	sender, err := newSender(cfg, log)
	if err != nil {
		return nil, err
	}
	svc := admin.New(admin.Options{Store: st, Clock: clk, Plans: plans, Keys: keys, Catalogue: cat, BaseURL: cfg.BaseURL,
		PublicURL: cfg.PublicURL(), Providers: newProviders(cfg), Mail: sender, Logger: log, Metrics: m})
	worker, err := newWorker(cfg, st, clk, keys, m, log)
	if err != nil {
		return nil, err
	}
	limiter, ready, err := newLimiter(cfg, clk, log, m)
	if err != nil {
		return nil, err
	}
	purchases := purchase.New(purchase.Options{Store: st, Clock: clk, Keys: keys, Catalogue: cat})
	authn := auth.NewAuthenticator(st, clk)
	act := activation.New(activation.Options{
		Store: st, Clock: clk, Keys: keys, Catalogue: cat, Validity: cfg.VerdictValidity, Logger: log,
	})
	// Mail to customers is rendered and sent by the courier, beside the
	// webhook worker; invitations are sent by the admin service directly.
	mailer := courier.New(courier.Options{Store: st, Clock: clk, Keys: keys, Sender: sender, PublicURL: cfg.PublicURL(), Logger: log})
	return &operations{store: st, clock: clk, log: log, metrics: m, cat: cat, keys: keys, mail: sender, admin: svc, worker: worker, mailer: mailer,
		limiter: limiter, ready: ready, purchases: purchases, auth: authn, activation: act}, nil
}

// frontDoors are the service's ways in: the API, the authorization server,
// the web console and the MCP server.
type frontDoors struct {
	api        *httpapi.Server
	oauth      *oauth.Service
	console    *console.Server
	portal     *portal.Server
	assistants *mcpserver.Server
}

// newFrontDoors wires the front doors over ops.
func newFrontDoors(cfg config.Config, ops *operations) (*frontDoors, error) {
	srv := httpapi.New(httpapi.Options{
		Store:           ops.store,
		Admin:           ops.admin,
		Activation:      ops.activation,
		Purchases:       ops.purchases,
		Auth:            ops.auth,
		Limiter:         ops.limiter,
		Ready:           ops.ready,
		DatabaseTimeout: cfg.DatabaseTimeout,
		Clock:           ops.clock,
		Logger:          ops.log,
		TrustedProxies:  cfg.TrustedProxies,
		Metrics:         ops.metrics,
	})
	authz := oauth.New(oauth.Options{Store: ops.store, Clock: ops.clock, Limiter: ops.limiter, Logger: ops.log, BaseURL: cfg.PublicURL(),
		TrustedProxies: cfg.TrustedProxies, DatabaseTimeout: cfg.DatabaseTimeout, Metrics: ops.metrics})
	cons, err := console.New(console.Options{Store: ops.store, Admin: ops.admin, Purchases: ops.purchases, Activation: ops.activation,
		OAuth: authz, Clock: ops.clock, Limiter: ops.limiter, Logger: ops.log, BaseURL: cfg.PublicURL(),
		BaseURLDefaulted: cfg.BaseURLDefaulted, TrustedProxies: cfg.TrustedProxies, DatabaseTimeout: cfg.DatabaseTimeout, Metrics: ops.metrics})
	if err != nil {
		return nil, err
	}
	customers, err := portal.New(portal.Options{Store: ops.store, Admin: ops.admin, Activation: ops.activation, Keys: ops.keys,
		Clock: ops.clock, Limiter: ops.limiter, Logger: ops.log, BaseURL: cfg.PublicURL(), TrustedProxies: cfg.TrustedProxies,
		DatabaseTimeout: cfg.DatabaseTimeout, Metrics: ops.metrics})
	if err != nil {
		return nil, err
	}
	// The MCP server calls the API in-process, handed over here so that
	// neither imports the other.
	assistants, err := mcpserver.New(mcpserver.Options{API: srv, Document: httpapi.OpenAPI, Auth: ops.auth,
		Limiter: ops.limiter, Clock: ops.clock, Logger: ops.log, BaseURL: cfg.PublicURL(), TrustedProxies: cfg.TrustedProxies,
		DatabaseTimeout: cfg.DatabaseTimeout, Metrics: ops.metrics})
	if err != nil {
		return nil, err
	}
	return &frontDoors{api: srv, oauth: authz, console: cons, portal: customers, assistants: assistants}, nil
}

// handler serves every front door on the service's one address.
func (d *frontDoors) handler() http.Handler {
	return mount(d.api, d.console.Handler(), d.portal.Handler(), d.assistants, d.oauth.Handler())
}
