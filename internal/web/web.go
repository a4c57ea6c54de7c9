// Package web is the HTTP plumbing the front doors share: the API
// (httpapi), the console, the OAuth authorization server, the MCP server
// and the customer portal. It gives each request its id and watches
// it (access log, metrics, panic recovery), finds the client's address
// behind trusted proxies, maps a contract code to its HTTP status, marks a
// request made in-process for an AI assistant, and decodes request bodies,
// query strings and uploaded files strictly into operations' request
// structs, none over MaxBody. Each front door imports it and none imports
// another; only cli wires them together.
package web

import "time"

// DefaultDatabaseTimeout is the deadline of a request's work when a front
// door's options set none.
const DefaultDatabaseTimeout = 5 * time.Second
