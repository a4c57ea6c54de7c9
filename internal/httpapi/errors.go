package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code      licentia.Code  `json:"code"`
	Message   string         `json:"message"`
	Details   map[string]any `json:"details,omitempty"`
	RequestID string         `json:"request_id"`
}

// writeError is the only writer of error bodies. An error without a contract
// code is 500 internal_error with a fixed message; its cause is logged with
// the request id and never sent.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	obj := errorObject{RequestID: requestID(r.Context())}
	e, ok := errors.AsType[*licentia.Error](err)
	if !ok || e.Code == licentia.CodeInternal {
		obj.Code, obj.Message = licentia.CodeInternal, "An unexpected error occurred. Retry later with backoff."
	} else {
		obj.Code, obj.Message, obj.Details = e.Code, e.Message, e.Details
	}
	status := web.Status(obj.Code)
	switch {
	case status >= 500:
		s.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
			slog.String("request_id", obj.RequestID), slog.String("code", string(obj.Code)), slog.String("error", err.Error()))
	case ok && e.Err != nil:
		// A refusal with a cause, such as a body the client did not finish
		// sending: the client's doing, not a failure.
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request refused",
			slog.String("request_id", obj.RequestID), slog.String("code", string(obj.Code)), slog.String("error", e.Err.Error()))
	}
	writeJSON(w, status, errorBody{Error: obj})
}
