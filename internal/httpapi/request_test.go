package httpapi_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/purchase"
)

// requestStructs names the request struct each route with a JSON body or
// query parameters decodes into.
var requestStructs = map[string]any{
	"POST /v1/admin/products":                                      admin.NewProduct{},
	"PATCH /v1/admin/products/{id}":                                admin.ProductPatch{},
	"POST /v1/admin/products/{id}/rotate-signing-key":              admin.RotateKey{},
	"POST /v1/admin/products/{id}/retire-public-key":               admin.RetireKey{},
	"PUT /v1/admin/products/{id}/features/{code}":                  admin.FeatureSave{},
	"POST /v1/admin/licences":                                      admin.NewLicence{},
	"GET /v1/admin/licences":                                       admin.FindQuery{},
	"GET /v1/admin/licences/counts":                                admin.CountQuery{},
	"GET /v1/admin/licences/list":                                  admin.ListQuery{},
	"GET /v1/admin/licences/export":                                admin.LicenceFilters{},
	"PATCH /v1/admin/licences/{id}":                                admin.LicenceChange{},
	"POST /v1/admin/licences/{id}/revoke":                          admin.ChangeStatus{},
	"POST /v1/admin/licences/{id}/reissue":                         admin.Reissue{},
	"POST /v1/admin/licences/{id}/expire":                          admin.ChangeStatus{},
	"POST /v1/admin/licences/{id}/reinstate":                       admin.ChangeStatus{},
	"POST /v1/admin/licences/{id}/anonymise":                       admin.Anonymise{},
	"POST /v1/admin/licences/{id}/send-key":                        admin.SendKeyRequest{},
	"POST /v1/activations":                                         activation.Activate{},
	"POST /v1/activations/offline":                                 activation.OfflineActivate{},
	"POST /v1/activations/status":                                  activation.Status{},
	"POST /v1/activations/deactivate":                              activation.Deactivate{},
	"POST /v1/leases":                                              activation.TakeLease{},
	"POST /v1/leases/renew":                                        activation.LeaseRef{},
	"POST /v1/leases/release":                                      activation.LeaseRef{},
	"GET /v1/purchases/lookup":                                     purchase.LookupQuery{},
	"POST /v1/purchases/lookup":                                    purchase.Lookup{},
	"POST /v1/admin/webhooks":                                      admin.CreateWebhookEndpoint{},
	"PATCH /v1/admin/webhooks/{id}":                                admin.UpdateWebhookEndpoint{},
	"POST /v1/admin/invitations":                                   nil, // team changes answer 403 before reading a body
	"PUT /v1/admin/members/{id}/role":                              nil,
	"PUT /v1/admin/integrations/{id}/mappings/{providerProductId}": admin.PutMapping{},
	"POST /v1/admin/orders/held/{id}/release":                      admin.HeldRelease{},
	// The provider's body is handed over as signed, never decoded here.
	"POST /v1/providers/{integration_id}/webhooks": nil,
}

// TestRequestStructsMatchDocument: for every route with a JSON body, the
// request struct's json names are the requestBody schema's properties, its
// required fields the schema's required list, its nullable fields those
// whose type includes null, and an integer's range the schema's minimum
// and maximum; for every route with query parameters, its
// query names are the document's. So the document, and later MCP tool
// schemas, can be checked against (or made from) the structs the
// operations validate.
func TestRequestStructsMatchDocument(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI)
	if err != nil {
		t.Fatalf("LoadFromData() error = %v", err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			route := method + " " + path
			var queryNames []string
			for _, p := range op.Parameters {
				if p.Value.In == "query" {
					queryNames = append(queryNames, p.Value.Name)
				}
			}
			if op.RequestBody == nil && len(queryNames) == 0 {
				continue
			}
			in, ok := requestStructs[route]
			if !ok {
				if op.RequestBody != nil || strings.HasPrefix(path, "/v1/admin/licences") {
					t.Errorf("%s: no request struct named for its body or query", route)
				}
				continue
			}
			if in == nil {
				continue
			}
			fields := licentia.InputFields(reflect.TypeOf(in))
			if op.RequestBody != nil {
				checkBody(t, route, op.RequestBody.Value.Content.Get("application/json").Schema.Value, fields)
			}
			var names []string
			for _, f := range fields {
				if f.Query {
					names = append(names, f.Name)
				}
			}
			slices.Sort(names)
			slices.Sort(queryNames)
			if !slices.Equal(queryNames, names) {
				t.Errorf("%s: query fields %v, document's query parameters %v", route, names, queryNames)
			}
		}
	}
}

// checkBody compares a request struct's body fields with a body schema.
func checkBody(t *testing.T, route string, s *openapi3.Schema, fields []licentia.InputField) {
	t.Helper()
	var names, required, props []string
	for _, f := range fields {
		if f.Query {
			continue
		}
		names = append(names, f.Name)
		if f.Required {
			required = append(required, f.Name)
		}
		if prop := s.Properties[f.Name]; prop != nil && prop.Value != nil && f.Nullable != prop.Value.Type.Includes("null") {
			t.Errorf("%s: %s nullable %v, document's type %v", route, f.Name, f.Nullable, prop.Value.Type)
		}
		if !f.HasRange {
			continue
		}
		lo, hi := schemaRange(s.Properties[f.Name])
		if lo == nil || hi == nil || int64(*lo) != f.Min || int64(*hi) != f.Max {
			t.Errorf("%s: %s range %d to %d, document's %v to %v", route, f.Name, f.Min, f.Max, deref(lo), deref(hi))
		}
	}
	for name := range s.Properties {
		props = append(props, name)
	}
	want := slices.Clone(s.Required)
	for _, l := range [][]string{names, required, props, want} {
		slices.Sort(l)
	}
	if !slices.Equal(props, names) {
		t.Errorf("%s: body fields %v, document's properties %v", route, names, props)
	}
	if !slices.Equal(want, required) {
		t.Errorf("%s: required fields %v, document's required %v", route, required, want)
	}
}

// schemaRange returns a property's minimum and maximum, looking through a
// one-entry allOf to the schema it refers to.
func schemaRange(ref *openapi3.SchemaRef) (lo, hi *float64) {
	if ref == nil || ref.Value == nil {
		return nil, nil
	}
	s := ref.Value
	if s.Min == nil && len(s.AllOf) == 1 {
		s = s.AllOf[0].Value
	}
	return s.Min, s.Max
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
