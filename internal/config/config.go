// Package config reads the LICENTIA_* environment variables into a Config,
// validated once at start.
package config

import (
	"fmt"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultVerdictValidity is how long a verdict may be used offline when
// LICENTIA_VERDICT_VALIDITY is unset: long enough that a daily check can miss
// a few days, short enough that a revocation reaches an offline machine soon.
const DefaultVerdictValidity = 7 * 24 * time.Hour

// DefaultDatabaseTimeout bounds a request's database work when
// LICENTIA_DATABASE_TIMEOUT is unset: far above any answer's time on a
// healthy database, short enough that a frozen one (a network partition)
// gets an answer, not a hang.
const DefaultDatabaseTimeout = 5 * time.Second

// Config is the service's configuration.
type Config struct {
	DatabaseURL string
	DataDir     string
	Listen      string
	// BaseURL is LICENTIA_BASE_URL, or PublicURL's default when unset
	// (BaseURLDefaulted then says so).
	BaseURL string
	// BaseURLDefaulted is set when LICENTIA_BASE_URL was unset and BaseURL
	// is the listen address: fine on one's own computer, unreachable by
	// customers and payment providers elsewhere.
	BaseURLDefaulted bool
	MasterKeyFile    string
	RedisURL         string
	TrustedProxies   []netip.Prefix
	PlansFile        string
	VerdictValidity  time.Duration
	// DatabaseTimeout bounds each request's database work.
	DatabaseTimeout time.Duration
	// DebugListen, when set, is a loopback address serving the Go
	// profiler (/debug/pprof/) for diagnosing a running process.
	DebugListen string
	// MetricsListen, when set, is host:port serving the Prometheus metrics
	// at /metrics, on a listener of its own.
	MetricsListen string
	// SMTPURL is smtp://user:pass@host:587 (STARTTLS) or smtps://... (implicit
	// TLS); unset, mail is written to the outbox in the data directory.
	SMTPURL string
	// MailFrom is the sender address of mail; required with SMTPURL.
	MailFrom string
	// Test-only settings, logged loudly when set.
	WebhookResolve []string
	WebhookCAFile  string
	// StripeAPIURL, PaddleAPIURL and LemonSqueezyAPIURL replace a payment
	// provider's API base address (without a version path) with a fake's.
	StripeAPIURL       string
	PaddleAPIURL       string
	LemonSqueezyAPIURL string
}

// PublicURL is the service's address as people open it: LICENTIA_BASE_URL,
// or without it the listen address over http, with a wildcard host read as
// localhost. Console links start with it.
func (c Config) PublicURL() string {
	if c.BaseURL != "" {
		return c.BaseURL
	}
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return "http://" + c.Listen
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Load reads the configuration through getenv (os.Getenv in the binary, a
// map in tests) and reports every problem at once.
func Load(getenv func(string) string) (Config, error) {
	c := read(getenv)
	var problems []string
	problems = append(problems, c.checkDatabase()...)
	problems = append(problems, c.loadHTTP(getenv)...)
	problems = append(problems, c.loadDurations(getenv)...)
	problems = append(problems, c.checkListeners()...)
	problems = append(problems, c.checkMail()...)
	c.loadWebhooks(getenv)
	problems = append(problems, c.checkProviders()...)
	if len(problems) > 0 {
		return Config{}, fmt.Errorf("configuration: %s", strings.Join(problems, "; "))
	}
	return c, nil
}

// read takes the variables that are copied as they are, and the defaults
// of those left unset.
func read(getenv func(string) string) Config {
	c := Config{
		DataDir:            getenv("LICENTIA_DATA_DIR"),
		Listen:             getenv("LICENTIA_LISTEN"),
		BaseURL:            strings.TrimRight(getenv("LICENTIA_BASE_URL"), "/"),
		MasterKeyFile:      getenv("LICENTIA_MASTER_KEY_FILE"),
		RedisURL:           getenv("LICENTIA_REDIS_URL"),
		PlansFile:          getenv("LICENTIA_PLANS_FILE"),
		WebhookCAFile:      getenv("LICENTIA_WEBHOOK_CA_FILE"),
		DatabaseURL:        getenv("LICENTIA_DATABASE_URL"),
		DebugListen:        getenv("LICENTIA_DEBUG_LISTEN"),
		MetricsListen:      getenv("LICENTIA_METRICS_LISTEN"),
		SMTPURL:            getenv("LICENTIA_SMTP_URL"),
		MailFrom:           getenv("LICENTIA_MAIL_FROM"),
		StripeAPIURL:       strings.TrimRight(getenv("LICENTIA_STRIPE_API_URL"), "/"),
		PaddleAPIURL:       strings.TrimRight(getenv("LICENTIA_PADDLE_API_URL"), "/"),
		LemonSqueezyAPIURL: strings.TrimRight(getenv("LICENTIA_LEMONSQUEEZY_API_URL"), "/"),
		VerdictValidity:    DefaultVerdictValidity,
		DatabaseTimeout:    DefaultDatabaseTimeout,
	}
	if c.DataDir == "" {
		c.DataDir = "./data"
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = "sqlite:" + filepath.Join(c.DataDir, "licentia.db")
	}
	if c.BaseURL == "" {
		c.BaseURL, c.BaseURLDefaulted = c.PublicURL(), true
	}
	return c
}

// BaseURLVariable is the variable that sets the service's public address,
// named wherever an address shown may not be the one people reach.
const BaseURLVariable = "LICENTIA_BASE_URL"

// BaseURLWarning is the start-up log's warning when LICENTIA_BASE_URL is
// unset, or empty when it is set.
func (c Config) BaseURLWarning() string {
	if !c.BaseURLDefaulted {
		return ""
	}
	return BaseURLVariable + " is unset: links, webhook addresses and mails use the listen address " + c.BaseURL +
		", which only this computer reaches; set " + BaseURLVariable + " to the service's public address"
}

// checkDatabase reports a database URL of no engine the service has.
func (c *Config) checkDatabase() (problems []string) {
	if !strings.HasPrefix(c.DatabaseURL, "sqlite:") && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		problems = append(problems, "LICENTIA_DATABASE_URL must be sqlite:PATH or postgres://...")
	}
	return problems
}

// loadHTTP checks the public address and reads the trusted proxies.
func (c *Config) loadHTTP(getenv func(string) string) (problems []string) {
	// A defaulted address is the listen address, whose own faults the
	// listener reports.
	if c.BaseURL != "" && !c.BaseURLDefaulted {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			problems = append(problems, "LICENTIA_BASE_URL must be an absolute http or https URL")
		}
	}
	if v := getenv("LICENTIA_TRUSTED_PROXIES"); v != "" {
		for _, s := range strings.Split(v, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			p, err := netip.ParsePrefix(s)
			if err != nil {
				problems = append(problems, fmt.Sprintf("LICENTIA_TRUSTED_PROXIES: %q is not a CIDR", s))
				continue
			}
			c.TrustedProxies = append(c.TrustedProxies, p.Masked())
		}
	}
	return problems
}

// loadDurations reads the verdict validity and the database timeout.
func (c *Config) loadDurations(getenv func(string) string) (problems []string) {
	if v := getenv("LICENTIA_VERDICT_VALIDITY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			problems = append(problems, "LICENTIA_VERDICT_VALIDITY must be a positive Go duration such as 168h")
		}
		c.VerdictValidity = d
	}
	if v := getenv("LICENTIA_DATABASE_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			problems = append(problems, "LICENTIA_DATABASE_TIMEOUT must be a positive Go duration such as 5s")
		}
		c.DatabaseTimeout = d
	}
	return problems
}

// checkListeners checks the profiler's and the metrics' addresses.
func (c *Config) checkListeners() (problems []string) {
	if c.DebugListen != "" && !isLoopback(c.DebugListen) {
		problems = append(problems, "LICENTIA_DEBUG_LISTEN must be a loopback address such as 127.0.0.1:6060")
	}
	if c.MetricsListen != "" && !isHostPort(c.MetricsListen) {
		problems = append(problems, "LICENTIA_METRICS_LISTEN must be host:port such as 127.0.0.1:9464 or :9464")
	}
	return problems
}

// checkMail checks the SMTP server and the sender address.
func (c *Config) checkMail() (problems []string) {
	if c.SMTPURL != "" {
		u, err := url.Parse(c.SMTPURL)
		if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
			problems = append(problems, "LICENTIA_SMTP_URL must be smtp://user:pass@host:587 or smtps://user:pass@host:465")
		} else if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				problems = append(problems, "LICENTIA_SMTP_URL has an invalid port")
			}
		}
		if c.MailFrom == "" {
			problems = append(problems, "LICENTIA_MAIL_FROM is required with LICENTIA_SMTP_URL")
		}
	}
	if c.MailFrom != "" {
		if _, err := mail.ParseAddress(c.MailFrom); err != nil {
			problems = append(problems, "LICENTIA_MAIL_FROM must be an address such as Licentia <licences@example.com>")
		}
	}
	return problems
}

// loadWebhooks reads the test-only resolver overrides of webhook hosts.
func (c *Config) loadWebhooks(getenv func(string) string) {
	if v := getenv("LICENTIA_WEBHOOK_RESOLVE"); v != "" {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.WebhookResolve = append(c.WebhookResolve, s)
			}
		}
	}
}

// checkProviders checks the test-only payment-provider API addresses.
func (c *Config) checkProviders() (problems []string) {
	for _, v := range c.ProviderAPIURLs() {
		if v.URL == "" {
			continue
		}
		if u, err := url.Parse(v.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			problems = append(problems, v.Variable+" must be an absolute http or https URL")
		}
	}
	return problems
}

// ProviderAPIURL is a test-only payment-provider API address and the
// variable that sets it.
type ProviderAPIURL struct{ Variable, URL string }

// ProviderAPIURLs lists the test-only provider API addresses, set or not.
func (c Config) ProviderAPIURLs() []ProviderAPIURL {
	return []ProviderAPIURL{
		{"LICENTIA_STRIPE_API_URL", c.StripeAPIURL},
		{"LICENTIA_PADDLE_API_URL", c.PaddleAPIURL},
		{"LICENTIA_LEMONSQUEEZY_API_URL", c.LemonSqueezyAPIURL},
	}
}

// Redacted returns the configuration as text with secrets hidden, for logs.
func (c Config) Redacted() map[string]any {
	return map[string]any{
		"database":         redactURL(c.DatabaseURL),
		"data_dir":         c.DataDir,
		"listen":           c.Listen,
		"base_url":         c.BaseURL,
		"master_key_file":  c.MasterKeyFile,
		"redis":            redactURL(c.RedisURL),
		"trusted_proxies":  len(c.TrustedProxies),
		"plans_file":       c.PlansFile,
		"verdict_validity": c.VerdictValidity.String(),
		"database_timeout": c.DatabaseTimeout.String(),
		"debug_listen":     c.DebugListen,
		"metrics_listen":   c.MetricsListen,
		"smtp":             redactURL(c.SMTPURL),
		"mail_from":        c.MailFrom,
	}
}

// isLoopback reports whether addr is host:port with a loopback host. The
// profiler shows memory and command lines, so it is never offered beyond
// the machine.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// isHostPort reports whether addr is host:port with a port number, as
// net.Listen takes it; the host may be empty (every address).
func isHostPort(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || strings.ContainsAny(host, " /") {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535 && port == strconv.Itoa(n)
}

// redactURL hides the passwords of a connection URL: in its user info and in
// password query parameters, which libpq and pgx also accept. A URL that does
// not parse is hidden whole, since where its password is cannot be known.
func redactURL(s string) string {
	const mark = "<redacted>"
	u, err := url.Parse(s)
	if err != nil {
		return mark
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), mark)
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return mark
	}
	for name := range q {
		if strings.Contains(strings.ToLower(name), "password") {
			q[name] = []string{mark}
			u.RawQuery = q.Encode()
		}
	}
	// url.URL.String escapes < and >.
	return strings.ReplaceAll(u.String(), url.QueryEscape(mark), mark)
}
