package web

import (
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
	licentia.CodeActivationRequired:        http.StatusConflict,
	licentia.CodeConcurrencyLimitReached:   http.StatusConflict,
	licentia.CodeLeaseNotFound:             http.StatusNotFound,
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
