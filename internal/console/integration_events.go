package console

import (
	"context"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
)

// providerSection is what the integration page says of the provider's
// side: whether the webhook secret is set (never the secret), the events
// to enable there, and the last events received with what each did.
type providerSection struct {
	SecretSet bool
	Enable    []string
	Events    []providerEventRow
	Shown     int
}

// providerEventRow is a provider event with its outcome in words.
type providerEventRow struct {
	licentia.ProviderEvent
	Did string
}

func (s *Server) providerSection(ctx context.Context, orgID string, i *licentia.Integration) (providerSection, error) {
	ps := providerSection{SecretSet: len(i.SealedWebhookSecret) > 0,
		Enable: providers.EventsToEnable[providers.Name(i.Provider)], Shown: admin.ProviderEventsShown}
	es, err := s.admin.ProviderEvents(ctx, orgID, i.ID)
	for _, e := range es {
		ps.Events = append(ps.Events, providerEventRow{ProviderEvent: e, Did: outcomeWords(e.Outcome)})
	}
	return ps, err
}

// outcomeWords says in words what a provider event did.
func outcomeWords(o licentia.ProviderEventOutcome) string {
	switch o {
	case licentia.OutcomeIssued:
		return "issued licences"
	case licentia.OutcomeHeld:
		return "held for review"
	case licentia.OutcomeRefunded:
		return "refund applied"
	case licentia.OutcomeEnded:
		return "subscription end applied"
	case licentia.OutcomeConverted:
		return "trial converted"
	case licentia.OutcomeNothing:
		return "nothing to change"
	case licentia.OutcomeIgnored:
		return "ignored"
	}
	return "not recorded"
}
