//go:build !teamops

package console

// pendingPages are served once the team operations land.
var pendingPages = []string{"team", "link"}

func extraPages(m map[string]any) map[string]any { return m }
