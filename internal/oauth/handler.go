package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/web"
)

// maxForm bounds a token or revocation request's body: a few short
// parameters.
const maxForm = 16 << 10

// Handler serves the metadata documents and the register, token and revoke
// endpoints. The authorize endpoint needs the console's sessions, so the
// console serves it.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /.well-known/oauth-authorization-server", s.endpoint(s.serveMetadata))
	mux.Handle("GET /.well-known/oauth-protected-resource", s.endpoint(s.serveProtectedResource))
	mux.Handle("GET /.well-known/oauth-protected-resource"+ResourcePath, s.endpoint(s.serveProtectedResource))
	mux.Handle("POST /oauth/register", s.endpoint(s.register))
	mux.Handle("POST /oauth/token", s.endpoint(s.token))
	mux.Handle("POST /oauth/revoke", s.endpoint(s.revoke))
	for _, p := range []string{"/oauth/register", "/oauth/token", "/oauth/revoke"} {
		mux.Handle(p, s.endpoint(methodNotAllowed("POST")))
	}
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource" + ResourcePath} {
		mux.Handle(p, s.endpoint(methodNotAllowed("GET, HEAD")))
	}
	mux.Handle("/oauth/", s.endpoint(func(http.ResponseWriter, *http.Request) error {
		return &Error{Code: ErrInvalidRequest, Description: "There is no endpoint here.", Status: http.StatusNotFound}
	}))
	return s.middleware(mux)
}

// endpoint adapts a handler that returns its refusal, written in RFC 6749
// form.
func (s *Service) endpoint(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

func methodNotAllowed(allow string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, _ *http.Request) error {
		w.Header().Set("Allow", allow)
		return &Error{Code: ErrInvalidRequest, Description: "This endpoint takes " + allow + " only.", Status: http.StatusMethodNotAllowed}
	}
}

type ctxKey int

const requestIDKey ctxKey = iota

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// middleware wraps every request, in this order: the headers every answer
// carries, a request id, the request's deadline, panic recovery and the
// access log, which names the route pattern and never a parameter.
//
// Answers are never stored (RFC 6749, section 5.1), and any origin may
// read them: a client running in a browser discovers, registers and
// exchanges codes across origins, and these endpoints use no cookie, so
// the open CORS policy lends no one the member's session.
func (s *Service) middleware(next http.Handler) http.Handler {
	timeout := s.timeout
	if timeout <= 0 {
		timeout = web.DefaultDatabaseTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := licentia.NewID()
		h := w.Header()
		h.Set("X-Request-Id", id)
		h.Set("Cache-Control", "no-store")
		h.Set("Pragma", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
			h.Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), requestIDKey, id), timeout)
		defer cancel()
		r = r.WithContext(ctx)
		web.Observed{Log: s.log, Clock: s.clock, Metrics: s.metrics, Server: "oauth", Message: "oauth request",
			Pattern: func(r *http.Request) string { return r.Pattern },
			Fail:    func(w http.ResponseWriter, r *http.Request, _ any) { s.writeError(w, r, errServer) },
		}.Serve(w, r, id, next)
	})
}

// writeError writes a refusal as { "error", "error_description" }. Anything
// else is 500 server_error with a fixed description; its cause is logged
// with the request id, never sent.
func (s *Service) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		s.log.LogAttrs(r.Context(), slog.LevelError, "oauth request failed",
			slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
		e = errServer
	}
	if e.Status == http.StatusUnauthorized {
		if _, _, basic := r.BasicAuth(); basic {
			// A client that sent HTTP Basic is told which scheme failed
			// (RFC 6749, section 5.2).
			w.Header().Set("WWW-Authenticate", `Basic realm="licentia"`)
		}
	}
	writeJSON(w, e.status(), e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (s *Service) serveMetadata(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, s.Metadata())
	return nil
}

func (s *Service) serveProtectedResource(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, s.ProtectedResource())
	return nil
}

// register answers POST /oauth/register: a JSON body of client metadata,
// at most maxRegistrationBody bytes, from a client address within the
// registration limit.
func (s *Service) register(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	res, err := s.limiter.Allow(ctx, ratelimit.OAuthRegister, ratelimit.ClientSubject(web.ClientAddr(r, s.proxies)))
	if err != nil {
		// A limiter that fails lets the request through, as the API does.
		s.log.WarnContext(ctx, "rate limiter unavailable", "request_id", requestID(ctx), "error", err.Error())
	} else if !res.Allowed {
		secs := max(int64((res.Reset+time.Second-1)/time.Second), 1)
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		return &Error{Code: ErrTemporarilyUnavailable, Status: http.StatusTooManyRequests,
			Description: "Too many registrations from this address; try again in " + strconv.FormatInt(secs, 10) + " seconds."}
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return refuse(ErrInvalidClientMetadata, "The registration must be a JSON object (Content-Type: application/json).")
	}
	tooLarge := &Error{Code: ErrInvalidClientMetadata, Status: http.StatusRequestEntityTooLarge,
		Description: "The registration is over " + strconv.Itoa(maxRegistrationBody) + " bytes."}
	if r.ContentLength > maxRegistrationBody {
		return tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRegistrationBody))
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return tooLarge
	}
	if err != nil {
		return refuse(ErrInvalidClientMetadata, "The registration could not be read.")
	}
	var in oauthex.ClientRegistrationMetadata
	if err := json.Unmarshal(body, &in); err != nil {
		return refuse(ErrInvalidClientMetadata, "The registration must be a JSON object of client metadata (RFC 7591).")
	}
	out, err := s.Register(ctx, in)
	if err != nil {
		return err
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "oauth client registered",
		slog.String("request_id", requestID(ctx)), slog.String("client_id", out.ClientID))
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// token answers POST /oauth/token.
func (s *Service) token(w http.ResponseWriter, r *http.Request) error {
	form, clientID, err := readForm(w, r)
	if err != nil {
		return err
	}
	out, err := s.Token(r.Context(), clientID, form)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// revoke answers POST /oauth/revoke: 200 with no body, whether the token
// was known or not (RFC 7009, section 2.2).
func (s *Service) revoke(w http.ResponseWriter, r *http.Request) error {
	form, clientID, err := readForm(w, r)
	if err != nil {
		return err
	}
	if err := s.Revoke(r.Context(), clientID, form); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// readForm reads a form-encoded body of at most maxForm bytes, and the
// client's id: client_id in the body, or the user of HTTP Basic, which
// some clients send with an empty password. A public client has no secret,
// so a password is refused.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, string, error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return nil, "", refuse(ErrInvalidRequest, "The body must be form-encoded (application/x-www-form-urlencoded).")
	}
	tooLarge := &Error{Code: ErrInvalidRequest, Status: http.StatusRequestEntityTooLarge,
		Description: "The body is over " + strconv.Itoa(maxForm) + " bytes."}
	if r.ContentLength > maxForm {
		return nil, "", tooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, "", tooLarge
		}
		return nil, "", refuse(ErrInvalidRequest, "The body could not be read as a form.")
	}
	form := r.PostForm
	clientID := form.Get("client_id")
	user, pass, basic := r.BasicAuth()
	if !basic {
		return form, clientID, nil
	}
	user, uerr := url.QueryUnescape(user)
	switch {
	case uerr != nil || pass != "":
		return nil, "", &Error{Code: ErrInvalidClient, Status: http.StatusUnauthorized,
			Description: "Clients here are public and have no secret: send client_id alone."}
	case clientID != "" && clientID != user:
		return nil, "", refuse(ErrInvalidRequest, "client_id differs between the body and the Authorization header.")
	}
	return form, user, nil
}
