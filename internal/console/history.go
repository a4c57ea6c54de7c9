package console

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// historyRow is one audit entry as the audit log and a licence's history
// show it: who by name, what in words, and its details as a sentence and
// key/value lines, never the stored JSON.
type historyRow struct {
	At       time.Time
	Action   string
	What     string
	Who      string
	Sentence string
	Lines    []detailLine
	// LicenceID links the entry's licence from the organization's log.
	LicenceID *string
}

type detailLine struct{ Key, Value string }

// names are what the log's ids stand for in an organization: members by
// email, API keys and products by name.
type names struct {
	members, keys, products map[string]string
}

// names reads the organization's members, API keys and products once for
// a page of entries.
func (s *Server) names(ctx context.Context, orgID string) (*names, error) {
	n := &names{members: map[string]string{}, keys: map[string]string{}, products: map[string]string{}}
	ms, err := s.admin.Members(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		n.members[m.ID] = m.Email
	}
	ks, err := s.admin.APIKeys(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		n.keys[k.ID] = k.Name
	}
	ps, err := s.admin.Products(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		n.products[p.Product.ID] = p.Product.Name
	}
	return n, nil
}

// history renders entries for a page; link says whether each links its
// licence, as the organization's log does and a licence's own history
// need not.
func (s *Server) history(ctx context.Context, orgID string, es []licentia.AuditEntry, link bool) ([]historyRow, error) {
	if len(es) == 0 {
		return nil, nil
	}
	n, err := s.names(ctx, orgID)
	if err != nil {
		return nil, err
	}
	out := make([]historyRow, len(es))
	for i, e := range es {
		out[i] = n.row(e)
		if !link {
			out[i].LicenceID = nil
		}
	}
	return out, nil
}

// member names a member by email; a member since removed has no email
// left here.
func (n *names) member(id string) string {
	if e, ok := n.members[id]; ok {
		return e
	}
	return "a former member"
}

// actor names who made a change.
func (n *names) actor(a licentia.Actor) string {
	id := ""
	if a.ID != nil {
		id = *a.ID
	}
	switch a.Type {
	case licentia.ActorMember:
		return n.member(id)
	case licentia.ActorAPIKey:
		if name, ok := n.keys[id]; ok {
			return "API key " + name
		}
		return "a deleted API key"
	case licentia.ActorProvider:
		return "payment provider"
	}
	return string(a.Type)
}

// row renders one entry: the action's sentence where it has one, then the
// details it did not say as key/value lines.
func (n *names) row(e licentia.AuditEntry) historyRow {
	r := historyRow{At: e.At, Action: e.Action, What: actionTitle(e.Action), Who: n.actor(e.Actor), LicenceID: e.LicenceID}
	var d map[string]any
	if json.Unmarshal(e.Data, &d) != nil {
		d = map[string]any{}
	}
	delete(d, "licence_id")
	if say := sentences[e.Action]; say != nil {
		var used []string
		r.Sentence, used = say(n, d)
		for _, k := range used {
			delete(d, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(d)) {
		r.Lines = append(r.Lines, n.lines(k, d[k])...)
	}
	return r
}

// lines writes a detail as key/value lines: ids of members, keys and
// products by name, lists joined, objects one line a field.
func (n *names) lines(key string, v any) []detailLine {
	label := strings.ReplaceAll(strings.TrimSuffix(key, "_id"), "_", " ")
	switch val := v.(type) {
	case map[string]any:
		var out []detailLine
		for _, k := range slices.Sorted(maps.Keys(val)) {
			out = append(out, n.lines(key+"_"+k, val[k])...)
		}
		return out
	case string:
		if hiddenIDs[key] {
			return nil
		}
		switch key {
		case "member_id":
			return []detailLine{{label, n.member(val)}}
		case "api_key_id":
			if name, ok := n.keys[val]; ok {
				return []detailLine{{"API key", name}}
			}
		case "product_id":
			if name, ok := n.products[val]; ok {
				return []detailLine{{"product", name}}
			}
		}
	}
	if id, ok := v.(string); ok && strings.HasSuffix(key, "_id") {
		if _, uuid := licentia.ParseUUID(id); uuid {
			return []detailLine{{label, shortID(id)}}
		}
	}
	return []detailLine{{strings.ReplaceAll(key, "_", " "), plain(v)}}
}

// hiddenIDs are ids in audit data that name nothing a maker looks up.
var hiddenIDs = map[string]bool{"organization_id": true, "mail_id": true, "grant_id": true, "activation_id": true, "invitation_id": true}

// plain writes a detail's value in words: none for null, yes or no, lists
// joined by commas.
func plain(v any) string {
	switch val := v.(type) {
	case nil:
		return "none"
	case bool:
		if val {
			return "yes"
		}
		return "no"
	case string:
		return val
	case []any:
		parts := make([]string, len(val))
		for i, x := range val {
			parts[i] = plain(x)
		}
		if len(parts) == 0 {
			return "none"
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(val)) {
			parts = append(parts, k+" "+plain(val[k]))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

// actionTitle is an action in words: "licence.key_mailed" reads "Licence
// key mailed", "api_key.created" "API key created".
func actionTitle(action string) string {
	if t, ok := actionTitles[action]; ok {
		return t
	}
	s := strings.NewReplacer(".", " ", "_", " ").Replace(action)
	s = strings.Replace(s, "api key", "API key", 1)
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// actionTitles are the titles that the general rule would word badly.
var actionTitles = map[string]string{
	licentia.AuditBrandingUpdated:             "Branding changed",
	licentia.AuditGrantCreated:                "AI assistant given access",
	licentia.AuditGrantRevoked:                "AI assistant's access ended",
	licentia.AuditWebhookDeliveryRetried:      "Webhook delivery sent again",
	licentia.AuditWebhookEndpointTested:       "Test event sent to a webhook endpoint",
	licentia.AuditIntegrationWebhookSecretSet: "Integration webhook secret set",
	licentia.AuditMemberLoginLinkCreated:      "Member sign-in link made",
}
