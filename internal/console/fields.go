package console

import (
	"strings"
	"unicode"

	"github.com/licentia/licentia/internal/licentia"
)

// fieldIssue is an issue of a refused form in words: the field's label as
// the form shows it, and what is wrong.
type fieldIssue struct {
	// Path is the API issue's path, which a form may read more closely
	// (the feature grants' /features/<i>).
	Path                  string
	Field, Label, Message string
}

// String is the issue as a sentence: "Limit: must be between 1 and
// 4294967295".
func (f fieldIssue) String() string {
	if f.Label == "" {
		return f.Message
	}
	return f.Label + ": " + f.Message
}

// fieldAliases are the API paths whose names differ from the form's field
// names (the mapping route's path parameter).
var fieldAliases = map[string]string{
	"providerProductId": "provider_product_id",
}

// fieldLabels are the labels of the console's form fields, where the
// field's name does not read as its label. This is the one mapping from an
// API issue's path to the words a form shows.
var fieldLabels = map[string]string{
	"limit_count":                "Limit",
	"limit_kind":                 "Counted in",
	"expires_at":                 "Expires",
	"major":                      "Major version",
	"current_major":              "Current major version",
	"machines_per_seat":          "Machines per seat",
	"heartbeat_interval_seconds": "Heartbeat interval (seconds)",
	"product_id":                 "Product",
	"provider_product_id":        "Provider product id",
	"key_prefix":                 "Key prefix",
	"id":                         "Id",
	"external_ref":               "External reference",
	"event_types":                "Events",
	"url":                        "URL",
	"webhook_secret":             "Webhook secret",
	"api_key":                    "API key",
	"licence_key":                "Licence key",
	"order_id":                   "Order id",
	"send_key_mail":              "Mail the key",
	"key_valid_days":             "Key valid for (days)",
	"renewal_url":                "Renewal address",
	"logo_url":                   "Logo address",
	"support_email":              "Support email",
	"display_name":               "Display name",
	"accent":                     "Accent colour",
	"licence_signing_domain":     "Licence signing domain",
	"verdict_signing_domain":     "Verdict signing domain",
	"confirm":                    "Confirmation",
	"trial":                      "Trial",
	"request":                    "Request file",
	"on_refund":                  "On a refund",
	"on_subscription_end":        "When the subscription ends",
	"cursor":                     "Page",
	"features":                   "Features",
	"adds_to":                    "Add-on",
	"machine_match":              "Machine match",
	"transfers_per_30_days":      "Transfers in any 30 days",
	"max_concurrent":             "Machines at once",
	"lease_ttl_seconds":          "Lease length (seconds)",
	"max_borrow_hours":           "Longest borrowed lease (hours)",
}

// fieldOf is the form field of an issue's path: "/limit_count" and
// "query.email" name the fields limit_count and email, "/event_types/1"
// event_types, "path.providerProductId" provider_product_id.
func fieldOf(p string) string {
	for _, prefix := range []string{"/", "query.", "path."} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			p = rest
			break
		}
	}
	f, _, _ := strings.Cut(p, "/")
	if alias, ok := fieldAliases[f]; ok {
		return alias
	}
	return f
}

// fieldLabel is a field's label: from fieldLabels, else its name in words
// ("reason" reads "Reason").
func fieldLabel(field string) string {
	if l, ok := fieldLabels[field]; ok {
		return l
	}
	words := strings.ReplaceAll(field, "_", " ")
	if words == "" {
		return ""
	}
	r := []rune(words)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// fieldIssues words a refusal's issues for a form.
func fieldIssues(issues []licentia.Issue) []fieldIssue {
	out := make([]fieldIssue, len(issues))
	for i, is := range issues {
		f := fieldOf(is.Path)
		out[i] = fieldIssue{Path: is.Path, Field: f, Label: fieldLabel(f), Message: is.Message}
	}
	return out
}
