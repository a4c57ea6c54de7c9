// Package storetest is the contract every storage engine meets: Run holds an
// engine to the same codes, ordering, times and isolation as the others, and
// OpenSQLite and OpenPostgres open the test databases the engines' tests pass
// to it.
package storetest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// Run runs the contract suite. open returns a new, empty store for each
// test and closes it in t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	for _, tt := range []struct {
		name string
		run  func(t *testing.T, s store.Store)
	}{
		{"Ping", testPing},
		{"IdempotencyKeys", testIdempotencyKeys},
		{"IdempotencyClaimRace", testIdempotencyClaimRace},
		{"CommitHook", testCommitHook},
		{"Organizations", testOrganizations},
		{"OrganizationConflicts", testOrganizationConflicts},
		{"Members", testMembers},
		{"PendingInvitations", testPendingInvitations},
		{"Settings", testSettings},
		{"LockSetting", testLockSetting},
		{"APIKeys", testAPIKeys},
		{"APIKeyConflicts", testAPIKeyConflicts},
		{"CountLiveAPIKeys", testCountLiveAPIKeys},
		{"RevokeAPIKey", testRevokeAPIKey},
		{"Isolation", testIsolation},
		{"MalformedIDs", testMalformedIDs},
		{"Audit", testAudit},
		{"Times", testTimes},
		{"ReadOwnWrites", testReadOwnWrites},
		{"RollbackOnError", testRollbackOnError},
		{"RollbackOnPanic", testRollbackOnPanic},
		{"LastPlace", testLastPlace},
		{"LeaseSettings", testLeaseSettings},
		{"Leases", testLeases},
		{"LeaseRace", testLeaseRace},
		{"Products", testProducts},
		{"ProductIsolation", testProductIsolation},
		{"CountProducts", testCountProducts},
		{"UpdateProduct", testUpdateProduct},
		{"ProductKeys", testProductKeys},
		{"ResealProductKey", testResealProductKey},
		{"DeleteProduct", testDeleteProduct},
		{"ProductNameUse", testProductNameUse},
		{"ProductConflicts", testProductConflicts},
		{"ProductNeverReused", testProductNeverReused},
		{"ProductRace", testProductRace},
		{"Licences", testLicences},
		{"UpdateLicence", testUpdateLicence},
		{"LicenceConflicts", testLicenceConflicts},
		{"LicenceIsolation", testLicenceIsolation},
		{"LicenceMalformedIDs", testLicenceMalformedIDs},
		{"FindLicences", testFindLicences},
		{"Customers", testCustomers},
		{"ListFilters", testListFilters},
		{"ListPaging", testListPaging},
		{"PurchaseLicences", testPurchaseLicences},
		{"ProviderItems", testProviderItems},
		{"ProviderAddons", testProviderAddons},
		{"PendingEffects", testPendingEffects},
		{"PlanSubscriptionGrace", testPlanSubscriptionGrace},
		{"DerivedStateBoundaries", testDerivedStateBoundaries},
		{"CountLicences", testCountLicences},
		{"IntegrityReads", testIntegrityReads},
		{"SweepSameInstant", testSweepSameInstant},
		{"CountsAsStored", testCountsAsStored},
		{"SweepRace", testSweepRace},
		{"LicenceRollback", testLicenceRollback},
		{"LicencePlanRace", testLicencePlanRace},
		{"Activations", testActivations},
		{"StatusReadsAtOnce", testStatusReadsAtOnce},
		{"AnonymiseActivations", testAnonymiseActivations},
		{"MachineSettings", testMachineSettings},
		{"Components", testComponents},
		{"ReplaceLicence", testReplaceLicence},
		{"ProductFeatures", testProductFeatures},
		{"FeatureLimit", testFeatureLimit},
		{"LicenceGrants", testLicenceGrants},
		{"FeatureGrantRace", testFeatureGrantRace},
		{"Events", testEvents},
		{"LicenceAudit", testLicenceAudit},
		{"AuditPage", testAuditPage},
		{"AuditPageFilters", testAuditPageFilters},
		{"AuditByDay", testAuditByDay},
		{"WebhookEndpoints", testWebhookEndpoints},
		{"WebhookSecrets", testWebhookSecrets},
		{"WebhookSecretRace", testWebhookSecretRace},
		{"DeleteWebhookEndpoint", testDeleteWebhookEndpoint},
		{"WebhookIsolation", testWebhookIsolation},
		{"WebhookMalformedIDs", testWebhookMalformedIDs},
		{"Deliveries", testDeliveries},
		{"EventDeliveries", testEventDeliveries},
		{"QueueDeliveries", testQueueDeliveries},
		{"LockSeat", testLockSeat},
		{"ClaimDeliveries", testClaimDeliveries},
		{"StaleLease", testStaleLease},
		{"LastDeliverySuccess", testLastDeliverySuccess},
		{"CountPendingDeliveries", testCountPendingDeliveries},
		{"FinishAttempts", testFinishAttempts},
		{"RequeueDelivery", testRequeueDelivery},
		{"ClaimRace", testClaimRace},
		{"Branding", testBranding},
		{"MappingKeyMail", testMappingKeyMail},
		{"Mails", testMails},
		{"ClaimMails", testClaimMails},
		{"FinishMail", testFinishMail},
		{"MailClaimRace", testMailClaimRace},
		{"Integrations", testIntegrations},
		{"Mappings", testMappings},
		{"IntegrationIsolation", testIntegrationIsolation},
		{"ProviderEvents", testProviderEvents},
		{"ProviderEventHistory", testProviderEventHistory},
		{"LastUse", testLastUse},
		{"HeldOrders", testHeldOrders},
		{"HeldOrderSettleRace", testHeldOrderSettleRace},
		{"Member", testMember},
		{"Memberships", testMemberships},
		{"SetMemberRole", testSetMemberRole},
		{"DeleteMember", testDeleteMember},
		{"Invitations", testInvitations},
		{"RevokeInvitation", testRevokeInvitation},
		{"AcceptInvitation", testAcceptInvitation},
		{"CountInvitationsSince", testCountInvitationsSince},
		{"TeamMalformedIDs", testTeamMalformedIDs},
		{"Accounts", testAccounts},
		{"SetAccountPassword", testSetAccountPassword},
		{"LoginLinks", testLoginLinks},
		{"Sessions", testSessions},
		{"DeleteStaleSessions", testDeleteStaleSessions},
		{"PortalLinks", testPortalLinks},
		{"PortalSessions", testPortalSessions},
		{"AssistantTokens", testAssistantTokens},
		{"UseAssistantToken", testUseAssistantToken},
		{"UseAssistantTokenRace", testUseAssistantTokenRace},
		{"RevokeGrant", testRevokeGrant},
		{"RevokeMemberGrants", testRevokeMemberGrants},
		{"Grants", testGrants},
		{"OAuthClients", testOAuthClients},
		{"AuthorizationCodes", testAuthorizationCodes},
		{"UseAuthorizationCode", testUseAuthorizationCode},
		{"UseAuthorizationCodeRace", testUseAuthorizationCodeRace},
		{"DeleteExpiredAuthorizationCodes", testDeleteExpiredAuthorizationCodes},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, open(t)) })
	}
}

// base is the suite's "now". Tests never read the clock, so every run writes
// the same instants.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// errRollback ends a transaction a test only wants to look inside.
var errRollback = errors.New("storetest: roll back")

func testPing(t *testing.T, s store.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("Ping() error = %v", err)
	}
}

// inTx runs fn in a transaction that must commit.
func inTx(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.InTx(t.Context(), fn); err != nil {
		t.Fatalf("InTx() error = %v", err)
	}
}

// eachReader runs check against s and inside a transaction of s, rolled back
// afterwards: reads answer alike in and out of transactions. check must not
// stop the test (t.Fatal), which would leave the transaction open.
func eachReader(t *testing.T, s store.Store, check func(t *testing.T, r store.Reader)) {
	t.Helper()
	t.Run("store", func(t *testing.T) { check(t, s) })
	t.Run("tx", func(t *testing.T) {
		err := s.InTx(t.Context(), func(tx store.Tx) error {
			check(t, tx)
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Errorf("InTx() error = %v, want %v", err, errRollback)
		}
	})
}

// wantCode checks that err carries code.
func wantCode(t *testing.T, what string, err error, code licentia.Code) {
	t.Helper()
	if got := licentia.ErrorCode(err); got != code {
		t.Errorf("%s error = %v, want code %s", what, err, code)
	}
}

// wantSame checks that err is exactly the error a missing record gives:
// another organization's record must not be told apart from a missing one.
func wantSame(t *testing.T, what string, err, missing error) {
	t.Helper()
	if err == nil || missing == nil || err.Error() != missing.Error() ||
		licentia.ErrorCode(err) != licentia.ErrorCode(missing) {
		t.Errorf("%s error = %v, want %v, as for a missing record", what, err, missing)
	}
}

// seqID returns the n-th of a run of valid ids that sort in n's order, for
// tests of the id tie-break.
func seqID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

func ptr[T any](v T) *T { return &v }

func newOrganization(slug string) *licentia.Organization {
	return &licentia.Organization{
		ID: licentia.NewID(), Name: "Organization " + slug, Slug: slug, Plan: licentia.PlanFree, CreatedAt: base,
	}
}

func createOrganization(t *testing.T, s store.Store, slug string) *licentia.Organization {
	t.Helper()
	o := newOrganization(slug)
	inTx(t, s, func(tx store.Tx) error { return tx.CreateOrganization(t.Context(), o) })
	return o
}

// newAPIKey returns a live key of orgID with a random prefix and hash.
func newAPIKey(orgID string) *licentia.APIKey {
	hash := make([]byte, 32)
	rand.Read(hash)
	hash[0] = 0 // a zero byte must survive the round trip too
	return &licentia.APIKey{
		ID: licentia.NewID(), OrgID: orgID, Name: "key", Prefix: "lic_" + rand.Text()[:12], Hash: hash,
		Scopes: []licentia.Scope{licentia.ScopeLicencesRead, licentia.ScopeLicencesWrite}, CreatedAt: base,
	}
}

// createAPIKeys stores keys in one transaction.
func createAPIKeys(t *testing.T, s store.Store, keys ...*licentia.APIKey) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, k := range keys {
			if err := tx.CreateAPIKey(t.Context(), k); err != nil {
				return err
			}
		}
		return nil
	})
}
