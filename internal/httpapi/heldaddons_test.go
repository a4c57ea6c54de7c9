package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// TestHeldAddonRelease, on both engines, for Stripe and Paddle: an add-on
// order whose buyer holds no licence of the product it adds to is answered
// 200 and held with reason no_licence_to_add_to; a release naming no
// licence, or a licence id of no licence of the organization, answers 400
// at /adds_to_licence_id; naming the buyer's licence, 201 with that
// licence, now granting the add-on's feature.
func TestHeldAddonRelease(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			for _, p := range shopProviders() {
				t.Run(string(p.name), func(t *testing.T) {
					e := p.env(t, engine == "postgres")
					held := newHeldClient(t, e)
					ctx := t.Context()
					if _, err := e.admin.SaveFeature(ctx, licentia.OperatorActor, e.org.ID, "desk-app", "export-pdf",
						admin.FeatureSave{Name: ptr("Export to PDF")}); err != nil {
						t.Fatal(err)
					}
					e.run(t, scenario{call: call{method: "PUT", path: mappingPath(e.integ, mappedProduct(string(p.name))), key: e.key,
						body: map[string]any{"product_id": "desk-app", "features": []string{"export-pdf"}, "adds_to": "desk-app"}},
						wantStatus: http.StatusOK})
					e.run(t, scenario{call: p.paid(t, e, 1, buyerEmail, 1), wantStatus: http.StatusOK, wantBody: `{"received":true}`})
					hs := held.list(t)
					if len(hs) != 1 || hs[0].Reason != licentia.HeldNoLicenceToAddTo || *hs[0].OrderID != p.orderID(1) {
						t.Fatalf("held orders = %+v, want one no_licence_to_add_to of order %s", hs, p.orderID(1))
					}
					held.release(t, hs[0].ID, nil, http.StatusBadRequest, licentia.CodeValidationFailed,
						issuesAt("/adds_to_licence_id", "the buyer holds no licence of desk-app in force to add to; name one"))
					held.release(t, hs[0].ID, map[string]any{"adds_to_licence_id": someID}, http.StatusBadRequest, licentia.CodeValidationFailed,
						issuesAt("/adds_to_licence_id", "names no licence of this organization"))
					product, email := "desk-app", "desk@example.com"
					v, err := e.admin.IssueLicence(ctx, licentia.OperatorActor, e.org.ID, admin.NewLicence{ProductID: &product, Email: &email})
					if err != nil {
						t.Fatal(err)
					}
					ls := held.release(t, hs[0].ID, map[string]any{"adds_to_licence_id": v.Licence.ID}, http.StatusCreated, "", nil)
					if len(ls) != 1 || ls[0].ID != v.Licence.ID || len(ls[0].Features) != 1 || ls[0].Features[0].Code != "export-pdf" {
						t.Errorf("released = %+v, want the named licence granting export-pdf", ls)
					}
					if got := held.list(t); len(got) != 0 {
						t.Errorf("held orders after the release = %+v, want none", got)
					}
				})
			}
		})
	}
}
