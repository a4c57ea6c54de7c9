package web

import (
	"net/http"
	"slices"
	"sort"

	"github.com/licentia/licentia/internal/licentia"
)

// Query is a query string read strictly: unknown and repeated parameters are
// issues, like unknown body fields.
type Query struct {
	values map[string]string
	issues *licentia.Issues
}

// ReadQuery reads the query string of r; a parameter not in allowed, or
// given twice, is an issue.
func ReadQuery(r *http.Request, issues *licentia.Issues, allowed ...string) *Query {
	if r.URL.RawQuery == "" {
		// Most requests, a status check's among them, have none: skip the
		// parse and the maps. Get reads a nil map as empty.
		return &Query{issues: issues}
	}
	q := &Query{values: map[string]string{}, issues: issues}
	raw := r.URL.Query()
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch {
		case !slices.Contains(allowed, name):
			issues.Add("query."+name, "unknown parameter")
		case len(raw[name]) > 1:
			issues.Add("query."+name, "must be given once")
		default:
			q.values[name] = raw[name][0]
		}
	}
	return q
}

// Get returns a parameter and whether it was given.
func (q *Query) Get(name string) (string, bool) {
	v, ok := q.values[name]
	return v, ok
}
