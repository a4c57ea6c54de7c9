package cli

import (
	"context"

	"github.com/licentia/licentia/internal/licentia"
)

// memberCommand runs `member login-link`: a new one-time link that sets a
// member's console password, valid 24 hours.
func memberCommand(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 || args[0] != "login-link" {
		return usageError("member: the subcommand is login-link")
	}
	return withMember(ctx, "member login-link", args[1:], env, func(op *operator, o *licentia.Organization, email string) error {
		l, err := op.admin.NewLoginLink(ctx, licentia.OperatorActor, o.ID, email)
		if err != nil {
			return err
		}
		printJSON(env.Stdout, map[string]any{"url": l.URL, "expires_at": licentia.FormatTime(l.ExpiresAt)})
		return nil
	})
}

// assistantCommand runs `assistant token`: an access token for an AI
// assistant acting as a member, as a grant made on the consent page gives.
func assistantCommand(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 || args[0] != "token" {
		return usageError("assistant: the subcommand is token")
	}
	return withMember(ctx, "assistant token", args[1:], env, func(op *operator, o *licentia.Organization, email string) error {
		t, err := op.admin.NewAssistantToken(ctx, licentia.OperatorActor, o.ID, email)
		if err != nil {
			return err
		}
		printJSON(env.Stdout, map[string]any{"access_token": t.Token, "expires_at": licentia.FormatTime(t.ExpiresAt)})
		return nil
	})
}

// withMember reads --org and --email and runs fn with the organization.
func withMember(ctx context.Context, name string, args []string, env Env, fn func(*operator, *licentia.Organization, string) error) error {
	fs := newFlags(name)
	org := fs.String("org", "", "organization slug")
	email := fs.String("email", "", "the member's email address")
	if rest, err := parseFlags(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return usageError("%s: unexpected argument %q", name, rest[0])
	}
	if *org == "" || *email == "" {
		return usageError("%s: --org and --email are required", name)
	}
	op, err := openOperator(ctx, env)
	if err != nil {
		return err
	}
	defer op.Close()
	o, err := op.admin.OrganizationBySlug(ctx, *org)
	if err != nil {
		return err
	}
	return fn(op, o, *email)
}
