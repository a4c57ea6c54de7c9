package cli

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

func migrateCommand(ctx context.Context, args []string, env Env) error {
	if _, err := parseFlags(newFlags("migrate"), args); err != nil {
		return err
	}
	op, err := openOperator(ctx, env)
	if err != nil {
		return err
	}
	defer op.Close()
	printJSON(env.Stdout, map[string]string{"status": "migrated"})
	return nil
}

func orgCommand(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 || args[0] != "create" {
		return usageError("org: the subcommand is create")
	}
	fs := newFlags("org create")
	name := fs.String("name", "", "organization name")
	slug := fs.String("slug", "", "organization slug")
	plan := fs.String("plan", "", "plan: free, indie, studio or business")
	owner := fs.String("owner-email", "", "owner's email address")
	if rest, err := parseFlags(fs, args[1:]); err != nil {
		return err
	} else if len(rest) > 0 {
		return usageError("org create: unexpected argument %q", rest[0])
	}
	op, err := openOperator(ctx, env)
	if err != nil {
		return err
	}
	defer op.Close()
	o, err := op.admin.CreateOrganization(ctx, licentia.OperatorActor, admin.NewOrganization{
		Name: *name, Slug: *slug, Plan: licentia.PlanID(*plan), OwnerEmail: *owner,
	})
	if err != nil {
		return err
	}
	// The owner's first sign-in: a link that sets their password. When it
	// cannot be made, member login-link makes one later.
	setup, err := op.admin.NewLoginLink(ctx, licentia.OperatorActor, o.ID, *owner)
	if err != nil {
		return err
	}
	printJSON(env.Stdout, map[string]any{
		"id": o.ID, "name": o.Name, "slug": o.Slug, "plan": o.Plan, "created_at": licentia.FormatTime(o.CreatedAt),
		"setup_url": setup.URL, "setup_expires_at": licentia.FormatTime(setup.ExpiresAt),
	})
	return nil
}

func apikeyCommand(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		return usageError("apikey: the subcommands are create, list, revoke")
	}
	fs := newFlags("apikey " + args[0])
	org := fs.String("org", "", "organization slug")
	var scopes, name, expires *string
	if args[0] == "create" {
		scopes = fs.String("scopes", "", "comma-separated scopes")
		name = fs.String("name", "", "a name for the key")
		expires = fs.String("expires-at", "", "RFC 3339 expiry time")
	}
	rest, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if *org == "" {
		return usageError("apikey %s: --org is required", args[0])
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
	switch args[0] {
	case "create":
		if len(rest) > 0 {
			return usageError("apikey create: unexpected argument %q", rest[0])
		}
		return apikeyCreate(ctx, op, o, *scopes, *name, *expires, env)
	case "list":
		if len(rest) > 0 {
			return usageError("apikey list: unexpected argument %q", rest[0])
		}
		return apikeyList(ctx, op, o, env)
	case "revoke":
		if len(rest) != 1 {
			return usageError("apikey revoke: give one key id")
		}
		changed, err := op.admin.RevokeAPIKey(ctx, licentia.OperatorActor, o.ID, rest[0])
		if err != nil {
			return err
		}
		printJSON(env.Stdout, map[string]any{"id": rest[0], "revoked": true, "changed": changed})
		return nil
	}
	return usageError("apikey: unknown subcommand %q", args[0])
}

func apikeyCreate(ctx context.Context, op *operator, o *licentia.Organization, scopesCSV, name, expires string, env Env) error {
	scopes, err := admin.ParseScopes(scopesCSV)
	if err != nil {
		return err
	}
	in := admin.NewAPIKey{Name: name, Scopes: scopes}
	if expires != "" {
		t, err := time.Parse(time.RFC3339Nano, expires)
		if err != nil {
			return usageError("apikey create: --expires-at must be an RFC 3339 time with an offset")
		}
		in.ExpiresAt = &t
	}
	key, k, err := op.admin.CreateAPIKey(ctx, licentia.OperatorActor, o.ID, in)
	if err != nil {
		return err
	}
	printJSON(env.Stdout, map[string]any{
		"id": k.ID, "key": key.Reveal(), "prefix": k.Prefix, "name": k.Name,
		"scopes": k.Scopes, "expires_at": licentia.FormatTimePtr(k.ExpiresAt), "created_at": licentia.FormatTime(k.CreatedAt),
	})
	return nil
}

func apikeyList(ctx context.Context, op *operator, o *licentia.Organization, env Env) error {
	keys, err := op.admin.APIKeys(ctx, o.ID)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(keys))
	for i, k := range keys {
		out[i] = map[string]any{
			"id": k.ID, "prefix": k.Prefix, "name": k.Name, "scopes": k.Scopes,
			"expires_at": licentia.FormatTimePtr(k.ExpiresAt), "revoked_at": licentia.FormatTimePtr(k.RevokedAt),
			"created_at": licentia.FormatTime(k.CreatedAt),
		}
	}
	printJSON(env.Stdout, map[string]any{"api_keys": out})
	return nil
}
