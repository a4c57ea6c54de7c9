package oauth

import "github.com/modelcontextprotocol/go-sdk/oauthex"

// ServerMetadata is the authorization server's metadata document (RFC
// 8414). The MCP SDK's oauthex.AuthServerMeta would always write
// jwks_uri, which this server has none of, so the document is its own.
type ServerMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	RegistrationEndpoint                       string   `json:"registration_endpoint"`
	RevocationEndpoint                         string   `json:"revocation_endpoint"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported     []string `json:"revocation_endpoint_auth_methods_supported"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
}

// What the server supports: public clients with PKCE S256 and nothing
// else.
var (
	responseTypes = []string{"code"}
	grantTypes    = []string{grantAuthorizationCode, grantRefreshToken}
	authMethods   = []string{authMethodNone}
)

const authMethodNone = "none"

// Metadata is the document at /.well-known/oauth-authorization-server.
func (s *Service) Metadata() ServerMetadata {
	return ServerMetadata{
		Issuer:                                     s.issuer,
		AuthorizationEndpoint:                      s.issuer + "/oauth/authorize",
		TokenEndpoint:                              s.issuer + "/oauth/token",
		RegistrationEndpoint:                       s.issuer + "/oauth/register",
		RevocationEndpoint:                         s.issuer + "/oauth/revoke",
		ResponseTypesSupported:                     responseTypes,
		GrantTypesSupported:                        grantTypes,
		CodeChallengeMethodsSupported:              []string{challengeS256},
		TokenEndpointAuthMethodsSupported:          authMethods,
		RevocationEndpointAuthMethodsSupported:     authMethods,
		AuthorizationResponseIssParameterSupported: true,
	}
}

// ProtectedResource is the MCP server's metadata document (RFC 9728), at
// /.well-known/oauth-protected-resource and, by the RFC's rule of
// inserting the well-known part before the resource's path,
// /.well-known/oauth-protected-resource/mcp.
func (s *Service) ProtectedResource() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               s.Resource(),
		AuthorizationServers:   []string{s.issuer},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Licentia",
	}
}
