package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// redisLogger takes what go-redis logs (a failed dial, a pool problem) into
// the service's JSON log as warnings. go-redis otherwise prints plain-text
// lines to stderr, one per failed dial while Redis is down, which break a
// log read as one JSON object a line.
type redisLogger struct {
	log *slog.Logger
	// password is the one in the URL: go-redis's messages are not ours to
	// vouch for, so it is hidden should one ever carry it.
	password string
}

// Printf is go-redis's logging interface.
func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: ")
	if l.password != "" {
		msg = strings.ReplaceAll(msg, l.password, "<redacted>")
	}
	l.log.LogAttrs(ctx, slog.LevelWarn, "redis client", slog.String("error", msg))
}
