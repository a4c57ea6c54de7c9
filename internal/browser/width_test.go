package browser

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// widths are the screens every page is looked at on: a laptop and a
// phone.
var widths = []int64{1280, 390}

// assertNoSideScroll fails unless the page open in ctx is exactly as wide
// as the screen: nothing sticks out to scroll sideways to.
func assertNoSideScroll(t *testing.T, ctx context.Context, what string, width int64) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[int64]("document.documentElement.scrollWidth"))
	if err != nil {
		t.Fatalf("width of %s: %v", what, err)
	}
	if got != width {
		wider, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`Array.from(document.querySelectorAll("body *")).
			filter(e => e.getBoundingClientRect().right > %d).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).slice(0, 8)`, width)))
		t.Errorf("%s is %d pixels wide on a %d-pixel screen; wider: %v", what, got, width, wider)
	}
}

// atEveryWidth loads url at each of widths, checks it scrolls only down
// (at every width but those in wide, pages that wait for the stylesheet's
// phone rules), and saves a screenshot of each as name-<width> when save
// is set; it leaves the tab at the first width again.
func atEveryWidth(t *testing.T, ctx context.Context, save bool, name, url string, wide ...int64) {
	t.Helper()
	for _, w := range widths {
		if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(w, 900)); err != nil {
			t.Fatal(err)
		}
		open(t, ctx, url)
		if !slices.Contains(wide, w) {
			assertNoSideScroll(t, ctx, name, w)
		}
		shot(t, ctx, save, fmt.Sprintf("%s-%d", name, w))
	}
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(widths[0], 900)); err != nil {
		t.Fatal(err)
	}
}
