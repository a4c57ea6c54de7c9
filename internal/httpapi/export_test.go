package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/licentia"
)

// HandleForTest registers an administration route that only tests have, so
// they can drive the middleware with a handler that misbehaves.
func (s *Server) HandleForTest(pattern string, scope licentia.Scope, h func(http.ResponseWriter, *http.Request) error) {
	s.handle(pattern, scope, h)
}

// OperatorForTest registers an operator route that only tests have.
func (s *Server) OperatorForTest(pattern string, h func(http.ResponseWriter, *http.Request) error) {
	s.operator(pattern, h)
}
