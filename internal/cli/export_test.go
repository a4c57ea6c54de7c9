package cli

import "net/http"

// WrapHandler puts wrap around the service's handler, so that a test can
// hold a request in flight. Call it before Run.
func (a *App) WrapHandler(wrap func(http.Handler) http.Handler) {
	a.http.Handler = wrap(a.http.Handler)
}
