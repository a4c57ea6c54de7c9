"""The shared vectors of testdata/vectors, as sdk/vectors_test.go and
sdk/verdictvectors_test.go read them, and single-character edits of their
valid keys and verdicts."""

import json
import os
import unittest
from dataclasses import replace

from licentia_verify import (
    VerificationError,
    Verifier,
    product_from_json,
    verify_licence_key,
    verify_verdict,
)

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "testdata", "vectors")

with open(os.path.join(VECTORS, "licence-keys.json"), encoding="utf-8") as f:
    KEY_FILE = json.load(f)
with open(os.path.join(VECTORS, "verdicts.json"), encoding="utf-8") as f:
    VERDICT_FILE = json.load(f)
KEY_PRODUCTS = [product_from_json(p) for p in KEY_FILE["products"]]
VERDICT_PRODUCT = product_from_json(VERDICT_FILE["product"])

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def outcome(fn, *args):
    """The code a call raises, or "valid"."""
    try:
        fn(*args)
    except VerificationError as e:
        return e.code
    return "valid"


def edits(s, start, alphabet):
    """s with each character of the alphabet from start on replaced by the
    three that follow it in the alphabet, in turn."""
    for i in range(start, len(s)):
        c = s[i]
        at = alphabet.find(c) if c in alphabet else alphabet.find(c.upper())
        if at < 0:
            continue
        for k in range(1, 4):
            yield s[:i] + alphabet[(at + k) % len(alphabet)] + s[i + 1 :]


class LicenceKeyVectors(unittest.TestCase):
    def test_vectors(self):
        self.assertTrue(KEY_FILE["vectors"], "no vectors")
        v = Verifier(*KEY_PRODUCTS)
        for vec in KEY_FILE["vectors"]:
            with self.subTest(vec["name"]):
                self.assertEqual(outcome(v.verify_licence_key, vec["key"]), vec["outcome"])
                self.assertEqual(outcome(verify_licence_key, vec["key"], *KEY_PRODUCTS), vec["outcome"])
                if vec["outcome"] == "valid":
                    k = v.verify_licence_key(vec["key"])
                    self.assertEqual((k.product_id, k.licence_id), (vec["product_id"], vec["licence_id"]))

    def test_every_edit_is_refused(self):
        v = Verifier(*KEY_PRODUCTS)
        n = 0
        for vec in KEY_FILE["vectors"]:
            if vec["outcome"] != "valid":
                continue
            key = vec["key"].strip()
            for edited in edits(key, key.index("_") + 1, CROCKFORD):
                self.assertEqual(outcome(v.verify_licence_key, edited), "licence_key_invalid", edited)
                n += 1
        self.assertGreaterEqual(n, 4 * 143 * 3)

    def test_no_keys_or_keys_of_the_wrong_size_accept_nothing(self):
        key = KEY_FILE["vectors"][0]["key"]
        for keys in ((), (bytes(31),), (bytes(32),)):
            self.assertEqual(outcome(verify_licence_key, key, replace(KEY_PRODUCTS[0], public_keys=keys)), "licence_key_invalid")

    def test_bad_or_repeated_prefix(self):
        photo = KEY_PRODUCTS[0]
        with self.assertRaisesRegex(ValueError, "bad key prefix"):
            Verifier(replace(photo, key_prefix="1AB"))
        with self.assertRaisesRegex(ValueError, "used twice"):
            Verifier(photo, replace(photo, id="other", key_prefix="photo"))


class VerdictVectors(unittest.TestCase):
    def test_vectors(self):
        self.assertTrue(VERDICT_FILE["vectors"], "no vectors")
        for vec in VERDICT_FILE["vectors"]:
            with self.subTest(vec["name"]):
                got = outcome(verify_verdict, vec["verdict"], VERDICT_PRODUCT)
                self.assertEqual("valid" if got == "valid" else "invalid", vec["outcome"])
                if got != "valid":
                    self.assertEqual(got, "verdict_invalid")
                else:
                    self.assertEqual(verify_verdict(vec["verdict"], VERDICT_PRODUCT).to_json(), vec["payload"])

    def test_every_edit_is_refused(self):
        n = 0
        for vec in VERDICT_FILE["vectors"]:
            if vec["outcome"] != "valid":
                continue
            for edited in edits(vec["verdict"], 3, BASE64URL):
                self.assertEqual(outcome(verify_verdict, edited, VERDICT_PRODUCT), "verdict_invalid", edited)
                n += 1
        self.assertGreaterEqual(n, 3 * 600 * 3)


if __name__ == "__main__":
    unittest.main()
