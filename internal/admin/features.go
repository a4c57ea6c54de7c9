package admin

import (
	"context"
	"fmt"
	"slices"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// pathCode is where a feature code given in the path is reported.
const pathCode = "path.code"

// FeatureSave adds a feature to a product's catalogue or renames it.
type FeatureSave struct {
	licentia.Decoded
	Name *string `json:"name" input:"required"`
}

// Validate reports every problem of a save of the feature code.
func (in *FeatureSave) Validate(code string) licentia.Issues {
	is := append(withPathIssue(in.Before, pathCode, licentia.CheckFeatureCode(code)), licentia.CheckFields(in)...)
	var rules licentia.Issues
	rules.CheckString("/name", in.Name, licentia.CheckFeatureName)
	is.Merge(rules)
	return is
}

// Features lists a product's features by code; another organization's
// product answers product_not_found.
func (s *Service) Features(ctx context.Context, orgID, productID string) ([]licentia.Feature, error) {
	if _, err := s.store.Product(ctx, orgID, productID); err != nil {
		return nil, err
	}
	return s.store.ProductFeatures(ctx, orgID, productID)
}

// SaveFeature adds the feature code to a product's catalogue, or renames
// it, in the order of checks: 400, 404 product, 409 past MaxFeatures. A
// rename to the same name writes nothing.
func (s *Service) SaveFeature(ctx context.Context, actor licentia.Actor, orgID, productID, code string, in FeatureSave) (*licentia.Feature, error) {
	if err := in.Validate(code).Err(); err != nil {
		return nil, err
	}
	now := s.now()
	var out *licentia.Feature
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.Product(ctx, orgID, productID); err != nil {
			return err
		}
		fs, err := tx.ProductFeatures(ctx, orgID, productID)
		if err != nil {
			return err
		}
		if i := slices.IndexFunc(fs, func(f licentia.Feature) bool { return f.Code == code }); i >= 0 && fs[i].Name == *in.Name {
			out = &fs[i]
			return nil
		}
		stored, created, err := tx.PutProductFeature(ctx, &licentia.Feature{ProductID: productID, OrgID: orgID, Code: code, Name: *in.Name, CreatedAt: now})
		if err != nil {
			return err
		}
		out = stored
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditProductFeatureSaved, Actor: actor, At: now},
			map[string]any{"product_id": productID, "code": code, "name": *in.Name, "created": created})
	})
	if err != nil {
		return nil, fmt.Errorf("save feature: %w", err)
	}
	return out, nil
}

// FeatureDelete is what deletes a feature: nothing but the path.
type FeatureDelete struct {
	licentia.Decoded
}

// DeleteFeature takes a feature out of a product's catalogue: 400 bad
// code, 404 product or feature, 409 while any licence grants it.
func (s *Service) DeleteFeature(ctx context.Context, actor licentia.Actor, orgID, productID, code string, in FeatureDelete) error {
	if err := withPathIssue(in.Before, pathCode, licentia.CheckFeatureCode(code)).Err(); err != nil {
		return err
	}
	now := s.now()
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.Product(ctx, orgID, productID); err != nil {
			return err
		}
		if err := tx.DeleteProductFeature(ctx, orgID, productID, code); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditProductFeatureDeleted, Actor: actor, At: now},
			map[string]any{"product_id": productID, "code": code})
	})
	if err != nil {
		return fmt.Errorf("delete feature: %w", err)
	}
	return nil
}

// resolveGrants checks requested grants against the product's catalogue
// and returns them ordered by code; an element that is not a feature of
// the product is a validation issue at path/<i>.
func resolveGrants(ctx context.Context, r store.Reader, orgID, productID, path string, reqs []licentia.GrantRequest) ([]licentia.FeatureGrant, error) {
	var catalogue []licentia.Feature
	if len(reqs) > 0 {
		var err error
		if catalogue, err = r.ProductFeatures(ctx, orgID, productID); err != nil {
			return nil, err
		}
	}
	var is licentia.Issues
	gs := licentia.CheckGrantRequests(&is, path, reqs, nonNil(catalogue))
	if err := is.Err(); err != nil {
		return nil, err
	}
	if len(gs) == 0 {
		return nil, nil
	}
	return gs, nil
}

// nonNil returns fs, or an empty catalogue for nil: a product with no
// features grants none.
func nonNil(fs []licentia.Feature) []licentia.Feature {
	if fs == nil {
		return []licentia.Feature{}
	}
	return fs
}

// grantsAudit is the audit data of a change of grants: before and after.
func grantsAudit(before, after []licentia.FeatureGrant) map[string]any {
	return map[string]any{"before": events.GrantsOf(before), "after": events.GrantsOf(after)}
}

// grantCodes are the codes of grants, in their order.
func grantCodes(gs []licentia.FeatureGrant) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Code)
	}
	return out
}

// nonNilCodes is codes, or an empty list for nil, as answers and audit
// entries show none.
func nonNilCodes(codes []string) []string {
	if codes == nil {
		return []string{}
	}
	return codes
}
