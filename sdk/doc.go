// Package sdk is what an application embeds to use Licentia: it verifies
// licence keys and verdicts offline against the maker's public keys and
// talks to the activation routes. It uses only the standard library, and the
// server signs with the same code, so each format has one implementation.
//
// Client activates a key on this machine, checks it once a day and judges
// whether the application may run; it never locks a customer out because
// the server cannot be reached. docs/sdk.md gives the rules.
//
// The formats are specified byte by byte in docs/licence-key-format.md and
// docs/verdict-format.md; testdata/vectors holds vectors for any language.
package sdk
