package courier

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/sdk"
)

// KeysURL is where a customer finds their keys again: the customer portal
// of the organization whose slug is orgSlug. It is the one place the key
// mail's link is made.
func KeysURL(publicURL, orgSlug string) string {
	return publicURL + "/portal/" + url.PathEscape(orgSlug) + "/"
}

// SignInURL is the link a portal sign-in mail carries: the portal's page
// that signs in with token.
func SignInURL(publicURL, orgSlug, token string) string {
	return KeysURL(publicURL, orgSlug) + "sign-in/" + url.PathEscape(token)
}

// SetupPath is the console page a setup link opens, where a member sets
// their password: the one place its path is made.
func SetupPath(token string) string { return "/console/setup/" + token }

// PasswordPurpose is the purpose the tokens of mailed password links are
// derived for (signing.Keyring.LinkToken).
const PasswordPurpose = "console-password"

// SignInPurpose is the purpose portal sign-in tokens are derived for
// (signing.Keyring.LinkToken).
const SignInPurpose = "portal-sign-in"

// rendered is a claimed mail with its message, or why it will never be
// sent (final) or cannot be sent now.
type rendered struct {
	m      licentia.Mail
	msg    mail.Message
	reason string
	final  bool
}

// render reads what a mail is made of, as it is now, and renders it. Keys
// are derived here, at send time, and never stored. A licence anonymised,
// revoked or expired since the mail was queued is left out; with none
// left the mail fails for good, saying which without naming anyone.
func (w *Worker) render(ctx context.Context, r store.Reader, m licentia.Mail) (rendered, error) {
	out := rendered{m: m}
	org, err := r.Organization(ctx, m.OrgID)
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		out.reason, out.final = licentia.MailFailureRender, true
		return out, nil
	}
	if err != nil {
		return out, err
	}
	switch m.Kind {
	case licentia.MailPortalSignIn:
		return w.renderSignIn(ctx, r, org, out)
	case licentia.MailPassword:
		return w.renderPassword(ctx, r, org, out)
	}
	now := w.clock.Now()
	var ls []licentia.Licence
	anonymised := false
	for _, id := range m.LicenceIDs {
		l, err := r.Licence(ctx, m.OrgID, id)
		if licentia.ErrorCode(err) == licentia.CodeLicenceNotFound {
			continue
		}
		if err != nil {
			return out, err
		}
		switch {
		case l.AnonymisedAt != nil:
			anonymised = true
		case l.DerivedState(now).IsInForce():
			ls = append(ls, *l)
		}
	}
	if len(ls) == 0 {
		out.reason, out.final = licentia.MailFailureNotInForce, true
		if anonymised {
			out.reason = licentia.MailFailureAnonymised
		}
		return out, nil
	}
	if licentia.CheckMailableEmail(ls[0].Email) != "" {
		out.reason, out.final = licentia.MailFailureAddress, true
		return out, nil
	}
	k := mail.KeyMail{To: ls[0].Email, Brand: brand(org), KeysURL: KeysURL(w.publicURL, org.Slug)}
	products := map[string]*licentia.Product{}
	for i := range ls {
		l := &ls[i]
		p, ok := products[l.ProductID]
		if !ok {
			if p, err = r.Product(ctx, m.OrgID, l.ProductID); err != nil {
				if licentia.ErrorCode(err) == licentia.CodeProductNotFound {
					out.reason, out.final = licentia.MailFailureRender, true
					return out, nil
				}
				return out, err
			}
			products[l.ProductID] = p
		}
		key, err := licenceKey(w.keys, p, l.ID)
		if err != nil {
			w.log.WarnContext(ctx, "key mail not rendered: the product cannot sign", "mail_id", m.ID, "product_id", p.ID)
			out.reason = licentia.MailFailureRender
			return out, nil
		}
		k.Licences = append(k.Licences, mail.KeyLicence{Product: p.Name, Key: key, Limit: LimitWords(l), Expiry: ExpiryWords(l, now)})
	}
	if out.msg, err = k.Message(); err != nil {
		w.log.ErrorContext(ctx, "key mail not rendered", "mail_id", m.ID, "error", err.Error())
		out.reason, out.final = licentia.MailFailureRender, true
	}
	return out, nil
}

// renderSignIn renders a portal sign-in mail: the link's token is derived
// here, from the link's id, which is the mail's. A link used or expired
// before its mail goes out is not mailed.
func (w *Worker) renderSignIn(ctx context.Context, r store.Reader, org *licentia.Organization, out rendered) (rendered, error) {
	l, err := r.PortalLink(ctx, out.m.OrgID, out.m.ID)
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		out.reason, out.final = licentia.MailFailureLinkExpired, true
		return out, nil
	}
	if err != nil {
		return out, err
	}
	if l.UsedAt != nil || !w.clock.Now().Before(l.ExpiresAt) {
		out.reason, out.final = licentia.MailFailureLinkExpired, true
		return out, nil
	}
	if licentia.CheckMailableEmail(l.Email) != "" {
		out.reason, out.final = licentia.MailFailureAddress, true
		return out, nil
	}
	token, err := w.keys.LinkToken(SignInPurpose, l.ID)
	if err != nil {
		w.log.WarnContext(ctx, "sign-in mail not rendered: no master key", "mail_id", out.m.ID)
		out.reason = licentia.MailFailureRender
		return out, nil
	}
	sm := mail.SignInMail{To: l.Email, Brand: brand(org), Link: SignInURL(w.publicURL, org.Slug, token),
		Expires: l.ExpiresAt.UTC().Format("2 January 2006 at 15:04 UTC")}
	if out.msg, err = sm.Message(); err != nil {
		w.log.ErrorContext(ctx, "sign-in mail not rendered", "mail_id", out.m.ID, "error", err.Error())
		out.reason, out.final = licentia.MailFailureRender, true
	}
	return out, nil
}

// renderPassword renders a forgotten-password mail: the link's token is
// derived from the mail's id, which is the link's, and the link found by
// it. A link used or expired before its mail goes out, or whose member
// has left, is not mailed.
func (w *Worker) renderPassword(ctx context.Context, r store.Reader, org *licentia.Organization, out rendered) (rendered, error) {
	token, err := w.keys.LinkToken(PasswordPurpose, out.m.ID)
	if err != nil {
		w.log.WarnContext(ctx, "password mail not rendered: no master key", "mail_id", out.m.ID)
		out.reason = licentia.MailFailureRender
		return out, nil
	}
	l, err := r.LoginLinkByToken(ctx, auth.TokenHash(token))
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		out.reason, out.final = licentia.MailFailureLinkExpired, true
		return out, nil
	}
	if err != nil {
		return out, err
	}
	if l.UsedAt != nil || !w.clock.Now().Before(l.ExpiresAt) {
		out.reason, out.final = licentia.MailFailureLinkExpired, true
		return out, nil
	}
	m, err := r.Member(ctx, l.OrgID, l.MemberID)
	if code := licentia.ErrorCode(err); code == licentia.CodeNotFound || code == licentia.CodeMemberNotFound {
		out.reason, out.final = licentia.MailFailureLinkExpired, true
		return out, nil
	}
	if err != nil {
		return out, err
	}
	if licentia.CheckMailableEmail(m.Email) != "" {
		out.reason, out.final = licentia.MailFailureAddress, true
		return out, nil
	}
	pm := mail.PasswordMail{To: m.Email, Brand: brand(org), Link: w.publicURL + SetupPath(token),
		Expires: l.ExpiresAt.UTC().Format("2 January 2006 at 15:04 UTC")}
	if out.msg, err = pm.Message(); err != nil {
		w.log.ErrorContext(ctx, "password mail not rendered", "mail_id", out.m.ID, "error", err.Error())
		out.reason, out.final = licentia.MailFailureRender, true
	}
	return out, nil
}

// licenceKey derives a licence's key under its product's current signing
// key, as every read of a key does.
func licenceKey(keys *signing.Keyring, p *licentia.Product, licenceID string) (string, error) {
	priv, err := keys.CurrentPrivate(p)
	if err != nil {
		return "", err
	}
	return sdk.SignLicenceKey(priv, p.LicenceSigningDomain, p.KeyPrefix, p.ID, licenceID)
}

// brand is what a mail shows of the organization.
func brand(o *licentia.Organization) mail.Brand {
	b := mail.Brand{Name: o.DisplayName()}
	if v := o.Branding.LogoURL; v != nil {
		b.LogoURL = *v
	}
	if v := o.Branding.Accent; v != nil {
		b.Accent = *v
	}
	if v := o.Branding.SupportEmail; v != nil {
		b.SupportEmail = *v
	}
	return b
}

// LimitWords says a licence's limit as a customer reads it: "3 seats".
// Mails and the customer portal say it alike.
func LimitWords(l *licentia.Licence) string {
	unit := "seat"
	if l.LimitKind == licentia.LimitMachines {
		unit = "machine"
	}
	if l.LimitCount != 1 {
		unit += "s"
	}
	return fmt.Sprintf("%d %s", l.LimitCount, unit)
}

// ExpiryWords says when a licence ends, in a sentence.
func ExpiryWords(l *licentia.Licence, now time.Time) string {
	const layout = "2 January 2006 at 15:04 UTC"
	switch {
	case l.TrialEndsAt != nil && l.TrialEndsAt.After(now):
		return "Trial, ends on " + l.TrialEndsAt.UTC().Format(layout) + "."
	case l.ExpiresAt != nil:
		return "Expires on " + l.ExpiresAt.UTC().Format(layout) + "."
	case l.Provider.SubscriptionID != nil:
		return "Runs as long as your subscription."
	}
	return "Does not expire."
}
