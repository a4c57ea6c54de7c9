package console

// PasswordChecks is how many passwords s has checked against a stored
// hash.
func PasswordChecks(s *Server) int64 { return s.passwordChecks.Load() }
