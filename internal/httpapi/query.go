package httpapi

import (
	"net/http"
	"slices"
	"sort"

	"github.com/licentia/licentia/internal/licentia"
)

// query reads the query string strictly: unknown and repeated parameters are
// issues, like unknown body fields.
type query struct {
	values map[string]string
	issues *licentia.Issues
}

func readQuery(r *http.Request, issues *licentia.Issues, allowed ...string) *query {
	q := &query{values: map[string]string{}, issues: issues}
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

// get returns a parameter and whether it was given.
func (q *query) get(name string) (string, bool) {
	v, ok := q.values[name]
	return v, ok
}

// pathUUID reads a UUID path value; upper case is accepted and normalised.
func pathUUID(r *http.Request, name string, issues *licentia.Issues) string {
	id, ok := licentia.ParseUUID(r.PathValue(name))
	if !ok {
		issues.Add("path."+name, "must be a UUID")
	}
	return id
}

// pathIDOnly reads the UUID path id of a route that takes no query and no
// body.
func pathIDOnly(r *http.Request) (string, error) {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	readQuery(r, &is)
	return id, is.Err()
}
