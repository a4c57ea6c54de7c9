"""Verdicts signed here, to hold the reading of their payload to what the Go
SDK's encoding/json does with the same bytes (each case was checked against
Go), and check_verdict's judgement to the Go SDK's Client."""

import base64
import json
import unittest
from dataclasses import replace
from datetime import datetime, timezone

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from licentia_verify import (
    Product,
    VerdictInvalid,
    VerdictMismatch,
    VerificationError,
    check_verdict,
    fingerprint,
    verify_verdict,
)

PRIVATE = Ed25519PrivateKey.generate()
RAW = PRIVATE.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
PRODUCT = Product(id="photo-editor", key_prefix="PHOTO", public_keys=(RAW,))

BASE = {
    "format": 1,
    "licence_id": "0b7d4f1e-8c2a-4e6b-9f3d-5a1c7e9b2d4f",
    "product_id": "photo-editor",
    "machine_id": "machine-1",
    "activation_id": "5f0c9a7e-3b1d-4c8e-a2f6-9d4b7e1c3a5f",
    "state": "active",
    "expires_at": "2027-11-22T00:00:00.000Z",
    "trial_ends_at": None,
    "major": 3,
    "limit_kind": "seats",
    "limit_count": 2,
    "issued_at": "2026-11-22T01:16:13.000Z",
    "valid_until": "2026-11-29T01:16:13.000Z",
    "key_fingerprint": fingerprint(RAW),
}


def b64(b):
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def signed(payload, domain="licentia/verdict/v1"):
    """A verdict of exactly these payload bytes under domain."""
    p = payload.encode() if isinstance(payload, str) else payload
    sig = PRIVATE.sign(domain.encode() + b"\x00verdict\x00" + p)
    return f"v1.{b64(p)}.{b64(sig)}"


def js(extra="", **changes):
    """BASE with changes, as JSON, with extra written after the fields."""
    s = json.dumps({**BASE, **changes}, separators=(",", ":"))
    return s if not extra else s[:-1] + "," + extra + "}"


def outcome(s, product=PRODUCT):
    try:
        verify_verdict(s, product)
    except VerificationError as e:
        return e.code
    return "valid"


class Payload(unittest.TestCase):
    def test_read_as_go_reads_it(self):
        nested = "[" * 3000 + "{}" + "]" * 3000
        cases = [
            ("as the server writes it", js(), "valid", None),
            ("unknown fields, nested deep", js(f'"x":{nested}'), "valid", None),
            ("names in another case", js().replace('"format"', '"FORMAT"').replace('"state"', '"State"'), "valid", None),
            ("long s and Kelvin sign fold to s and k", js('"\u017ftate":"trial","\u212aey_fingerprint":"x"'), "valid",
             lambda v: self.assertEqual((v.state, v.key_fingerprint), ("trial", "x"))),
            ("dotted capital I does not fold to i", js('"l\u0130cence_id":"x"'), "valid",
             lambda v: self.assertEqual(v.licence_id, BASE["licence_id"])),
            ("the last of a repeated name wins", js('"state":"revoked","STATE":"expired"'), "valid",
             lambda v: self.assertEqual(v.state, "expired")),
            ("null leaves a string field as it was", js('"state":null'), "valid", lambda v: self.assertEqual(v.state, "active")),
            ("null empties a nullable field", js('"activation_id":null'), "valid", lambda v: self.assertIsNone(v.activation_id)),
            ("an integer written 3.0", js(major="M").replace('"M"', "3.0"), "verdict_invalid", None),
            ("an integer written 3e0", js(major="M").replace('"M"', "3e0"), "verdict_invalid", None),
            ("-0 is 0", js(major="M").replace('"M"', "-0"), "valid", lambda v: self.assertEqual(v.major, 0)),
            ("the largest int64", js(limit_count=2**63 - 1), "valid", None),
            ("past int64", js(limit_count=2**63), "verdict_invalid", None),
            ("a number for a string", js(state=1), "verdict_invalid", None),
            ("a string for a number", js(major="3"), "verdict_invalid", None),
            ("an object for a string", js(state={}), "verdict_invalid", None),
            ("a boolean for a nullable string", js(expires_at=True), "verdict_invalid", None),
            ("format 2", js(format=2), "verdict_invalid", None),
            ("no format", js().replace('"format":1,', ""), "verdict_invalid", None),
            ("another product", js(product_id="notes"), "verdict_invalid", None),
            ("a top-level null", "null", "verdict_invalid", None),
            ("a top-level array", "[]", "verdict_invalid", None),
            ("a trailing comma", js()[:-1] + ",}", "verdict_invalid", None),
            ("NaN", js('"x":NaN'), "verdict_invalid", None),
            ("a leading zero", js('"x":01'), "verdict_invalid", None),
            ("a raw control character", js('"x":"a\x01"'), "verdict_invalid", None),
            ("trailing white space", js() + " \n", "valid", None),
            ("a trailing value", js() + "{}", "verdict_invalid", None),
            ("unpaired surrogate escapes read as U+FFFD", js('"state":"\\ud800x\\udc00\\ud83d\\ude00"'), "valid",
             lambda v: self.assertEqual(v.state, "\ufffdx\ufffd\U0001f600")),
            ("each byte of invalid UTF-8 reads as U+FFFD",
             js()[:-1].encode() + b',"state":"\xe2\x82A\xed\xa0\x80\xc3\xa9"}', "valid",
             lambda v: self.assertEqual(v.state, "\ufffd\ufffdA\ufffd\ufffd\ufffd\u00e9")),
        ]
        for name, payload, want, check in cases:
            with self.subTest(name):
                s = signed(payload)
                self.assertEqual(outcome(s), want)
                if check:
                    check(verify_verdict(s, PRODUCT))

    def test_features_read_as_go_reads_them(self):
        def f(code, expires_at=None):
            return {"code": code, "expires_at": expires_at}

        # want: the features read ([] for none), or "verdict_invalid".
        cases = [
            ("as the server writes them",
             '"features":[{"code":"export-pdf","expires_at":"2026-12-22T00:00:00.000Z"},{"code":"sso","expires_at":null}]',
             [f("export-pdf", "2026-12-22T00:00:00.000Z"), f("sso")]),
            ("none", '"features":[]', []),
            ("null", '"features":null', []),
            ("an object", '"features":{}', "verdict_invalid"),
            ("a string", '"features":"sso"', "verdict_invalid"),
            ("a number element", '"features":[1]', "verdict_invalid"),
            ("a string element", '"features":["sso"]', "verdict_invalid"),
            ("an array element", '"features":[[]]', "verdict_invalid"),
            ("a null element is an empty grant", '"features":[null]', [f("")]),
            ("a number code", '"features":[{"code":1}]', "verdict_invalid"),
            ("a boolean expiry", '"features":[{"expires_at":false}]', "verdict_invalid"),
            ("names in another case, long s, unknown names",
             '"features":[{"CODE":"a","Expire\u017f_At":"x","extra":[[{}]]}]', [f("a", "x")]),
            ("the order as written", '"features":[{"code":"b"},{"code":"a"}]', [f("b"), f("a")]),
            ("null code leaves it empty", '"features":[{"code":"a"},{"code":null}]', [f("a"), f("")]),
            ("nested unknown values", '"features":[{"x":[[[[]]]],"code":"a"}]', [f("a")]),
            ("the last of a repeated name in a grant wins",
             '"features":[{"code":"a","code":"b","expires_at":"x","expires_at":null}]', [f("b")]),
            ("a repeated features reuses the earlier elements",
             '"features":[{"code":"a","expires_at":"x"},{"code":"b"}],"features":[{"code":"c"}]', [f("c", "x")]),
            ("elements past a shorter repeat come back",
             '"features":[{"code":"a","expires_at":"x"},{"code":"b","expires_at":"y"}],"features":[{"code":"c"}],"features":[{},{}]',
             [f("c", "x"), f("b", "y")]),
            ("null starts afresh",
             '"features":[{"code":"a","expires_at":"x"}],"features":null,"features":[{"code":"c"}]', [f("c")]),
            ("[] starts afresh", '"features":[{"code":"a","expires_at":"x"}],"features":[],"features":[{}]', [f("")]),
            ("a null element keeps the earlier one", '"features":[{"code":"a","expires_at":"x"}],"FEATURES":[null]', [f("a", "x")]),
            ("a later wrong type", '"features":[{"code":"a"}],"features":true', "verdict_invalid"),
        ]
        for name, extra, want in cases:
            with self.subTest(name):
                s = signed(js(extra))
                if want == "verdict_invalid":
                    self.assertEqual(outcome(s), want)
                    continue
                got = verify_verdict(s, PRODUCT)
                self.assertEqual([dict(x.__dict__) for x in got.features], want)
                self.assertEqual(got.to_json().get("features"), want or None)

    def test_feature_judged_as_go_judges_it(self):
        v = verify_verdict(signed(js(
            '"features":[{"code":"export-pdf","expires_at":"2026-12-22T00:00:00.000Z"},'
            '{"code":"sso","expires_at":null},{"code":"x","expires_at":"soon"}]')), PRODUCT)
        self.assertTrue(v.feature("sso", at("2030-01-01T00:00:00Z")), "no expiry")
        self.assertTrue(v.feature("export-pdf", at("2026-12-21T23:59:59.999999Z")), "before its expiry")
        self.assertFalse(v.feature("export-pdf", at("2026-12-22T00:00:00Z")), "at its expiry")
        self.assertTrue(v.feature("export-pdf", datetime(2026, 12, 21)), "a naive now is UTC")
        self.assertFalse(v.feature("x", at("2020-01-01T00:00:00Z")), "an expiry that is not a time")
        self.assertFalse(v.feature("sso-2", at("2026-01-01T00:00:00Z")), "not granted")
        self.assertFalse(v.feature("SSO", at("2026-01-01T00:00:00Z")), "codes are exact")
        self.assertFalse(verify_verdict(signed(js()), PRODUCT).feature("sso"), "a verdict without features")

    def test_encoding_read_as_go_reads_it(self):
        good = signed(js())
        _, payload, sig = good.split(".")
        standard = sig.replace("-", "+").replace("_", "/")
        cases = [
            ("surrounding white space, U+0085 and U+3000 included", f"\x85 {good}\n\u3000", "valid"),
            ("a byte-order mark is not white space", f"\ufeff{good}", "verdict_invalid"),
            ("U+001F is not white space", f"\x1f{good}", "verdict_invalid"),
            ("line breaks inside the parts are skipped", f"v1.{payload[:10]}\r\n{payload[10:]}.{sig[:5]}\n{sig[5:]}", "valid"),
            ("padding", f"{good}==", "verdict_invalid"),
            ("standard base64", f"v1.{payload}.{standard}", "valid" if standard == sig else "verdict_invalid"),
            ("a fourth part", f"{good}.", "verdict_invalid"),
            ("upper-case tag", "V1" + good[2:], "verdict_invalid"),
            ("signed in another domain", signed(js(), "licentia/licence-key/v1"), "verdict_invalid"),
            ("over 16 KB", signed(js('"x":"' + "a" * 16384 + '"')), "verdict_invalid"),
        ]
        for name, verdict, want in cases:
            with self.subTest(name):
                self.assertEqual(outcome(verdict), want)
        own = replace(PRODUCT, verdict_domain="example.com/verdict")
        self.assertEqual(verify_verdict(signed(js(), "example.com/verdict"), own).state, "active")


def at(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


class Check(unittest.TestCase):
    OPTS = dict(machine_id=BASE["machine_id"], licence_id=BASE["licence_id"], now=at("2026-11-23T00:00:00Z"), major=3)

    def test_judges_as_the_go_client(self):
        cases = [
            ("active", js(), {}, dict(valid=True, reason=None, seated=True, stale=False)),
            ("past valid_until: stale, still valid", js(), dict(now=at("2026-12-01T00:00:00Z")), dict(valid=True, stale=True)),
            ("revoked", js(state="revoked", activation_id=None), {}, dict(valid=False, reason="revoked", seated=False)),
            ("expired state", js(state="expired"), {}, dict(valid=False, reason="expired")),
            ("expires_at reached", js(), dict(now=at("2027-11-22T00:00:00Z")), dict(valid=False, reason="expired")),
            ("just before expires_at", js(), dict(now=at("2027-11-21T23:59:59.999999Z")), dict(valid=True)),
            ("a naive now is UTC", js(), dict(now=datetime(2027, 11, 22)), dict(valid=False, reason="expired")),
            ("a newer major", js(), dict(major=4), dict(valid=False, reason="newer_major")),
            ("an older major runs", js(), dict(major=2), dict(valid=True)),
            ("no seat, not required", js(activation_id=None), {}, dict(valid=True, seated=False)),
            ("no seat, required", js(activation_id=None), dict(require_seat=True), dict(valid=False, reason="seat_freed")),
        ]
        for name, payload, opts, want in cases:
            with self.subTest(name):
                j = check_verdict(signed(payload), PRODUCT, **{**self.OPTS, **opts})
                self.assertEqual({k: getattr(j, k) for k in want}, want)

    def test_refusals(self):
        good = signed(js())
        with self.assertRaises(VerdictMismatch):
            check_verdict(good, PRODUCT, **{**self.OPTS, "machine_id": "machine-2"})
        with self.assertRaises(VerdictMismatch):
            check_verdict(good, PRODUCT, **{**self.OPTS, "licence_id": "7c0e2b9a-1d4f-4a8e-b6c3-2f5d8e1a9c7b"})
        with self.assertRaises(VerdictInvalid):
            check_verdict(signed(js(issued_at="yesterday")), PRODUCT, **self.OPTS)


if __name__ == "__main__":
    unittest.main()
