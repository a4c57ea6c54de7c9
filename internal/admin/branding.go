package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// BrandingChange is the whole branding of an organization, as the
// console's form sends it: a field left out or blank is not set, so the
// organization's name shows, no logo, the default colour, no Reply-To.
type BrandingChange struct {
	licentia.Decoded
	DisplayName  *string `json:"display_name"`
	SupportEmail *string `json:"support_email"`
	LogoURL      *string `json:"logo_url"`
	Accent       *string `json:"accent"`
}

// Validate reports every problem of a branding change, each at its field.
func (in *BrandingChange) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	b := in.Branding()
	is.CheckString("/display_name", b.DisplayName, licentia.CheckDisplayName)
	// Customers reply to it: it must be an address mail can be sent to.
	is.CheckString("/support_email", b.SupportEmail, licentia.CheckMailableEmail)
	is.CheckString("/logo_url", b.LogoURL, licentia.CheckLogoURL)
	is.CheckString("/accent", b.Accent, licentia.CheckAccent)
	return is
}

// Branding is the branding the change sets: surrounding spaces trimmed,
// blank fields unset, the accent in lower case.
func (in *BrandingChange) Branding() licentia.Branding {
	set := func(v *string) *string {
		if v == nil || strings.TrimSpace(*v) == "" {
			return nil
		}
		t := strings.TrimSpace(*v)
		return &t
	}
	b := licentia.Branding{DisplayName: set(in.DisplayName), SupportEmail: set(in.SupportEmail), LogoURL: set(in.LogoURL),
		Accent: set(in.Accent)}
	if b.Accent != nil {
		lower := strings.ToLower(*b.Accent)
		b.Accent = &lower
	}
	return b
}

// SetBranding replaces what customers see of the acting member's
// organization. Only owners and admins may (403 insufficient_role, before
// the form is read); the change is audited on the organization.
func (s *Service) SetBranding(ctx context.Context, by Acting, in BrandingChange) (*licentia.Organization, error) {
	if err := s.CanSetBranding(ctx, by); err != nil {
		return nil, err
	}
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	b := in.Branding()
	now := s.now()
	var org *licentia.Organization
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		m, err := actingMember(ctx, tx, by)
		if err != nil {
			return err
		}
		if err := licentia.CanSetBranding(m.Role); err != nil {
			return err
		}
		if err := tx.SetBranding(ctx, by.OrgID, b); err != nil {
			return err
		}
		if org, err = tx.Organization(ctx, by.OrgID); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: by.OrgID, Action: licentia.AuditBrandingUpdated, Actor: by.Actor(), At: now},
			map[string]any{"display_name": b.DisplayName, "support_email": b.SupportEmail, "logo_url": b.LogoURL, "accent": b.Accent})
	})
	if err != nil {
		return nil, fmt.Errorf("set branding: %w", err)
	}
	return org, nil
}

// CanSetBranding answers 403 insufficient_role when the acting member may
// not change the branding.
func (s *Service) CanSetBranding(ctx context.Context, by Acting) error {
	m, err := s.ActingMember(ctx, by)
	if err != nil {
		return err
	}
	return licentia.CanSetBranding(m.Role)
}
