// Package mcpserver serves the MCP server at /mcp, through which an AI
// assistant acts on an organization: one tool per administration operation,
// over Streamable HTTP with the official Go SDK. A tool call is the API's
// own route called in-process with the caller's credential, so every rule,
// answer, rate limit and audit entry is the API's; a tool's result is the
// route's answer body, and a refusal the API's error object.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/web"
)

// Path is where the MCP server is served.
const Path = "/mcp"

// API is the administration API the tools call in-process: its handler,
// and the scope each of its administration routes needs. The API server
// (httpapi) is one; cli hands it over, so that neither front door imports
// the other.
type API interface {
	http.Handler
	// RouteScope returns the scope the administration route pattern
	// needs, and false for a pattern that is not one.
	RouteScope(pattern string) (licentia.Scope, bool)
}

// Options are the dependencies of a Server.
type Options struct {
	// API serves the administration routes the tools call.
	API API
	// Document is the API's OpenAPI document, which describes each tool's
	// input.
	Document []byte
	Auth     *auth.Authenticator
	Limiter  ratelimit.Limiter
	Clock    clock.Clock
	Logger   *slog.Logger
	// BaseURL is the service's public address (LICENTIA_BASE_URL): a 401
	// names the protected resource metadata under it.
	BaseURL        string
	TrustedProxies []netip.Prefix
	// DatabaseTimeout bounds the reading of the caller's credential; 0
	// means web.DefaultDatabaseTimeout.
	DatabaseTimeout time.Duration
	// Metrics counts requests; nil counts nothing.
	Metrics *metrics.Metrics
}

// Server is the MCP server.
type Server struct {
	api      API
	auth     *auth.Authenticator
	limiter  ratelimit.Limiter
	clock    clock.Clock
	log      *slog.Logger
	proxies  []netip.Prefix
	timeout  time.Duration
	metrics  *metrics.Metrics
	metadata string
	version  string
	tools    []offered
	mcp      http.Handler
}

// offered is a tool as the SDK lists it, with the scope its route needs.
type offered struct {
	*tool
	def   *mcp.Tool
	scope licentia.Scope
}

// New returns the MCP server. It fails when a tool names a route the API
// does not have or its document does not describe, which is a programming
// error the tests catch.
func New(o Options) (*Server, error) {
	s := &Server{api: o.API, auth: o.Auth, limiter: o.Limiter, clock: o.Clock, log: o.Logger, proxies: o.TrustedProxies,
		timeout: o.DatabaseTimeout, metrics: o.Metrics, metadata: o.BaseURL + "/.well-known/oauth-protected-resource"}
	if s.timeout <= 0 {
		s.timeout = web.DefaultDatabaseTimeout
	}
	doc, err := parseDocument(o.Document)
	if err != nil {
		return nil, err
	}
	s.version = doc.version()
	for _, t := range tools {
		scope, ok := s.api.RouteScope(t.pattern())
		if !ok {
			return nil, fmt.Errorf("tool %s: no administration route %s", t.name, t.pattern())
		}
		schema, desc, err := doc.inputSchema(t)
		if err != nil {
			return nil, err
		}
		s.tools = append(s.tools, offered{tool: t, scope: scope, def: &mcp.Tool{
			Name: t.name, Title: t.title, Description: desc, InputSchema: schema, Annotations: annotations(t),
		}})
	}
	// Stateless: every request stands alone, so any process behind a load
	// balancer answers it, and the caller is identified on each request. The
	// SDK's DNS-rebinding check is off: it refuses requests reaching a
	// loopback address under another host name, which is every request a
	// reverse proxy on the same machine forwards, and a rebinding page has
	// no bearer token to send anyway. The SDK logs nothing: its lines would
	// carry tool arguments, customer emails among them.
	//
	// A message is read only once its sender is known; its size is bounded
	// all the same. A tool's arguments become a body the API holds to
	// MaxBody (413 payload_too_large, as a tool error), so a message may be
	// some larger, for its envelope and JSON escapes.
	s.mcp = mcp.NewStreamableHTTPHandler(s.serverFor, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, DisableLocalhostProtection: true, MaxRequestBodyBytes: 4 * web.MaxBody,
	})
	return s, nil
}

// annotations are the hints a client shows before a call.
func annotations(t *tool) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{Title: t.title, ReadOnlyHint: t.effect == reads, IdempotentHint: t.idempotent || t.effect == reads}
	if t.effect != reads {
		a.DestructiveHint = new(t.effect == destructive)
	}
	// Every tool acts on the organization's own records, except an
	// invitation and a key mail, which mail someone.
	a.OpenWorldHint = new(t.mails)
	return a
}

type ctxKey int

const requestKey ctxKey = iota

// request is one request to /mcp: who sent it, from where, and the MCP
// server made for them, built once the SDK asks for it.
type request struct {
	caller        *auth.Caller
	authorization string
	addr          string
	id            string
	server        *mcp.Server
}

// ServeHTTP serves /mcp: it identifies the caller as the API does, then
// hands the request to the SDK. A missing or refused credential answers 401
// with the WWW-Authenticate challenge that starts an OAuth client's
// discovery, counted per client address against the admin limit so that
// guessing is slow.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rq := &request{addr: web.ClientAddr(r, s.proxies), id: web.RequestID(r)}
	w.Header().Set("X-Request-Id", rq.id)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	web.Observed{Log: s.log, Clock: s.clock, Metrics: s.metrics, Server: "mcp", Message: "request",
		Pattern: func(*http.Request) string { return Path },
		Fail: func(w http.ResponseWriter, _ *http.Request, _ any) {
			writeError(w, rq.id, licentia.Errorf(licentia.CodeInternal, "An unexpected error occurred. Retry later with backoff."))
		},
	}.Serve(w, r, rq.id, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Values("Authorization"); len(v) == 1 {
			rq.authorization = v[0]
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
		caller, err := s.auth.Authenticate(ctx, rq.authorization)
		cancel()
		if err != nil {
			s.refuse(w, r, rq, err)
			return
		}
		rq.caller = caller
		s.mcp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestKey, rq)))
	}))
}

// refuse answers a request whose credential was missing, refused or could
// not be read.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, rq *request, err error) {
	if licentia.ErrorCode(err) != licentia.CodeUnauthorized {
		// The credential could not be read: a server error, counted against
		// nobody, as on the API.
		s.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
			slog.String("request_id", rq.id), slog.String("code", string(licentia.CodeInternal)), slog.String("error", err.Error()))
		writeError(w, rq.id, licentia.Errorf(licentia.CodeInternal, "An unexpected error occurred. Retry later with backoff."))
		return
	}
	res, lerr := s.limiter.Allow(r.Context(), ratelimit.Admin, ratelimit.ClientSubject(rq.addr)+"|"+Path)
	if lerr != nil {
		s.log.WarnContext(r.Context(), "rate limiter unavailable", "request_id", rq.id, "error", lerr.Error())
	} else {
		name, reset := ratelimit.Admin.Name, strconv.FormatInt(max(int64((res.Reset+time.Second-1)/time.Second), 1), 10)
		w.Header().Set("X-RateLimit-Limit-"+name, strconv.FormatInt(res.Limit, 10))
		w.Header().Set("X-RateLimit-Remaining-"+name, strconv.FormatInt(res.Remaining, 10))
		w.Header().Set("X-RateLimit-Reset-"+name, reset)
		if !res.Allowed {
			w.Header().Set("Retry-After-"+name, reset)
			writeError(w, rq.id, licentia.Errorf(licentia.CodeRateLimited, "Too many requests; retry after the seconds in Retry-After-%s.", name))
			return
		}
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer resource_metadata=%q", s.metadata))
	writeError(w, rq.id, err)
}

// serverFor returns the MCP server of the request: every tool, each calling
// its route as the caller, with tools/list showing only those the caller
// may use.
func (s *Server) serverFor(r *http.Request) *mcp.Server {
	rq, _ := r.Context().Value(requestKey).(*request)
	if rq == nil {
		return nil
	}
	if rq.server != nil {
		return rq.server
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "licentia", Title: "Licentia", Version: s.version}, &mcp.ServerOptions{
		Instructions: instructions(rq.caller),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		PageSize:     len(s.tools),
	})
	for _, t := range s.tools {
		srv.AddTool(t.def, s.handler(rq, t.tool))
	}
	visible := s.visible(rq.caller)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				list.Tools = slices.DeleteFunc(list.Tools, func(t *mcp.Tool) bool { return !visible[t.Name] })
			}
			return res, err
		}
	})
	rq.server = srv
	return srv
}

// visible names the tools the caller may use: those whose route's scope the
// caller holds as an assistant. A member's role gives the scopes, without
// those no assistant holds; a key keeps its own scopes but those. So the
// team-changing tools show only for a role that may change the team, and
// never for a key.
func (s *Server) visible(c *auth.Caller) map[string]bool {
	c = c.AsAssistant()
	out := map[string]bool{}
	for _, t := range s.tools {
		if c.HasScope(t.scope) {
			out[t.name] = true
		}
	}
	return out
}

// instructions tell the client whom the tools act as.
func instructions(c *auth.Caller) string {
	who := "an API key, with its scopes"
	if c.IsMember() {
		who = fmt.Sprintf("a member of the organization with the %s role", c.Role)
	}
	return "Licentia issues and checks software licences. These tools act on one organization's products, licences, " +
		"payment-provider mappings, webhooks and team, as " + who + "; every change is audited. A refused call returns " +
		"the API's error object: match on error.code."
}

// errAs returns err's contract error, or internal_error.
func errAs(err error) *licentia.Error {
	if e, ok := errors.AsType[*licentia.Error](err); ok {
		return e
	}
	return licentia.Errorf(licentia.CodeInternal, "An unexpected error occurred. Retry later with backoff.")
}
