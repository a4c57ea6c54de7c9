package postgres

// SinceSQL is sinceSQL, for the plan tests.
var SinceSQL = sinceSQL
