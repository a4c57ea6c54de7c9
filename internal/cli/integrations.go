package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
)

func integrationCommand(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		return usageError("integration: the subcommands are connect, list, set-webhook-secret, disconnect")
	}
	fs := newFlags("integration " + args[0])
	org := fs.String("org", "", "organization slug")
	var provider, name, keyFile, secretFile *string
	if args[0] == "connect" {
		provider = fs.String("provider", "", "stripe, paddle or lemonsqueezy")
		name = fs.String("name", "", "a name for the integration")
		keyFile = fs.String("api-key-file", "", "file holding the provider's API key")
		secretFile = fs.String("webhook-secret-file", "", "file holding the provider's webhook signing secret (optional)")
	}
	if args[0] == "set-webhook-secret" {
		secretFile = fs.String("webhook-secret-file", "", "file holding the provider's webhook signing secret")
	}
	rest, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if *org == "" {
		return usageError("integration %s: --org is required", args[0])
	}
	switch args[0] {
	case "connect":
		if len(rest) > 0 {
			return usageError("integration connect: unexpected argument %q", rest[0])
		}
		in := admin.ConnectIntegration{Provider: *provider, Name: *name}
		if in.APIKey, err = readSecretFile("connect", "--api-key-file", *keyFile); err != nil {
			return err
		}
		// The webhook secret may come later, with set-webhook-secret; a
		// file given must hold one.
		if *secretFile != "" {
			if in.WebhookSecret, err = readSecretFile("connect", "--webhook-secret-file", *secretFile); err != nil {
				return err
			}
			if in.WebhookSecret == "" {
				return usageError("integration connect: --webhook-secret-file is empty")
			}
		}
		return withOrganization(ctx, env, *org, func(op *operator, o *licentia.Organization) error {
			v, err := op.admin.ConnectIntegration(ctx, licentia.OperatorActor, o.ID, in)
			if err != nil {
				return err
			}
			printJSON(env.Stdout, integrationJSON(v))
			op.noteWebhookURL(env, v)
			return nil
		})
	case "list":
		if len(rest) > 0 {
			return usageError("integration list: unexpected argument %q", rest[0])
		}
		return withOrganization(ctx, env, *org, func(op *operator, o *licentia.Organization) error {
			vs, err := op.admin.Integrations(ctx, o.ID)
			if err != nil {
				return err
			}
			out := make([]map[string]any, len(vs))
			for i, v := range vs {
				out[i] = integrationJSON(&v)
			}
			printJSON(env.Stdout, map[string]any{"integrations": out})
			return nil
		})
	case "set-webhook-secret":
		if len(rest) != 1 {
			return usageError("integration set-webhook-secret: give one integration id")
		}
		id, ok := licentia.ParseUUID(rest[0])
		if !ok {
			return usageError("integration set-webhook-secret: %q is not an integration id", rest[0])
		}
		secret, err := readSecretFile("set-webhook-secret", "--webhook-secret-file", *secretFile)
		if err != nil {
			return err
		}
		return withOrganization(ctx, env, *org, func(op *operator, o *licentia.Organization) error {
			v, err := op.admin.SetWebhookSecret(ctx, licentia.OperatorActor, o.ID, id, secret)
			if err != nil {
				return err
			}
			printJSON(env.Stdout, integrationJSON(v))
			return nil
		})
	case "disconnect":
		if len(rest) != 1 {
			return usageError("integration disconnect: give one integration id")
		}
		id, ok := licentia.ParseUUID(rest[0])
		if !ok {
			return usageError("integration disconnect: %q is not an integration id", rest[0])
		}
		return withOrganization(ctx, env, *org, func(op *operator, o *licentia.Organization) error {
			if err := op.admin.DisconnectIntegration(ctx, licentia.OperatorActor, o.ID, id); err != nil {
				return err
			}
			printJSON(env.Stdout, map[string]any{"id": id, "disconnected": true})
			return nil
		})
	}
	return usageError("integration: unknown subcommand %q", args[0])
}

// noteWebhookURL says on stderr why webhook_url is null or only the listen
// address, and which variable to set; stdout keeps its JSON shape.
func (op *operator) noteWebhookURL(env Env, v *admin.IntegrationView) {
	switch {
	case v.WebhookURL == nil:
		fmt.Fprintf(env.Stderr, "integration connect: webhook_url is null because the service has no public address: set %s to it, such as https://licences.example.com\n",
			config.BaseURLVariable)
	case op.baseURLDefaulted:
		fmt.Fprintf(env.Stderr, "integration connect: webhook_url is on the listen address because %s is unset; a payment provider cannot reach it: set %s to the service's public address and run integration list\n",
			config.BaseURLVariable, config.BaseURLVariable)
	}
}

// withOrganization runs fn with an operator that can seal credentials and
// the organization of slug.
func withOrganization(ctx context.Context, env Env, slug string, fn func(*operator, *licentia.Organization) error) error {
	op, err := openSealingOperator(ctx, env)
	if err != nil {
		return err
	}
	defer op.Close()
	o, err := op.admin.OrganizationBySlug(ctx, slug)
	if err != nil {
		return err
	}
	return fn(op, o)
}

// readSecretFile reads a credential from a file, without the line ending
// an editor adds. Its content never appears in an error.
func readSecretFile(command, flagName, path string) (providers.Secret, error) {
	if path == "" {
		return "", usageError("integration %s: %s is required", command, flagName)
	}
	raw, err := readNamedFile("integration "+command, flagName, path)
	if err != nil {
		return "", err
	}
	return providers.Secret(strings.TrimSpace(string(raw))), nil
}

// integrationJSON is an integration as the commands print it: the fields
// of the API's integration object, never a credential.
func integrationJSON(v *admin.IntegrationView) map[string]any {
	i := v.Integration
	return map[string]any{"id": i.ID, "provider": i.Provider, "name": i.Name, "account_id": i.AccountID,
		"livemode": i.Livemode, "webhook_url": v.WebhookURL, "created_at": licentia.FormatTime(i.CreatedAt)}
}
