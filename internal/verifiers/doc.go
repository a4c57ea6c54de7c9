// Package verifiers holds the tests that hold the TypeScript and Python
// verifiers (sdk/typescript, sdk/python) to the Go SDK: on licence keys and
// verdicts from a running service, issued through the API on SQLite and on
// PostgreSQL, and on many keys and signed payloads made here, edited byte by
// byte, each of which must get the Go SDK's outcome and payload from both.
//
// They drive the verifiers' command lines (node sdk/typescript/dist/cli.js,
// python3 -m licentia_verify) and run when LICENTIA_TEST_VERIFIERS=1;
// `.ci/run` builds the TypeScript package first and sets it.
package verifiers
