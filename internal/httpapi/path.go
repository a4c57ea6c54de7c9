package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

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
	web.ReadQuery(r, &is)
	return id, is.Err()
}
