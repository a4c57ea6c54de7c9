package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/licentia"
)

// healthcheckTimeout bounds the whole check: a container runtime runs it
// every few seconds and must get an answer, not a hang.
const healthcheckTimeout = 5 * time.Second

// healthcheckCommand asks the service on this machine for /readyz (or
// --path /healthz) and succeeds only on 200. The container image has no
// shell and no curl, so its HEALTHCHECK runs this.
func healthcheckCommand(ctx context.Context, args []string, env Env) error {
	fs := newFlags("healthcheck")
	path := fs.String("path", "/readyz", "/readyz or /healthz")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError("healthcheck takes no arguments")
	}
	if *path != "/readyz" && *path != "/healthz" {
		return usageError("healthcheck --path must be /readyz or /healthz")
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	url, err := healthcheckURL(cfg.Listen, *path)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	// Straight to the service: a proxy set in the environment is not on
	// the path a health check asks about.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return licentia.Errorf(licentia.CodeServiceUnavailable, "GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return licentia.Errorf(licentia.CodeServiceUnavailable, "GET %s answered %d: %s", url, resp.StatusCode,
			strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(env.Stdout, "%s\n", strings.TrimSpace(string(body)))
	return nil
}

// healthcheckURL is path on the address serve listens on, reached over
// loopback when serve listens on every address, as it does in a container.
func healthcheckURL(listen, path string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" || port == "0" {
		return "", usageError("LICENTIA_LISTEN %q is not host:port with a fixed port", listen)
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}
