package console

import (
	"fmt"

	"github.com/licentia/licentia/internal/licentia"
)

// sentence says an audit entry's details in words and names the details
// it said, which the key/value lines then leave out. An action without
// one shows its details as key/value lines only.
type sentence func(n *names, d map[string]any) (string, []string)

// word is a detail as a plain string, "" when absent.
func word(d map[string]any, key string) string {
	if v, ok := d[key]; ok && v != nil {
		return plain(v)
	}
	return ""
}

// statusSentence says a status change with its reason.
func statusSentence(n *names, d map[string]any) (string, []string) {
	s := fmt.Sprintf("From %s to %s.", word(d, "from"), word(d, "to"))
	if r := word(d, "reason"); r != "" {
		s += " Reason: " + r + "."
	}
	return s, []string{"from", "to", "reason"}
}

// machineSentence says which machine an activation change was about.
func machineSentence(verb string) sentence {
	return func(n *names, d map[string]any) (string, []string) {
		return fmt.Sprintf("Machine %s %s.", shortID(word(d, "machine_id")), verb), []string{"machine_id", "activation_id"}
	}
}

// memberSentence says which member, and in which role, a team change was
// about.
func memberSentence(format string) sentence {
	return func(n *names, d map[string]any) (string, []string) {
		return fmt.Sprintf(format, n.member(word(d, "member_id")), word(d, "role")), []string{"member_id", "role"}
	}
}

var sentences = map[string]sentence{
	licentia.AuditLicenceIssued: func(n *names, d map[string]any) (string, []string) {
		limit := counted(word(d, "limit_count"), word(d, "limit_kind"))
		expiry := word(d, "expires_at")
		if expiry == "" || expiry == "none" {
			expiry = "never"
		}
		return fmt.Sprintf("Issued to %s for %s; expires %s.", word(d, "email"), limit, expiry),
			[]string{"email", "limit_count", "limit_kind", "expires_at", "status"}
	},
	licentia.AuditLicenceRevoked:    statusSentence,
	licentia.AuditLicenceExpired:    statusSentence,
	licentia.AuditLicenceReinstated: statusSentence,
	licentia.AuditLicenceAnonymised: func(n *names, d map[string]any) (string, []string) {
		return fmt.Sprintf("The customer's data was erased and %s freed.", plural(word(d, "machines_freed"), "machine was", "machines were")),
			[]string{"from", "to", "machines_freed"}
	},
	licentia.AuditLicenceReissued: func(n *names, d map[string]any) (string, []string) {
		return fmt.Sprintf("The key was reissued (%s); %s moved to the new licence.", word(d, "reason"),
			plural(word(d, "machines_moved"), "machine", "machines")), []string{"reason", "machines_moved"}
	},
	licentia.AuditLicenceKeyMailed: func(n *names, d map[string]any) (string, []string) {
		return "The key was mailed to the customer.", []string{"mail_id"}
	},
	licentia.AuditLicenceUpdated: func(n *names, d map[string]any) (string, []string) {
		return "Changed:", nil
	},
	licentia.AuditActivationCreated:     machineSentence("activated"),
	licentia.AuditActivationDeactivated: machineSentence("freed"),
	licentia.AuditActivationRenamed:     machineSentence("renamed"),
	licentia.AuditMemberAdded:           memberSentence("%s joined as %s."),
	licentia.AuditMemberRemoved:         memberSentence("%s, %s, was removed."),
	licentia.AuditMemberRoleChanged: func(n *names, d map[string]any) (string, []string) {
		return fmt.Sprintf("%s went from %s to %s.", n.member(word(d, "member_id")), word(d, "from"), word(d, "to")),
			[]string{"member_id", "from", "to"}
	},
	licentia.AuditAPIKeyCreated: func(n *names, d map[string]any) (string, []string) {
		return fmt.Sprintf("Key %s… may use %s.", word(d, "prefix"), word(d, "scopes")), []string{"prefix", "scopes"}
	},
	licentia.AuditWebhookEndpointCreated: func(n *names, d map[string]any) (string, []string) {
		return fmt.Sprintf("Endpoint %s added for %s.", word(d, "url"), word(d, "event_types")), []string{"url", "event_types"}
	},
	licentia.AuditIntegrationConnected: func(n *names, d map[string]any) (string, []string) {
		return fmt.Sprintf("%s account %s connected as %s.", word(d, "provider"), word(d, "account_id"), word(d, "name")),
			[]string{"provider", "account_id", "name"}
	},
}
