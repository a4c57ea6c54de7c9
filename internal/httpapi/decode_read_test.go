package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/licentia"
)

// rawExchange sends req over a new connection to srv, byte for byte; with
// closeWrite it then closes its side for writing, as a client that stops
// sending does, and otherwise keeps it open. It returns the answer.
func rawExchange(t *testing.T, srv *httptest.Server, req string, closeWrite bool) *resp {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatalf("Dial() error = %v", err)
	}
	defer conn.Close()
	// Only a guard against a server that never answers; no assertion
	// depends on it.
	conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatalf("write request: %v", err)
	}
	if closeWrite {
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatalf("CloseWrite() error = %v", err)
		}
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read answer body: %v", err)
	}
	return &resp{status: res.StatusCode, header: res.Header, body: b}
}

// TestBodyNotFinished: a body that ends before its Content-Length or its
// last chunk answers 400 validation_failed, and one that has not arrived
// when the read deadline passes 408 request_timeout, on a real connection.
// Neither is a server failure: nothing is logged as an error, and the
// access line carries the answer's status.
func TestBodyNotFinished(t *testing.T) {
	e := newLicenceEnv(t)
	// A server whose read deadline is short, so that the test need not wait
	// long; its header deadline is long, so only the body can miss it. Its
	// write deadline outlasts the read deadline as serve's does.
	slow := httptest.NewUnstartedServer(e.api)
	slow.Config.ReadHeaderTimeout = time.Minute
	slow.Config.ReadTimeout = 50 * time.Millisecond
	slow.Config.WriteTimeout = slow.Config.ReadTimeout + httpapi.WriteTimeout - httpapi.ReadTimeout
	slow.Start()
	t.Cleanup(slow.Close)

	activate := "POST /v1/activations HTTP/1.1\r\nHost: licentia.test\r\nContent-Type: application/json\r\n"
	issue := "POST /v1/admin/licences HTTP/1.1\r\nHost: licentia.test\r\nContent-Type: application/json\r\nAuthorization: Bearer " + e.allKey + "\r\n"
	part := `{"product_id":"desk-app","em`
	chunk := `{"product_id":"desk-app",`
	cut := fmt.Sprintf("%x\r\n%s\r\n", len(chunk), chunk)
	for _, tt := range []struct {
		name       string
		srv        *httptest.Server
		path       string
		req        string
		closeWrite bool
		wantStatus int
		wantCode   licentia.Code
	}{
		{
			name: "activation shorter than its Content-Length", srv: e.srv, path: "/v1/activations",
			req: activate + "Content-Length: 100\r\n\r\n" + part, closeWrite: true,
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
		},
		{
			name: "issue shorter than its Content-Length", srv: e.srv, path: "/v1/admin/licences",
			req: issue + "Content-Length: 100\r\n\r\n" + part, closeWrite: true,
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
		},
		{
			name: "issue chunked without its last chunk", srv: e.srv, path: "/v1/admin/licences",
			req: issue + "Transfer-Encoding: chunked\r\n\r\n" + cut, closeWrite: true,
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
		},
		{
			name: "activation stalled past the read deadline", srv: slow, path: "/v1/activations",
			req:        activate + "Content-Length: 100\r\n\r\n" + part,
			wantStatus: http.StatusRequestTimeout, wantCode: licentia.CodeRequestTimeout,
		},
		{
			name: "issue stalled past the read deadline", srv: slow, path: "/v1/admin/licences",
			req:        issue + "Content-Length: 100\r\n\r\n" + part,
			wantStatus: http.StatusRequestTimeout, wantCode: licentia.CodeRequestTimeout,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			logged := len(e.logs.String())
			r := rawExchange(t, tt.srv, tt.req, tt.closeWrite)
			if r.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", r.status, tt.wantStatus, r.body)
			}
			if got := r.apiError(t); got.Code != tt.wantCode {
				t.Errorf("code = %q, want %q", got.Code, tt.wantCode)
			}
			c := call{method: "POST", path: tt.path, key: e.allKey, body: part, invalid: true}
			validateExchange(t, e.request(t, c, []byte(part)), r, true)
			checkConventions(t, c, r)
			checkLogs(t, e.logs.String()[logged:], tt.wantStatus)
		})
	}
}

// checkLogs fails when a record of logs is at level ERROR, when no access
// line carries status, or when the refusal's cause is not logged at INFO.
func checkLogs(t *testing.T, logs string, status int) {
	t.Helper()
	access, refused := false, false
	for line := range strings.Lines(logs) {
		var rec struct {
			Level  string `json:"level"`
			Msg    string `json:"msg"`
			Status int    `json:"status"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Level == "ERROR" {
			t.Errorf("logged at ERROR: %s", line)
		}
		access = access || rec.Msg == "request" && rec.Status == status
		refused = refused || rec.Msg == "request refused" && rec.Level == "INFO"
	}
	if !access || !refused {
		t.Errorf("logs lack an access line with status %d or an INFO line for the refusal:\n%s", status, logs)
	}
}
