package admin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// TestOperationsValidate: each input rule is the operation's. Called
// directly, without HTTP, an operation refuses what the API refuses, with
// validation_failed and the same issue paths and messages, before it reads
// or writes anything.
func TestOperationsValidate(t *testing.T) {
	f := newFixture(t)
	actor := licentia.OperatorActor
	const (
		refRule  = "must be 1 to 200 printable ASCII characters"
		idRule   = "must be 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen"
		timeRule = "must be in the future"
	)
	licence := func(edit func(*admin.NewLicence)) func(context.Context) error {
		in := admin.NewLicence{ProductID: str("desk-app"), Email: str("ada@example.com")}
		edit(&in)
		return func(ctx context.Context) error { _, err := f.svc.IssueLicence(ctx, actor, "org", in); return err }
	}
	find := func(q admin.FindQuery) func(context.Context) error {
		return func(ctx context.Context) error { _, err := f.svc.FindLicences(ctx, "org", q); return err }
	}
	product := func(edit func(*admin.NewProduct)) func(context.Context) error {
		major := int64(1)
		in := admin.NewProduct{ID: str("desk-app"), Name: str("Desk"), KeyPrefix: str("DESK"), CurrentMajor: &major}
		edit(&in)
		return func(ctx context.Context) error { _, err := f.svc.CreateProduct(ctx, actor, "org", in); return err }
	}
	patch := func(in admin.ProductPatch) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := f.svc.UpdateProduct(ctx, actor, "org", "desk-app", in)
			return err
		}
	}
	past := start.Add(-time.Hour)
	for _, tt := range []struct {
		name string
		call func(context.Context) error
		want []string
	}{
		{"issue: product_id and email required", licence(func(in *admin.NewLicence) { in.ProductID, in.Email = nil, nil }),
			[]string{"/product_id is required", "/email is required"}},
		{"issue: product_id shape", licence(func(in *admin.NewLicence) { in.ProductID = str("Desk-app") }), []string{"/product_id " + idRule}},
		{"issue: email", licence(func(in *admin.NewLicence) { in.Email = str("nobody") }), []string{"/email must contain exactly one @"}},
		{"issue: id", licence(func(in *admin.NewLicence) { in.ID = str("lic_1") }), []string{"/id must be a UUID"}},
		{"issue: limit_kind", licence(func(in *admin.NewLicence) { in.LimitKind = new(licentia.LimitKind("users")) }), []string{"/limit_kind must be seats or machines"}},
		{"issue: limit_count range", licence(func(in *admin.NewLicence) { in.LimitCount = new(int64(0)) }), []string{"/limit_count must be an integer from 1 to 4294967295"}},
		{"issue: major range", licence(func(in *admin.NewLicence) { in.Major = new(int64(65536)) }), []string{"/major must be an integer from 1 to 65535"}},
		{"issue: expires_at", licence(func(in *admin.NewLicence) { in.ExpiresAt = &past }), []string{"/expires_at " + timeRule}},
		{"issue: trial", licence(func(in *admin.NewLicence) { in.Trial = new(true) }), []string{"/expires_at is required for a trial, which ends with the key"}},
		{"issue: external_ref", licence(func(in *admin.NewLicence) { in.ExternalRef = str("") }), []string{"/external_ref " + refRule}},
		{"find: at least one of email, q, external_ref", find(admin.FindQuery{ProductID: str("desk-app")}),
			[]string{"query give at least one of email, q, external_ref"}},
		{"find: external_ref needs product_id", find(admin.FindQuery{ExternalRef: str("order-1")}), []string{"query.product_id is required with external_ref"}},
		{"find: email length", find(admin.FindQuery{Email: str(strings.Repeat("a", 321))}), []string{"query.email must be 1 to 320 characters"}},
		{"find: q length", find(admin.FindQuery{Q: str("")}), []string{"query.q must be 1 to 2048 characters"}},
		{"find: external_ref length", find(admin.FindQuery{ExternalRef: str(strings.Repeat("r", 201)), ProductID: str("desk-app")}),
			[]string{"query.external_ref must be 1 to 200 characters"}},
		{"find: product_id length", find(admin.FindQuery{Email: str("ada@example.com"), ProductID: str(strings.Repeat("p", 64))}),
			[]string{"query.product_id must be 1 to 63 characters"}},
		{"find: product_id shape", find(admin.FindQuery{Email: str("ada@example.com"), ProductID: str("Desk")}), []string{"query.product_id " + idRule}},
		{"find: external_ref shape", find(admin.FindQuery{ExternalRef: str("commande-é"), ProductID: str("desk-app")}), []string{"query.external_ref " + refRule}},
		{"find: state", find(admin.FindQuery{Email: str("ada@example.com"), State: new(licentia.State("gone"))}),
			[]string{"query.state must be one of [active trial expired revoked]"}},
		{"count: product_id shape", func(ctx context.Context) error {
			_, _, err := f.svc.CountLicences(ctx, "org", admin.CountQuery{ProductID: str("Desk")})
			return err
		}, []string{"query.product_id " + idRule}},
		{"revoke: reason", func(ctx context.Context) error {
			_, err := f.svc.RevokeLicence(ctx, actor, "org", "id", admin.Reason(""))
			return err
		},
			[]string{"/reason must be 1 to 500 characters"}},
		{"expire: reason", func(ctx context.Context) error {
			_, err := f.svc.ExpireLicence(ctx, actor, "org", "id", admin.Reason(strings.Repeat("r", 501)))
			return err
		}, []string{"/reason must be 1 to 500 characters"}},
		{"anonymise: confirm", func(ctx context.Context) error {
			_, err := f.svc.AnonymiseLicence(ctx, actor, "org", "id", admin.Anonymise{Confirm: new(false)})
			return err
		}, []string{"/confirm must be true"}},
		{"create product: required", product(func(in *admin.NewProduct) { *in = admin.NewProduct{} }),
			[]string{"/id is required", "/name is required", "/key_prefix is required", "/current_major is required"}},
		{"create product: current_major range", product(func(in *admin.NewProduct) { in.CurrentMajor = new(int64(0)) }),
			[]string{"/current_major must be an integer from 1 to 65535"}},
		{"create product: machines_per_seat range", product(func(in *admin.NewProduct) { in.MachinesPerSeat = new(int64(1001)) }),
			[]string{"/machines_per_seat must be an integer from 1 to 1000"}},
		{"create product: id shape", product(func(in *admin.NewProduct) { in.ID = str("Desk") }), []string{"/id " + idRule}},
		{"update product: at least one field", patch(admin.ProductPatch{}), []string{" give at least one of name, current_major, machines_per_seat, heartbeat_interval_seconds, machine_match, transfers_per_30_days, max_concurrent, lease_ttl_seconds, max_borrow_hours"}},
		{"update product: current_major range", patch(admin.ProductPatch{CurrentMajor: new(int64(65536))}),
			[]string{"/current_major must be an integer from 1 to 65535"}},
		{"update product: machines_per_seat range", patch(admin.ProductPatch{MachinesPerSeat: new(int64(0))}),
			[]string{"/machines_per_seat must be an integer from 1 to 1000"}},
		{"update product: heartbeat_interval_seconds range", patch(admin.ProductPatch{HeartbeatIntervalSeconds: new(int64(59))}),
			[]string{"/heartbeat_interval_seconds must be an integer from 60 to 2592000"}},
		{"create product: heartbeat_interval_seconds range", product(func(in *admin.NewProduct) { in.HeartbeatIntervalSeconds = new(int64(2592001)) }),
			[]string{"/heartbeat_interval_seconds must be an integer from 60 to 2592000"}},
		{"retire key: hex", func(ctx context.Context) error {
			_, err := f.svc.RetirePublicKey(ctx, actor, "org", "desk-app", admin.RetireKey{PublicKey: str("abc")})
			return err
		},
			[]string{"/public_key must be 64 hexadecimal characters"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, issueMessages(t, tt.call(t.Context()))); diff != "" {
				t.Errorf("issues (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequestValidate: the checks an operation's HTTP route makes on its
// body (the erasure's confirmation, a rotation's fields) are its request
// struct's, with the API's paths and messages.
func TestRequestValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		is   licentia.Issues
		want licentia.Issues
	}{
		{"anonymise: confirm required", (&admin.Anonymise{}).Validate(), licentia.Issues{{Path: "/confirm", Message: "is required"}}},
		{"anonymise: confirm false", (&admin.Anonymise{Confirm: new(false)}).Validate(), licentia.Issues{{Path: "/confirm", Message: "must be true"}}},
		{"anonymise: confirm true", (&admin.Anonymise{Confirm: new(true)}).Validate(), nil},
		{"status change: reason required", (&admin.ChangeStatus{}).Validate(), licentia.Issues{{Path: "/reason", Message: "is required"}}},
		{"rotate: nothing required", (&admin.RotateKey{}).Validate(), nil},
		{"licence change: at least one field", (&admin.LicenceChange{}).Validate(),
			licentia.Issues{{Path: "", Message: "give at least one of limit_kind, limit_count, expires_at, major, features, transfers_per_30_days, max_concurrent"}}},
		{"licence change: perpetual is a change", new(admin.Perpetual()).Validate(), nil},
		{"licence change: a past expiry is allowed", (&admin.LicenceChange{ExpiresAt: new(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))}).Validate(), nil},
		{"licence change: ranges and kind", (&admin.LicenceChange{LimitKind: new(licentia.LimitKind("users")), LimitCount: new(int64(0)), Major: new(int64(65536))}).Validate(),
			licentia.Issues{{Path: "/limit_count", Message: "must be an integer from 1 to 4294967295"},
				{Path: "/major", Message: "must be an integer from 1 to 65535"}, {Path: "/limit_kind", Message: "must be seats or machines"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.is); diff != "" {
				t.Errorf("Validate() (-want +got):\n%s", diff)
			}
		})
	}
}
