package browser

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/servetest"
	"github.com/licentia/licentia/internal/store"
)

// answered sends an endpoint a test event from its page and, once the
// service's own attempt is over (the receiver's host does not resolve
// here), records that the receiver answered 503 with a body, as a
// receiver that is down would: the endpoint page then shows a delivery
// with its request and the answer, opened, at each width.
func answered(t *testing.T, ctx context.Context, s *servetest.Service, save bool, st store.Store, orgID, endpointID string) {
	t.Helper()
	open(t, ctx, s.Base+"/console/webhooks/"+endpointID)
	if status := step(t, ctx, "send a test event", chromedp.Click(chromedp.CSS(`form[action$="/test"] button[type="submit"]`))); status != http.StatusOK {
		t.Fatalf("send a test event: status %d", status)
	}
	var d licentia.Delivery
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds, err := st.Deliveries(t.Context(), orgID, endpointID, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 1 && ds[0].Attempts > 0 && (ds[0].LeasedUntil == nil || ds[0].LeasedUntil.Before(time.Now())) {
			d = ds[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the test event's first attempt did not end: %+v", ds)
		}
		time.Sleep(100 * time.Millisecond)
	}
	d.Status, d.NextAttemptAt, d.LastStatusCode, d.FailureReason = licentia.DeliveryFailed, nil, new(503), new(licentia.FailureStatus)
	d.LastResponse = new(`{"error":"maintenance","message":"The receiver is down for planned maintenance until 06:00 UTC; events are queued upstream."}`)
	if err := st.InTx(t.Context(), func(tx store.Tx) error { return tx.FinishAttempts(t.Context(), []licentia.Delivery{d}) }); err != nil {
		t.Fatal(err)
	}
	for _, w := range widths {
		viewport(t, ctx, w)
		open(t, ctx, s.Base+"/console/webhooks/"+endpointID)
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`details summary`))); err != nil {
			t.Fatalf("open the delivery's request and answer: %v", err)
		}
		if body := text(t, ctx, "main"); !strings.Contains(body, "planned maintenance") || !strings.Contains(body, `"type":"endpoint.test"`) {
			t.Errorf("the endpoint page lacks the delivery's request or answer:\n%s", body)
		}
		fits(t, ctx, "webhook-delivery", w)
		shot(t, ctx, save, fmt.Sprintf("webhook-delivery-%d", w))
	}
}
