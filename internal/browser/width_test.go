package browser

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// atEveryWidth loads url at each of widths, checks it scrolls only down,
// and saves a screenshot of each as name-<width> when save is set; it
// leaves the tab 1280 pixels wide again.
func atEveryWidth(t *testing.T, ctx context.Context, save bool, name, url string) {
	t.Helper()
	for _, w := range widths {
		if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(w, 900)); err != nil {
			t.Fatal(err)
		}
		open(t, ctx, url)
		fits(t, ctx, name, w)
		shot(t, ctx, save, fmt.Sprintf("%s-%d", name, w))
	}
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
}
