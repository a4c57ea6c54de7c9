package cli

import "github.com/licentia/licentia/internal/build"

// versionCommand prints the binary's build information, the same object
// /healthz answers with under "build".
func versionCommand(args []string, env Env) error {
	if _, err := parseFlags(newFlags("version"), args); err != nil {
		return err
	}
	printJSON(env.Stdout, build.Read())
	return nil
}
