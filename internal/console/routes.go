package console

import (
	"io/fs"
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// routes is the console's one route table. Each line of a member's page
// or form names what the member's role must hold: the scope of the API
// route doing the same.
func (s *Server) routes() {
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/console/", http.StatusFound)
	})
	static, _ := fs.Sub(files, "static")
	s.mux.Handle("GET /console/assets/", http.StripPrefix("/console/assets/", http.FileServerFS(static)))
	s.mux.HandleFunc("/console/", s.notFound)

	s.open("GET /console/sign-in", s.signInPage)
	s.openForm("POST /console/sign-in", s.signIn)
	s.openForm("POST /console/sign-out", s.signOut)
	s.open("GET /console/forgot-password", s.forgotPage)
	s.openForm("POST /console/forgot-password", s.forgotPassword)
	s.open("GET /console/setup/{token}", s.linkPage(admin.LinkSetup))
	s.openForm("POST /console/setup/{token}", s.useLink(admin.LinkSetup))
	s.open("GET /console/join/{token}", s.linkPage(admin.LinkInvitation))
	s.openForm("POST /console/join/{token}", s.useLink(admin.LinkInvitation))

	s.open("GET /console/purchase", s.purchasePage)
	s.openForm("POST /console/purchase", s.lookupPurchase)
	s.openForm("POST /console/purchase/free", s.freeMachine)
	s.upload("POST /console/purchase/offline", s.activateOffline)

	s.page("GET /console/{$}", anyMember, s.overview)
	s.form("POST /console/organization", anyMember, s.switchOrganization)

	s.page("GET /console/licences", scope(licentia.ScopeLicencesRead), s.licences)
	s.page("GET /console/licences/export", scope(licentia.ScopeLicencesRead), s.exportLicences)
	s.form("POST /console/licences", scope(licentia.ScopeLicencesWrite), s.issueLicence)
	s.page("GET /console/licences/{id}", scope(licentia.ScopeLicencesRead), s.licence)
	s.form("POST /console/licences/{id}/change", scope(licentia.ScopeLicencesWrite), s.changeLicence)
	s.form("POST /console/licences/{id}/features", scope(licentia.ScopeLicencesWrite), s.changeFeatures)
	s.form("POST /console/licences/{id}/revoke", scope(licentia.ScopeLicencesWrite), s.statusChange(revoke))
	s.form("POST /console/licences/{id}/expire", scope(licentia.ScopeLicencesWrite), s.statusChange(expire))
	s.form("POST /console/licences/{id}/reinstate", scope(licentia.ScopeLicencesWrite), s.statusChange(reinstate))
	s.form("POST /console/licences/{id}/reissue", scope(licentia.ScopeLicencesWrite), s.reissueLicence)
	s.form("POST /console/licences/{id}/anonymise", scope(licentia.ScopeLicencesAnonymise), s.anonymiseLicence)
	s.form("POST /console/licences/{id}/send-key", scope(licentia.ScopeLicencesWrite), s.sendKey)
	s.form("POST /console/activations/{id}/deactivate", scope(licentia.ScopeLicencesWrite), s.deactivateActivation)

	s.page("GET /console/customers", scope(licentia.ScopeLicencesRead), s.customers)

	s.page("GET /console/products", scope(licentia.ScopeProductsRead), s.products)
	s.form("POST /console/products", scope(licentia.ScopeProductsWrite), s.createProduct)
	s.page("GET /console/products/{id}", scope(licentia.ScopeProductsRead), s.product)
	s.form("POST /console/products/{id}", scope(licentia.ScopeProductsWrite), s.updateProduct)
	s.form("POST /console/products/{id}/rotate-signing-key", scope(licentia.ScopeProductsWrite), s.rotateSigningKey)
	s.form("POST /console/products/{id}/retire-public-key", scope(licentia.ScopeProductsWrite), s.retirePublicKey)
	s.form("POST /console/products/{id}/features", scope(licentia.ScopeProductsWrite), s.addFeature)
	s.form("POST /console/products/{id}/features/rename", scope(licentia.ScopeProductsWrite), s.renameFeature)
	s.form("POST /console/products/{id}/features/delete", scope(licentia.ScopeProductsWrite), s.deleteFeature)

	s.page("GET /console/api-keys", apiKeys, s.apiKeys)
	s.form("POST /console/api-keys", apiKeys, s.createAPIKey)
	s.form("POST /console/api-keys/{id}/revoke", apiKeys, s.revokeAPIKey)

	s.page("GET /console/integrations", scope(licentia.ScopeProviderRead), s.integrations)
	s.form("POST /console/integrations", connecting, s.connectIntegration)
	s.page("GET /console/integrations/{id}", scope(licentia.ScopeProviderRead), s.integration)
	s.form("POST /console/integrations/{id}/webhook-secret", connecting, s.setWebhookSecret)
	s.form("POST /console/integrations/{id}/disconnect", connecting, s.disconnectIntegration)
	s.form("POST /console/integrations/{id}/mappings", scope(licentia.ScopeProviderWrite), s.putMapping)
	s.form("POST /console/integrations/{id}/mappings/{providerProductId}/delete", scope(licentia.ScopeProviderWrite), s.deleteMapping)
	s.page("GET /console/orders/held", scope(licentia.ScopeProviderRead), s.heldOrders)
	s.form("POST /console/orders/held/{id}/release", scope(licentia.ScopeProviderWrite), s.releaseHeldOrder)
	s.form("POST /console/orders/held/{id}/drop", scope(licentia.ScopeProviderWrite), s.dropHeldOrder)

	s.page("GET /console/webhooks", scope(licentia.ScopeWebhooksRead), s.webhooks)
	s.form("POST /console/webhooks", scope(licentia.ScopeWebhooksWrite), s.addWebhook)
	s.page("GET /console/webhooks/{id}", scope(licentia.ScopeWebhooksRead), s.webhook)
	s.form("POST /console/webhooks/{id}", scope(licentia.ScopeWebhooksWrite), s.updateWebhook)
	s.form("POST /console/webhooks/{id}/rotate-secret", scope(licentia.ScopeWebhooksWrite), s.rotateWebhookSecret)
	s.form("POST /console/webhooks/{id}/delete", scope(licentia.ScopeWebhooksWrite), s.deleteWebhook)
	s.form("POST /console/webhooks/{id}/test", scope(licentia.ScopeWebhooksWrite), s.sendTestEvent)
	s.form("POST /console/webhooks/{id}/deliveries/{deliveryId}/retry", scope(licentia.ScopeWebhooksWrite), s.retryDelivery)

	s.page("GET /console/team", scope(licentia.ScopeMembersRead), s.team)
	s.form("POST /console/team/invitations", scope(licentia.ScopeMembersWrite), s.invite)
	s.form("POST /console/team/invitations/{id}/revoke", scope(licentia.ScopeMembersWrite), s.revokeInvitation)
	s.form("POST /console/team/members/{id}/role", scope(licentia.ScopeMembersWrite), s.changeRole)
	s.form("POST /console/team/members/{id}/remove", scope(licentia.ScopeMembersWrite), s.removeMember)

	s.page("GET /console/branding", anyMember, s.brandingSettings)
	s.form("POST /console/branding", branding, s.saveBranding)

	s.page("GET /console/audit", scope(licentia.ScopeAuditRead), s.audit)

	s.page("GET /console/assistants", anyMember, s.assistants)
	s.form("POST /console/assistants/{id}/revoke", anyMember, s.revokeGrant)
	if s.oauth != nil {
		s.open("GET /oauth/authorize", s.authorizePage)
		s.openForm("POST /oauth/authorize", s.authorize)
	}
}
