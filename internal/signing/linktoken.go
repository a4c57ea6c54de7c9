package signing

import "encoding/base64"

// LinkToken derives the token of a mailed link from the link's id, under
// the master key, for purpose (such as "portal-sign-in"). A link row keeps
// only the token's hash and its mail only the id, so the token is at rest
// nowhere: it is derived again when the mail is rendered, as licence keys
// are. It is 43 characters of URL-safe base64, which no mail client or
// quoted-printable encoder breaks. A master key rotated while a link's mail
// waits derives another token, so that link does not sign in.
func (m *MasterKey) LinkToken(purpose, id string) string {
	return base64.RawURLEncoding.EncodeToString(m.Tag("link/"+purpose, []byte(id)))
}

// LinkToken derives a link's token under the current master key (see
// MasterKey.LinkToken), or answers signing_keys_not_configured.
func (r *Keyring) LinkToken(purpose, id string) (string, error) {
	m, err := r.Master()
	if err != nil {
		return "", err
	}
	return m.LinkToken(purpose, id), nil
}
