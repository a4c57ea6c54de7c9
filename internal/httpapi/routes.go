package httpapi

import (
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/metrics"
)

// routes is the one route table. Each administration line names its scope,
// so the file reads like the contract's route table; each activation line
// names the route its answers are counted under in the metrics.
func (s *Server) routes() {
	s.operator("GET /healthz", s.healthz)
	s.operator("GET /readyz", s.readyz)
	s.operator("GET /v1/openapi.json", s.openAPI)

	s.handle("GET /v1/admin/products", licentia.ScopeProductsRead, s.listProducts)
	s.handle("POST /v1/admin/products", licentia.ScopeProductsWrite, s.createProduct)
	s.handle("GET /v1/admin/products/{id}", licentia.ScopeProductsRead, s.getProduct)
	s.handle("PATCH /v1/admin/products/{id}", licentia.ScopeProductsWrite, s.patchProduct)
	s.handle("POST /v1/admin/products/{id}/rotate-signing-key", licentia.ScopeProductsWrite, s.rotateSigningKey)
	s.handle("POST /v1/admin/products/{id}/retire-public-key", licentia.ScopeProductsWrite, s.retirePublicKey)
	s.handle("GET /v1/admin/products/{id}/features", licentia.ScopeProductsRead, s.listFeatures)
	s.handle("PUT /v1/admin/products/{id}/features/{code}", licentia.ScopeProductsWrite, s.putFeature)
	s.handle("DELETE /v1/admin/products/{id}/features/{code}", licentia.ScopeProductsWrite, s.deleteFeature)

	s.handle("POST /v1/admin/licences", licentia.ScopeLicencesWrite, s.issueLicence)
	s.handle("GET /v1/admin/licences", licentia.ScopeLicencesRead, s.findLicences)
	s.handle("GET /v1/admin/licences/counts", licentia.ScopeLicencesRead, s.countLicences)
	s.handle("GET /v1/admin/licences/list", licentia.ScopeLicencesRead, s.listLicences)
	s.handle("GET /v1/admin/licences/export", licentia.ScopeLicencesRead, s.exportLicences)
	s.handle("GET /v1/admin/licences/{id}", licentia.ScopeLicencesRead, s.getLicence)
	s.handle("PATCH /v1/admin/licences/{id}", licentia.ScopeLicencesWrite, s.patchLicence)
	s.handle("GET /v1/admin/licences/{id}/audit", licentia.ScopeAuditRead, s.licenceAudit)
	s.handle("POST /v1/admin/licences/{id}/revoke", licentia.ScopeLicencesWrite, s.statusChange(s.admin.RevokeLicence))
	s.handle("POST /v1/admin/licences/{id}/expire", licentia.ScopeLicencesWrite, s.statusChange(s.admin.ExpireLicence))
	s.handle("POST /v1/admin/licences/{id}/reinstate", licentia.ScopeLicencesWrite, s.statusChange(s.admin.ReinstateLicence))
	s.handle("POST /v1/admin/licences/{id}/anonymise", licentia.ScopeLicencesAnonymise, s.anonymiseLicence)
	s.handle("POST /v1/admin/licences/{id}/reissue", licentia.ScopeLicencesWrite, s.reissueLicence)
	s.handle("POST /v1/admin/licences/{id}/send-key", licentia.ScopeLicencesWrite, s.sendKey)
	s.handle("POST /v1/admin/activations/{id}/deactivate", licentia.ScopeLicencesWrite, s.deactivateActivation)

	s.public("POST /v1/activations", metrics.RouteActivate, s.activate)
	s.public("POST /v1/activations/offline", metrics.RouteActivateOffline, s.activateOffline)
	s.public("POST /v1/activations/status", metrics.RouteStatus, s.activationStatus)
	s.public("POST /v1/activations/deactivate", metrics.RouteDeactivate, s.deactivate)
	s.public("POST /v1/leases", metrics.RouteLease, s.takeLease)
	s.public("POST /v1/leases/renew", metrics.RouteLeaseRenew, s.renewLease)
	s.public("POST /v1/leases/release", metrics.RouteLeaseRelease, s.releaseLease)

	s.lookup("GET /v1/purchases/lookup", s.lookupPurchaseQuery)
	s.lookup("POST /v1/purchases/lookup", s.lookupPurchase)

	s.provider("POST /v1/providers/{integration_id}/webhooks", s.providerWebhook)

	// An AI assistant may read endpoints and deliveries and retry a
	// delivery, never add, change or remove an endpoint or replace its secret.
	s.handle("GET /v1/admin/webhooks", licentia.ScopeWebhooksRead, s.listWebhooks)
	s.handle("POST /v1/admin/webhooks", licentia.ScopeWebhooksWrite, notForAssistants(s.addWebhook))
	s.handle("GET /v1/admin/webhooks/{id}", licentia.ScopeWebhooksRead, s.getWebhook)
	s.handle("PATCH /v1/admin/webhooks/{id}", licentia.ScopeWebhooksWrite, notForAssistants(s.patchWebhook))
	s.handle("DELETE /v1/admin/webhooks/{id}", licentia.ScopeWebhooksWrite, notForAssistants(s.deleteWebhook))
	s.handle("POST /v1/admin/webhooks/{id}/rotate-secret", licentia.ScopeWebhooksWrite, notForAssistants(s.rotateWebhookSecret))
	s.handle("GET /v1/admin/webhooks/{id}/deliveries", licentia.ScopeWebhooksRead, s.listDeliveries)
	s.handle("POST /v1/admin/webhooks/{id}/deliveries/{deliveryId}/retry", licentia.ScopeWebhooksWrite, s.retryDelivery)

	s.handle("GET /v1/admin/organization", licentia.ScopeOrganizationRead, s.getOrganization)
	s.handle("GET /v1/admin/members", licentia.ScopeMembersRead, s.listMembers)
	s.handle("GET /v1/admin/invitations", licentia.ScopeMembersRead, s.listInvitations)

	// Team changes are made only by a member (through an AI assistant); no
	// key holds members:write, so every key gets 403 insufficient_scope.
	s.handle("POST /v1/admin/invitations", licentia.ScopeMembersWrite, s.invite)
	s.handle("POST /v1/admin/invitations/{id}/revoke", licentia.ScopeMembersWrite, s.revokeInvitation)
	s.handle("PUT /v1/admin/members/{id}/role", licentia.ScopeMembersWrite, s.changeMemberRole)
	s.handle("DELETE /v1/admin/members/{id}", licentia.ScopeMembersWrite, s.removeMember)

	s.handle("GET /v1/admin/integrations", licentia.ScopeProviderRead, s.listIntegrations)
	s.handle("GET /v1/admin/integrations/{id}/mappings", licentia.ScopeProviderRead, s.listMappings)
	s.handle("PUT /v1/admin/integrations/{id}/mappings/{providerProductId}", licentia.ScopeProviderWrite, s.putMapping)
	s.handle("DELETE /v1/admin/integrations/{id}/mappings/{providerProductId}", licentia.ScopeProviderWrite, s.deleteMapping)
	s.handle("GET /v1/admin/orders/held", licentia.ScopeProviderRead, s.listHeldOrders)
	s.handle("POST /v1/admin/orders/held/{id}/release", licentia.ScopeProviderWrite, s.releaseHeldOrder)
	s.handle("DELETE /v1/admin/orders/held/{id}", licentia.ScopeProviderWrite, s.dropHeldOrder)
}
