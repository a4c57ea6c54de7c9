// Package licentia holds the domain of the licensing service: its records,
// codes, scopes and plans, and the rules that need no I/O.
package licentia

import (
	"errors"
	"fmt"
)

// Code is a contract error code. Clients match on it, so a code never changes.
type Code string

// The contract's error codes.
const (
	CodeValidationFailed          Code = "validation_failed"
	CodeUnauthorized              Code = "unauthorized"
	CodePlanLimitReached          Code = "plan_limit_reached"
	CodeForbidden                 Code = "forbidden"
	CodeInsufficientScope         Code = "insufficient_scope"
	CodeInsufficientRole          Code = "insufficient_role"
	CodeNotFound                  Code = "not_found"
	CodeMethodNotAllowed          Code = "method_not_allowed"
	CodeLicenceNotFound           Code = "licence_not_found"
	CodeProductNotFound           Code = "product_not_found"
	CodePublicKeyNotFound         Code = "public_key_not_found"
	CodeIntegrationNotFound       Code = "integration_not_found"
	CodeMappingNotFound           Code = "mapping_not_found"
	CodeWebhookEndpointNotFound   Code = "webhook_endpoint_not_found"
	CodeWebhookDeliveryNotFound   Code = "webhook_delivery_not_found"
	CodeMemberNotFound            Code = "member_not_found"
	CodeInvitationNotFound        Code = "invitation_not_found"
	CodePurchaseNotFound          Code = "purchase_not_found"
	CodeConflict                  Code = "conflict"
	CodeLicenceAnonymised         Code = "licence_anonymised"
	CodeProductReserved           Code = "product_reserved"
	CodeInvitationNotPending      Code = "invitation_not_pending"
	CodeSeatLimitReached          Code = "seat_limit_reached"
	CodeActivationRequired        Code = "activation_required"
	CodeConcurrencyLimitReached   Code = "concurrency_limit_reached"
	CodeLeaseNotFound             Code = "lease_not_found"
	CodeIdempotencyKeyInUse       Code = "idempotency_key_in_use"
	CodeIdempotencyKeyReused      Code = "idempotency_key_reused"
	CodeLicenceRevoked            Code = "licence_revoked"
	CodeLicenceExpired            Code = "licence_expired"
	CodePayloadTooLarge           Code = "payload_too_large"
	CodeRequestTimeout            Code = "request_timeout"
	CodeLicenceKeyInvalid         Code = "licence_key_invalid"
	CodeLicenceWrongProduct       Code = "licence_wrong_product"
	CodeWebhookSignatureInvalid   Code = "webhook_signature_invalid"
	CodeProviderTokenInvalid      Code = "provider_token_invalid"
	CodeRateLimited               Code = "rate_limited"
	CodeInternal                  Code = "internal_error"
	CodeProviderUnavailable       Code = "provider_unavailable"
	CodeProductUnavailable        Code = "product_unavailable"
	CodeSigningKeysNotConfigured  Code = "signing_keys_not_configured"
	CodeIntegrationsNotConfigured Code = "integrations_not_configured"
	CodeWebhooksNotConfigured     Code = "webhooks_not_configured"
	CodeServiceUnavailable        Code = "service_unavailable"
)

// Codes lists every contract code, so tests can hold each to a status, the
// OpenAPI document and docs/errors.md.
var Codes = []Code{
	CodeValidationFailed, CodeUnauthorized, CodePlanLimitReached, CodeForbidden,
	CodeInsufficientScope, CodeInsufficientRole, CodeNotFound, CodeMethodNotAllowed,
	CodeLicenceNotFound, CodeProductNotFound, CodePublicKeyNotFound, CodeIntegrationNotFound,
	CodeMappingNotFound, CodeWebhookEndpointNotFound, CodeWebhookDeliveryNotFound,
	CodeMemberNotFound, CodeInvitationNotFound, CodePurchaseNotFound, CodeConflict,
	CodeLicenceAnonymised, CodeProductReserved, CodeInvitationNotPending, CodeSeatLimitReached,
	CodeActivationRequired, CodeConcurrencyLimitReached, CodeLeaseNotFound,
	CodeIdempotencyKeyInUse, CodeIdempotencyKeyReused,
	CodeLicenceRevoked, CodeLicenceExpired, CodePayloadTooLarge, CodeRequestTimeout, CodeLicenceKeyInvalid,
	CodeLicenceWrongProduct, CodeWebhookSignatureInvalid, CodeProviderTokenInvalid, CodeRateLimited, CodeInternal,
	CodeProviderUnavailable, CodeProductUnavailable, CodeSigningKeysNotConfigured,
	CodeIntegrationsNotConfigured, CodeWebhooksNotConfigured, CodeServiceUnavailable,
}

// Error is the one error type that carries a contract code. Message is safe
// to show to clients; Err is the cause, logged and never sent.
type Error struct {
	Code    Code
	Message string
	Details map[string]any
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the contract code of err, or CodeInternal for any error
// that does not carry one.
func ErrorCode(err error) Code {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return CodeInternal
}

// Issue is one problem found in a request: a JSON pointer (`/limit_count`),
// `query.<name>` or `path.<name>`, and a message.
type Issue struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Issues collects validation problems so that every one is reported at once.
type Issues []Issue

// Add records a problem at path.
func (is *Issues) Add(path, format string, args ...any) {
	*is = append(*is, Issue{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Err returns a validation_failed error carrying the issues, or nil when there are none.
func (is Issues) Err() error {
	if len(is) == 0 {
		return nil
	}
	return &Error{
		Code:    CodeValidationFailed,
		Message: "The request is not valid.",
		Details: map[string]any{"issues": []Issue(is)},
	}
}

// PlanLimit returns the plan_limit_reached error for resource (for example
// "api_keys") with the plan's limit and the count in use.
func PlanLimit(plan PlanID, resource string, limit, count int64) *Error {
	return &Error{
		Code:    CodePlanLimitReached,
		Message: fmt.Sprintf("The %s plan allows %d %s.", plan, limit, resource),
		Details: map[string]any{"plan": string(plan), "resource": resource, "limit": limit, "count": count},
	}
}

// Merge adds the issues of more whose path has no issue yet, so that a
// field reported while decoding is not reported again by its rule.
func (is *Issues) Merge(more Issues) {
	seen := map[string]bool{}
	for _, i := range *is {
		seen[i.Path] = true
	}
	for _, i := range more {
		if !seen[i.Path] {
			*is = append(*is, i)
		}
	}
}
