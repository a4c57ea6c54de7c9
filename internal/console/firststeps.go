package console

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// docsURL is where the console links to the documentation: the
// repository's docs folder, which every release ships.
const docsURL = "https://github.com/licentia/licentia/blob/main/docs/"

// firstStep is one thing a new organization does before it sells, ticked
// once done.
type firstStep struct {
	Done  bool
	Title string
	// Hint says how, with a link to where it is done.
	Hint, Link, LinkText string
}

// firstSteps are the steps from a new organization to a first machine
// running a licensed app: a product, a way in for licences (an API key or
// a payment integration), a first licence, and the SDK, done when the
// first machine is activated. They are read from what exists, so a step
// is ticked however it was done (console, API, CLI or an assistant).
func (s *Server) firstSteps(ctx context.Context, orgID string, usage []admin.Usage, counts *store.LicenceCounts) ([]firstStep, error) {
	used := map[string]int64{}
	for _, u := range usage {
		used[u.Resource] = u.Used
	}
	activated := counts.LiveMachines > 0
	if !activated {
		// Machines may all have been freed since: any activation ever
		// counts, and the audit log remembers each.
		var err error
		if activated, err = s.everActivated(ctx, orgID); err != nil {
			return nil, err
		}
	}
	return []firstStep{
		{Done: used["products"] > 0, Title: "Create a product",
			Hint: "A product is what you sell: its licence keys start with its prefix.", Link: "/console/products", LinkText: "Products"},
		{Done: used["api_keys"] > 0 || used["integrations"] > 0, Title: "Create an API key or connect a payment provider",
			Hint: "Your shop issues licences with an API key, or a payment provider does on every sale.", Link: "/console/integrations", LinkText: "Integrations"},
		{Done: counts.All > 0, Title: "Issue a first licence",
			Hint: "Issue one by hand to try it: its key is shown on the licence's page.", Link: "/console/licences", LinkText: "Licences"},
		{Done: activated, Title: "Add the SDK to your app",
			Hint: "The SDK activates a machine with a licence key and checks it offline; this step is ticked when the first machine is activated.",
			Link: docsURL + "sdk.md", LinkText: "docs/sdk.md"},
	}, nil
}

// everActivated reports whether a machine was ever activated in the
// organization.
func (s *Server) everActivated(ctx context.Context, orgID string) (bool, error) {
	days, err := s.store.AuditByDay(ctx, orgID, []string{licentia.AuditActivationCreated}, time.Unix(0, 0))
	return len(days) > 0, err
}
