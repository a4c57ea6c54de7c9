package admin_test

import (
	"sync"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// TestSendKeyRace: sends racing for one licence pass the daily cap never:
// exactly KeyMailsPerDay are queued, the others answer rate_limited.
func TestSendKeyRace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		svc, o := raceFixture(t, st, licentia.PlanBusiness)
		product, email := "race-app", "ada@example.com"
		v, err := svc.IssueLicence(t.Context(), licentia.OperatorActor, o.ID, admin.NewLicence{ProductID: &product, Email: &email})
		if err != nil {
			t.Fatal(err)
		}
		const racers = 12
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				_, errs[i] = svc.SendKey(t.Context(), licentia.OperatorActor, o.ID, v.Licence.ID, admin.SendKeyRequest{})
			})
		}
		wg.Wait()
		sent := 0
		for _, err := range errs {
			switch {
			case err == nil:
				sent++
			case licentia.ErrorCode(err) != licentia.CodeRateLimited:
				t.Errorf("SendKey() error = %v, want nil or rate_limited", err)
			}
		}
		n, err := st.CountLicenceMails(t.Context(), o.ID, v.Licence.ID, licentia.MailKey, v.Licence.IssuedAt)
		if sent != admin.KeyMailsPerDay || n != admin.KeyMailsPerDay || err != nil {
			t.Errorf("%d sends succeeded, %d mails queued (%v), want %d", sent, n, err, admin.KeyMailsPerDay)
		}
	})
}
