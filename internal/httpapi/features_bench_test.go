package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// BenchmarkStatusFeatures measures BenchmarkActivationStatus's status
// check for a licence granting 0 and 50 features, side by side: the grants
// are read with the licence's row and signed into every verdict.
func BenchmarkStatusFeatures(b *testing.B) {
	for _, n := range []int{0, 50} {
		b.Run(fmt.Sprintf("features=%d", n), func(b *testing.B) {
			e, _ := newDeskEnv(b, envOptions{limiter: allowAll{}})
			ctx := b.Context()
			grants := make([]licentia.GrantRequest, n)
			for i := range n {
				code := fmt.Sprintf("feature-%03d", i)
				if _, err := e.admin.SaveFeature(ctx, licentia.OperatorActor, e.org.ID, "desk-app", code, admin.FeatureSave{Name: ptr(code)}); err != nil {
					b.Fatalf("SaveFeature() error = %v", err)
				}
				grants[i].Code = code
			}
			kind := licentia.LimitMachines
			v, err := e.admin.IssueLicence(ctx, licentia.OperatorActor, e.org.ID, admin.NewLicence{ProductID: ptr("desk-app"),
				Email: ptr("ada@example.com"), LimitKind: &kind, LimitCount: ptr[int64](10), Features: grants})
			if err != nil {
				b.Fatalf("IssueLicence() error = %v", err)
			}
			serve(b, e, "/v1/activations", mustJSON(b, activateBody(*v.Key, "bench-machine", nil)), http.StatusCreated)
			body := mustJSON(b, map[string]any{"licence_key": *v.Key, "machine_id": "bench-machine"})
			b.ReportAllocs()
			for b.Loop() {
				serve(b, e, "/v1/activations/status", body, http.StatusOK)
			}
		})
	}
}
