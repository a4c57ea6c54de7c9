package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/licentia/licentia/internal/licentia"
)

// statuses maps every contract code to its HTTP status. It is the only place
// that does.
var statuses = map[licentia.Code]int{
	licentia.CodeValidationFailed:          http.StatusBadRequest,
	licentia.CodeWebhookSignatureInvalid:   http.StatusBadRequest,
	licentia.CodeUnauthorized:              http.StatusUnauthorized,
	licentia.CodePlanLimitReached:          http.StatusPaymentRequired,
	licentia.CodeForbidden:                 http.StatusForbidden,
	licentia.CodeInsufficientScope:         http.StatusForbidden,
	licentia.CodeInsufficientRole:          http.StatusForbidden,
	licentia.CodeLicenceRevoked:            http.StatusForbidden,
	licentia.CodeLicenceExpired:            http.StatusForbidden,
	licentia.CodeNotFound:                  http.StatusNotFound,
	licentia.CodeLicenceNotFound:           http.StatusNotFound,
	licentia.CodeProductNotFound:           http.StatusNotFound,
	licentia.CodePublicKeyNotFound:         http.StatusNotFound,
	licentia.CodeIntegrationNotFound:       http.StatusNotFound,
	licentia.CodeMappingNotFound:           http.StatusNotFound,
	licentia.CodeWebhookEndpointNotFound:   http.StatusNotFound,
	licentia.CodeWebhookDeliveryNotFound:   http.StatusNotFound,
	licentia.CodeMemberNotFound:            http.StatusNotFound,
	licentia.CodeInvitationNotFound:        http.StatusNotFound,
	licentia.CodePurchaseNotFound:          http.StatusNotFound,
	licentia.CodeMethodNotAllowed:          http.StatusMethodNotAllowed,
	licentia.CodeRequestTimeout:            http.StatusRequestTimeout,
	licentia.CodeConflict:                  http.StatusConflict,
	licentia.CodeLicenceAnonymised:         http.StatusConflict,
	licentia.CodeProductReserved:           http.StatusConflict,
	licentia.CodeInvitationNotPending:      http.StatusConflict,
	licentia.CodeSeatLimitReached:          http.StatusConflict,
	licentia.CodeIdempotencyKeyInUse:       http.StatusConflict,
	licentia.CodeIdempotencyKeyReused:      http.StatusUnprocessableEntity,
	licentia.CodePayloadTooLarge:           http.StatusRequestEntityTooLarge,
	licentia.CodeLicenceKeyInvalid:         http.StatusUnprocessableEntity,
	licentia.CodeLicenceWrongProduct:       http.StatusUnprocessableEntity,
	licentia.CodeProviderTokenInvalid:      http.StatusUnprocessableEntity,
	licentia.CodeRateLimited:               http.StatusTooManyRequests,
	licentia.CodeInternal:                  http.StatusInternalServerError,
	licentia.CodeProviderUnavailable:       http.StatusBadGateway,
	licentia.CodeProductUnavailable:        http.StatusServiceUnavailable,
	licentia.CodeSigningKeysNotConfigured:  http.StatusServiceUnavailable,
	licentia.CodeIntegrationsNotConfigured: http.StatusServiceUnavailable,
	licentia.CodeWebhooksNotConfigured:     http.StatusServiceUnavailable,
	licentia.CodeServiceUnavailable:        http.StatusServiceUnavailable,
}

// Status returns the HTTP status of a contract code.
func Status(c licentia.Code) int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

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
	status := Status(obj.Code)
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
