//go:build !teamops

package console

// Until the team operations land, the link and team pages are not served.
func (s *Server) linkRoutes() {}
func (s *Server) teamRoutes() {}
