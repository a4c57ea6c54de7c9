package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/sqlite"
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
	return &operator{store: st, admin: svc}, nil
}

func (o *operator) Close() error { return o.store.Close() }
