// Package integration runs the real licentia binary: several `licentia serve`
// processes on one PostgreSQL database and one Redis, set up with the
// operator commands and driven through the HTTP API, as an operator would run
// them. Its tests show what "many processes, one service" promises: one rate
// limit shared by every process, a signing-key retirement seen everywhere
// within 30 seconds, webhook deliveries shared without double sends and
// surviving a killed process, a provider webhook whose handling a killed
// process cut short issuing exactly one licence when the provider sends it
// again, and a service that keeps answering while Redis is unreachable.
//
// The tests run when LICENTIA_TEST_POSTGRES_URL (and, for those that use
// Redis, LICENTIA_TEST_REDIS_URL) are set, and skip otherwise.
package integration
