"""Offline verification of Licentia licence keys and signed verdicts.

It verifies as the Go SDK (github.com/licentia/licentia/sdk) does: the same
inputs are accepted and refused, for the same reasons. The formats are in
docs/licence-key-format.md and docs/verdict-format.md.
"""

from .check import EXPIRED, NEWER_MAJOR, REVOKED, SEAT_FREED, Judgement, check_verdict
from .errors import LicenceKeyInvalid, LicenceWrongProduct, VerdictInvalid, VerdictMismatch, VerificationError
from .licencekey import DEFAULT_LICENCE_DOMAIN, LICENCE_KEY_FORMAT, LicenceKey, is_key_prefix, parse_licence_key, product_tag
from .payload import Verdict, VerdictFeature
from .verdict import DEFAULT_VERDICT_DOMAIN, VERDICT_FORMAT, verify_verdict
from .verifier import Product, VerifiedKey, Verifier, fingerprint, parse_public_key, product_from_json, verify_licence_key

__all__ = [
    "DEFAULT_LICENCE_DOMAIN",
    "DEFAULT_VERDICT_DOMAIN",
    "EXPIRED",
    "LICENCE_KEY_FORMAT",
    "NEWER_MAJOR",
    "REVOKED",
    "SEAT_FREED",
    "VERDICT_FORMAT",
    "Judgement",
    "LicenceKey",
    "LicenceKeyInvalid",
    "LicenceWrongProduct",
    "Product",
    "Verdict",
    "VerdictFeature",
    "VerdictInvalid",
    "VerdictMismatch",
    "VerificationError",
    "VerifiedKey",
    "Verifier",
    "check_verdict",
    "fingerprint",
    "is_key_prefix",
    "parse_licence_key",
    "parse_public_key",
    "product_from_json",
    "product_tag",
    "verify_licence_key",
    "verify_verdict",
]
