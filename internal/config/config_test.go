package config_test

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/config"
)

// env returns a getenv reading vars.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// prefixes compares netip.Prefix values, whose fields are unexported.
var prefixes = cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })

func TestLoadDefaults(t *testing.T) {
	got, err := config.Load(env(nil))
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	want := config.Config{
		DataDir:         "./data",
		Listen:          "127.0.0.1:8080",
		DatabaseURL:     "sqlite:" + filepath.Join("./data", "licentia.db"),
		VerdictValidity: config.DefaultVerdictValidity,
		DatabaseTimeout: config.DefaultDatabaseTimeout,
		// Unset, the public address is the listen address.
		BaseURL:          "http://127.0.0.1:8080",
		BaseURLDefaulted: true,
	}
	if diff := cmp.Diff(want, got, prefixes); diff != "" {
		t.Errorf("Load() defaults mismatch (-want +got):\n%s", diff)
	}
	if config.DefaultVerdictValidity != 7*24*time.Hour {
		t.Errorf("DefaultVerdictValidity = %v, want the documented 168h", config.DefaultVerdictValidity)
	}
	if config.DefaultDatabaseTimeout != 5*time.Second {
		t.Errorf("DefaultDatabaseTimeout = %v, want the documented 5s", config.DefaultDatabaseTimeout)
	}
}

// TestBaseURLDefault checks that an unset LICENTIA_BASE_URL becomes the
// listen address over http, a wildcard host read as localhost, with a
// warning naming the variable; a set one is kept and warns of nothing.
func TestBaseURLDefault(t *testing.T) {
	for listen, want := range map[string]string{
		"127.0.0.1:9000": "http://127.0.0.1:9000", ":8443": "http://localhost:8443",
		"0.0.0.0:80": "http://localhost:80", "[::]:8080": "http://localhost:8080",
	} {
		c, err := config.Load(env(map[string]string{"LICENTIA_LISTEN": listen}))
		if err != nil {
			t.Fatalf("Load(listen %s) error = %v", listen, err)
		}
		if c.BaseURL != want || !c.BaseURLDefaulted {
			t.Errorf("listen %s: BaseURL = %q (defaulted %v), want %q defaulted", listen, c.BaseURL, c.BaseURLDefaulted, want)
		}
		if w := c.BaseURLWarning(); !strings.Contains(w, "LICENTIA_BASE_URL") || !strings.Contains(w, want) {
			t.Errorf("listen %s: warning %q names neither the variable nor the address", listen, w)
		}
	}
	c, err := config.Load(env(map[string]string{"LICENTIA_BASE_URL": "https://licences.example.com/"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "https://licences.example.com" || c.BaseURLDefaulted || c.BaseURLWarning() != "" {
		t.Errorf("set: BaseURL = %q, defaulted %v, warning %q", c.BaseURL, c.BaseURLDefaulted, c.BaseURLWarning())
	}
}

func TestLoadDatabaseInDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	got, err := config.Load(env(map[string]string{"LICENTIA_DATA_DIR": dir}))
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	if want := "sqlite:" + filepath.Join(dir, "licentia.db"); got.DatabaseURL != want {
		t.Errorf("DatabaseURL = %q, want %q, a file in the data directory", got.DatabaseURL, want)
	}
}

func TestLoadEveryVariable(t *testing.T) {
	vars := map[string]string{
		"LICENTIA_DATABASE_URL":         "postgres://licentia:pw@db.internal:5432/licentia?sslmode=require",
		"LICENTIA_DATA_DIR":             "/var/lib/licentia",
		"LICENTIA_LISTEN":               "0.0.0.0:9090",
		"LICENTIA_BASE_URL":             "https://licences.example.com/",
		"LICENTIA_MASTER_KEY_FILE":      "/run/secrets/master.key",
		"LICENTIA_REDIS_URL":            "redis://:pw@redis:6379/0",
		"LICENTIA_TRUSTED_PROXIES":      "10.1.2.3/8, 192.168.0.0/16,,2001:db8::1/32",
		"LICENTIA_PLANS_FILE":           "/etc/licentia/plans.json",
		"LICENTIA_VERDICT_VALIDITY":     "36h",
		"LICENTIA_DATABASE_TIMEOUT":     "750ms",
		"LICENTIA_WEBHOOK_RESOLVE":      "hooks.example.com:443:127.0.0.1:8443, [::1]:443:[::1]:9443",
		"LICENTIA_WEBHOOK_CA_FILE":      "/tmp/ca.pem",
		"LICENTIA_STRIPE_API_URL":       "http://127.0.0.1:12111/",
		"LICENTIA_PADDLE_API_URL":       "http://127.0.0.1:12112",
		"LICENTIA_LEMONSQUEEZY_API_URL": "http://127.0.0.1:12113",
		"LICENTIA_DEBUG_LISTEN":         "127.0.0.1:6060",
		"LICENTIA_METRICS_LISTEN":       ":9464",
		"LICENTIA_SMTP_URL":             "smtp://licentia:pw@mail.example.com:587",
		"LICENTIA_MAIL_FROM":            "Licentia <licences@example.com>",
	}
	got, err := config.Load(env(vars))
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	want := config.Config{
		DatabaseURL:   "postgres://licentia:pw@db.internal:5432/licentia?sslmode=require",
		DataDir:       "/var/lib/licentia",
		Listen:        "0.0.0.0:9090",
		BaseURL:       "https://licences.example.com",
		MasterKeyFile: "/run/secrets/master.key",
		RedisURL:      "redis://:pw@redis:6379/0",
		TrustedProxies: []netip.Prefix{
			netip.MustParsePrefix("10.0.0.0/8"),
			netip.MustParsePrefix("192.168.0.0/16"),
			netip.MustParsePrefix("2001:db8::/32"),
		},
		PlansFile:          "/etc/licentia/plans.json",
		VerdictValidity:    36 * time.Hour,
		DatabaseTimeout:    750 * time.Millisecond,
		WebhookResolve:     []string{"hooks.example.com:443:127.0.0.1:8443", "[::1]:443:[::1]:9443"},
		WebhookCAFile:      "/tmp/ca.pem",
		StripeAPIURL:       "http://127.0.0.1:12111",
		PaddleAPIURL:       "http://127.0.0.1:12112",
		LemonSqueezyAPIURL: "http://127.0.0.1:12113",
		DebugListen:        "127.0.0.1:6060",
		MetricsListen:      ":9464",
		SMTPURL:            "smtp://licentia:pw@mail.example.com:587",
		MailFrom:           "Licentia <licences@example.com>",
	}
	if diff := cmp.Diff(want, got, prefixes); diff != "" {
		t.Errorf("Load() mismatch (-want +got):\n%s", diff)
	}
	// Every variable the configuration documents is read: removing any one
	// of them changes the result.
	for name := range vars {
		without := map[string]string{}
		for k, v := range vars {
			if k != name {
				without[k] = v
			}
		}
		other, err := config.Load(env(without))
		if err != nil {
			// LICENTIA_MAIL_FROM is required with LICENTIA_SMTP_URL.
			if name == "LICENTIA_MAIL_FROM" {
				continue
			}
			t.Fatalf("Load() without %s error = %v", name, err)
		}
		if cmp.Equal(got, other, prefixes) {
			t.Errorf("Load() ignores %s", name)
		}
	}
}

func TestLoadAccepted(t *testing.T) {
	for _, tt := range []struct {
		name, variable, value string
	}{
		{"sqlite path", "LICENTIA_DATABASE_URL", "sqlite:/srv/licentia.db"},
		{"sqlite relative path", "LICENTIA_DATABASE_URL", "sqlite:licentia.db"},
		{"postgresql scheme", "LICENTIA_DATABASE_URL", "postgresql://u@h/db"},
		{"http base URL", "LICENTIA_BASE_URL", "http://localhost:8080"},
		{"one proxy", "LICENTIA_TRUSTED_PROXIES", "127.0.0.1/32"},
		{"validity in minutes", "LICENTIA_VERDICT_VALIDITY", "90m"},
		{"database timeout in milliseconds", "LICENTIA_DATABASE_TIMEOUT", "300ms"},
		{"debug on loopback", "LICENTIA_DEBUG_LISTEN", "127.0.0.1:6060"},
		{"debug on IPv6 loopback", "LICENTIA_DEBUG_LISTEN", "[::1]:6060"},
		{"debug on localhost", "LICENTIA_DEBUG_LISTEN", "localhost:0"},
		{"metrics on loopback", "LICENTIA_METRICS_LISTEN", "127.0.0.1:9464"},
		{"metrics on every address", "LICENTIA_METRICS_LISTEN", ":9464"},
		{"metrics on every IPv6 address", "LICENTIA_METRICS_LISTEN", "[::]:9464"},
		{"metrics on a host name", "LICENTIA_METRICS_LISTEN", "metrics.internal:9464"},
		{"metrics on any free port", "LICENTIA_METRICS_LISTEN", "127.0.0.1:0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := config.Load(env(map[string]string{tt.variable: tt.value})); err != nil {
				t.Errorf("Load(%s=%q) error = %v", tt.variable, tt.value, err)
			}
		})
	}
}

func TestLoadRefused(t *testing.T) {
	for _, tt := range []struct {
		name, variable, value string
	}{
		{"mysql database", "LICENTIA_DATABASE_URL", "mysql://u:p@h/db"},
		{"bare path database", "LICENTIA_DATABASE_URL", "/srv/licentia.db"},
		{"sqlite without colon", "LICENTIA_DATABASE_URL", "sqlite"},
		{"upper-case scheme", "LICENTIA_DATABASE_URL", "POSTGRES://h/db"},
		{"ftp base URL", "LICENTIA_BASE_URL", "ftp://example.com"},
		{"base URL without host", "LICENTIA_BASE_URL", "https://"},
		{"relative base URL", "LICENTIA_BASE_URL", "example.com"},
		{"proxy without length", "LICENTIA_TRUSTED_PROXIES", "10.0.0.1"},
		{"proxy length too long", "LICENTIA_TRUSTED_PROXIES", "10.0.0.0/33"},
		{"proxy not an address", "LICENTIA_TRUSTED_PROXIES", "10.0.0.0/8,proxy.internal/32"},
		{"proxy host name", "LICENTIA_TRUSTED_PROXIES", "localhost"},
		{"validity zero", "LICENTIA_VERDICT_VALIDITY", "0"},
		{"validity negative", "LICENTIA_VERDICT_VALIDITY", "-1h"},
		{"validity in days", "LICENTIA_VERDICT_VALIDITY", "7d"},
		{"validity without unit", "LICENTIA_VERDICT_VALIDITY", "3600"},
		{"database timeout zero", "LICENTIA_DATABASE_TIMEOUT", "0s"},
		{"database timeout without unit", "LICENTIA_DATABASE_TIMEOUT", "5"},
		{"debug on every address", "LICENTIA_DEBUG_LISTEN", "0.0.0.0:6060"},
		{"debug without host", "LICENTIA_DEBUG_LISTEN", ":6060"},
		{"debug on a public address", "LICENTIA_DEBUG_LISTEN", "192.0.2.1:6060"},
		{"debug on a host name", "LICENTIA_DEBUG_LISTEN", "debug.internal:6060"},
		{"debug without port", "LICENTIA_DEBUG_LISTEN", "127.0.0.1"},
		{"provider API without scheme", "LICENTIA_STRIPE_API_URL", "127.0.0.1:12111"},
		{"provider API not http", "LICENTIA_PADDLE_API_URL", "ftp://127.0.0.1"},
		{"provider API without host", "LICENTIA_LEMONSQUEEZY_API_URL", "http://"},
		{"debug on mapped IPv4 everywhere", "LICENTIA_DEBUG_LISTEN", "[::ffff:0.0.0.0]:6060"},
		{"metrics without port", "LICENTIA_METRICS_LISTEN", "127.0.0.1"},
		{"metrics port alone", "LICENTIA_METRICS_LISTEN", "9464"},
		{"metrics port not a number", "LICENTIA_METRICS_LISTEN", "127.0.0.1:metrics"},
		{"metrics port too large", "LICENTIA_METRICS_LISTEN", "127.0.0.1:65536"},
		{"metrics port negative", "LICENTIA_METRICS_LISTEN", "127.0.0.1:-1"},
		{"metrics as a URL", "LICENTIA_METRICS_LISTEN", "http://127.0.0.1:9464"},
		{"metrics with a path", "LICENTIA_METRICS_LISTEN", "127.0.0.1:9464/metrics"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.Load(env(map[string]string{tt.variable: tt.value}))
			if err == nil {
				t.Fatalf("Load(%s=%q) = %+v, want an error", tt.variable, tt.value, got)
			}
			if !strings.Contains(err.Error(), tt.variable) {
				t.Errorf("Load(%s=%q) error = %q, want it to name %s", tt.variable, tt.value, err, tt.variable)
			}
		})
	}
}

func TestLoadReportsEveryProblem(t *testing.T) {
	_, err := config.Load(env(map[string]string{
		"LICENTIA_DATABASE_URL":     "mysql://h/db",
		"LICENTIA_BASE_URL":         "ftp://x",
		"LICENTIA_TRUSTED_PROXIES":  "a/1,b/2",
		"LICENTIA_VERDICT_VALIDITY": "soon",
	}))
	if err == nil {
		t.Fatal("Load() error = nil, want problems")
	}
	for _, want := range []string{"LICENTIA_DATABASE_URL", "LICENTIA_BASE_URL", `"a/1"`, `"b/2"`, "LICENTIA_VERDICT_VALIDITY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Load() error = %q, want it to report %s", err, want)
		}
	}
}

func TestRedacted(t *testing.T) {
	const secret = "s3cr3t"
	for _, tt := range []struct {
		name         string
		database     string
		redis        string
		wantDatabase string
		wantRedis    string
	}{
		{
			name:         "passwords in user info",
			database:     "postgres://licentia:" + secret + "@db:5432/licentia",
			redis:        "redis://:" + secret + "@redis:6379/0",
			wantDatabase: "postgres://licentia:<redacted>@db:5432/licentia",
			wantRedis:    "redis://:<redacted>@redis:6379/0",
		},
		{
			name:         "no passwords",
			database:     "postgres://licentia@db/licentia?sslmode=disable",
			redis:        "redis://redis:6379",
			wantDatabase: "postgres://licentia@db/licentia?sslmode=disable",
			wantRedis:    "redis://redis:6379",
		},
		{
			name:         "sqlite",
			database:     "sqlite:/var/lib/licentia/licentia.db",
			wantDatabase: "sqlite:/var/lib/licentia/licentia.db",
		},
		{
			// libpq and pgx also take the password as a query parameter.
			name:         "password parameter",
			database:     "postgres://db/licentia?user=licentia&password=" + secret + "&sslmode=require",
			wantDatabase: "postgres://db/licentia?password=<redacted>&sslmode=require&user=licentia",
		},
		{
			// url.Parse refuses these; they must not be printed as sent.
			name:         "unparsable",
			database:     "postgres://licentia:" + secret + " x@db/licentia",
			redis:        "redis://:" + secret + "%zz@redis:6379",
			wantDatabase: "<redacted>",
			wantRedis:    "<redacted>",
		},
		{
			// url.URL.Query drops a pair it cannot decode, password included.
			name:         "undecodable parameter",
			database:     "postgres://db/licentia?password=" + secret + "%zz",
			wantDatabase: "<redacted>",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(env(map[string]string{"LICENTIA_DATABASE_URL": tt.database, "LICENTIA_REDIS_URL": tt.redis}))
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			r := c.Redacted()
			if got := fmt.Sprint(r); strings.Contains(got, secret) {
				t.Errorf("Redacted() = %s, shows the password", got)
			}
			if r["database"] != tt.wantDatabase || r["redis"] != tt.wantRedis {
				t.Errorf("Redacted() database, redis = %q, %q, want %q, %q", r["database"], r["redis"], tt.wantDatabase, tt.wantRedis)
			}
		})
	}
}

func TestRedactedShowsSettings(t *testing.T) {
	c, err := config.Load(env(map[string]string{"LICENTIA_TRUSTED_PROXIES": "10.0.0.0/8,fd00::/8", "LICENTIA_VERDICT_VALIDITY": "24h"}))
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	want := map[string]any{
		"database":         "sqlite:" + filepath.Join("./data", "licentia.db"),
		"data_dir":         "./data",
		"listen":           "127.0.0.1:8080",
		"base_url":         "http://127.0.0.1:8080",
		"master_key_file":  "",
		"redis":            "",
		"trusted_proxies":  2,
		"plans_file":       "",
		"verdict_validity": "24h0m0s",
		"database_timeout": "5s",
		"debug_listen":     "",
		"metrics_listen":   "",
		"smtp":             "",
		"mail_from":        "",
	}
	if diff := cmp.Diff(want, c.Redacted()); diff != "" {
		t.Errorf("Redacted() mismatch (-want +got):\n%s", diff)
	}
}

// TestRedactedShowsMetricsListen: the metrics address is in the
// configuration logged at start.
func TestRedactedShowsMetricsListen(t *testing.T) {
	c, err := config.Load(env(map[string]string{"LICENTIA_METRICS_LISTEN": "127.0.0.1:9464"}))
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	if got := c.Redacted()["metrics_listen"]; got != "127.0.0.1:9464" {
		t.Errorf("Redacted() metrics_listen = %q, want 127.0.0.1:9464", got)
	}
}

func TestLoadMail(t *testing.T) {
	for _, tt := range []struct {
		name     string
		smtp     string
		from     string
		problems []string // variables the error names; none when accepted
	}{
		{name: "unset: the outbox"},
		{name: "starttls", smtp: "smtp://u:p@mail.example.com:587", from: "licences@example.com"},
		{name: "implicit tls", smtp: "smtps://u:p@mail.example.com", from: "Licentia <licences@example.com>"},
		{name: "no credentials", smtp: "smtp://127.0.0.1:2525", from: "licences@example.com"},
		{name: "from without smtp", from: "licences@example.com"},
		{name: "http scheme", smtp: "http://mail.example.com", from: "licences@example.com", problems: []string{"LICENTIA_SMTP_URL"}},
		{name: "no host", smtp: "smtp://:587", from: "licences@example.com", problems: []string{"LICENTIA_SMTP_URL"}},
		{name: "bad port", smtp: "smtp://mail.example.com:99999", from: "licences@example.com", problems: []string{"LICENTIA_SMTP_URL"}},
		{name: "missing from", smtp: "smtp://mail.example.com", problems: []string{"LICENTIA_MAIL_FROM is required"}},
		{name: "invalid from", smtp: "smtp://mail.example.com", from: "licences", problems: []string{"LICENTIA_MAIL_FROM must be"}},
		{name: "invalid from alone", from: "not an address", problems: []string{"LICENTIA_MAIL_FROM must be"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(env(map[string]string{"LICENTIA_SMTP_URL": tt.smtp, "LICENTIA_MAIL_FROM": tt.from}))
			if len(tt.problems) == 0 {
				if err != nil {
					t.Fatalf("Load() error = %v", err)
				}
				if c.SMTPURL != tt.smtp || c.MailFrom != tt.from {
					t.Errorf("SMTPURL, MailFrom = %q, %q, want %q, %q", c.SMTPURL, c.MailFrom, tt.smtp, tt.from)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load() = %+v, want an error", c)
			}
			for _, want := range tt.problems {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Load() error = %q, want it to say %q", err, want)
				}
			}
		})
	}
}

func TestRedactedHidesSMTPPassword(t *testing.T) {
	const secret = "s3cr3t"
	c, err := config.Load(env(map[string]string{
		"LICENTIA_SMTP_URL":  "smtps://licentia:" + secret + "@mail.example.com:465",
		"LICENTIA_MAIL_FROM": "licences@example.com",
	}))
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	r := c.Redacted()
	if got := fmt.Sprint(r); strings.Contains(got, secret) {
		t.Errorf("Redacted() = %s, shows the SMTP password", got)
	}
	if want := "smtps://licentia:<redacted>@mail.example.com:465"; r["smtp"] != want {
		t.Errorf("Redacted() smtp = %q, want %q", r["smtp"], want)
	}
	if r["mail_from"] != "licences@example.com" {
		t.Errorf("Redacted() mail_from = %q, want the address", r["mail_from"])
	}
}
