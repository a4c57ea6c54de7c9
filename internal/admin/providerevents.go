package admin

import (
	"context"
	"fmt"

	"github.com/licentia/licentia/internal/licentia"
)

// ProviderEventsShown is how many of an integration's last provider events
// its page lists.
const ProviderEventsShown = 50

// ProviderEvents lists the last provider events a connected integration of
// the organization received, newest first; another organization's answers
// integration_not_found.
func (s *Service) ProviderEvents(ctx context.Context, orgID, integrationID string) ([]licentia.ProviderEvent, error) {
	if _, err := connected(ctx, s.store, orgID, integrationID); err != nil {
		return nil, fmt.Errorf("list provider events: %w", err)
	}
	es, err := s.store.ProviderEvents(ctx, orgID, integrationID, ProviderEventsShown)
	if err != nil {
		return nil, fmt.Errorf("list provider events: %w", err)
	}
	return es, nil
}
