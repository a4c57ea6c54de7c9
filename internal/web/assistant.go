package web

import "context"

type ctxKey int

const assistantKey ctxKey = iota

// ForAssistant marks a request made on behalf of an AI assistant, such as a
// tool call of the MCP server: its caller, an API key included, is held to
// the assistant guard-rails. Only code in the process can set it; no header
// of a client's request does.
func ForAssistant(ctx context.Context) context.Context {
	return context.WithValue(ctx, assistantKey, true)
}

// IsForAssistant reports whether ForAssistant marked ctx.
func IsForAssistant(ctx context.Context) bool {
	v, _ := ctx.Value(assistantKey).(bool)
	return v
}
