// The shared vectors of testdata/vectors, as sdk/vectors_test.go and
// sdk/verdictvectors_test.go read them, and every single-character edit
// of their valid keys and verdicts.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test from "node:test";

import {
  VerificationError,
  Verifier,
  productFromJSON,
  verifyLicenceKey,
  verifyVerdict,
  type Product,
  type RefusalCode,
} from "licentia-verify";

const vectors = new URL("../../../testdata/vectors/", import.meta.url);

interface KeyFile {
  products: Record<string, unknown>[];
  vectors: { name: string; key: string; outcome: string; product_id?: string; licence_id?: string }[];
}

interface VerdictFile {
  product: Record<string, unknown>;
  vectors: { name: string; verdict: string; outcome: string; payload?: object }[];
}

const keyFile = JSON.parse(readFileSync(new URL("licence-keys.json", vectors), "utf8")) as KeyFile;
const verdictFile = JSON.parse(readFileSync(new URL("verdicts.json", vectors), "utf8")) as VerdictFile;
const keyProducts = keyFile.products.map(productFromJSON);
const verdictProduct = productFromJSON(verdictFile.product);

// refusal is the code a call throws, or "valid".
function refusal(fn: () => unknown): RefusalCode | "valid" {
  try {
    fn();
    return "valid";
  } catch (e) {
    if (e instanceof VerificationError) return e.code;
    throw e;
  }
}

test("licence-key vectors", () => {
  assert.ok(keyFile.vectors.length > 0, "no vectors");
  const v = new Verifier(...keyProducts);
  for (const vec of keyFile.vectors) {
    assert.equal(refusal(() => v.verifyLicenceKey(vec.key)), vec.outcome, vec.name);
    assert.equal(refusal(() => verifyLicenceKey(vec.key, ...keyProducts)), vec.outcome, vec.name);
    if (vec.outcome === "valid") {
      const k = v.verifyLicenceKey(vec.key);
      assert.deepEqual([k.productId, k.licenceId], [vec.product_id, vec.licence_id], vec.name);
    }
  }
});

test("verdict vectors", () => {
  assert.ok(verdictFile.vectors.length > 0, "no vectors");
  for (const vec of verdictFile.vectors) {
    const outcome = refusal(() => verifyVerdict(vec.verdict, verdictProduct));
    assert.equal(outcome === "valid" ? "valid" : "invalid", vec.outcome, vec.name);
    if (outcome !== "valid") assert.equal(outcome, "verdict_invalid", vec.name);
    if (vec.outcome === "valid") assert.deepEqual(verifyVerdict(vec.verdict, verdictProduct), vec.payload, vec.name);
  }
});

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// edits yields s with each character of the alphabet from start on
// replaced by the three that follow it in the alphabet, in turn.
function* edits(s: string, start: number, alphabet: string): Generator<string> {
  for (let i = start; i < s.length; i++) {
    const c = s[i] ?? "";
    const at = alphabet.includes(c) ? alphabet.indexOf(c) : alphabet.indexOf(c.toUpperCase());
    if (at < 0) continue;
    for (let k = 1; k <= 3; k++) yield s.slice(0, i) + alphabet[(at + k) % alphabet.length] + s.slice(i + 1);
  }
}

test("every edit of a valid licence key is refused", () => {
  const v = new Verifier(...keyProducts);
  let n = 0;
  for (const vec of keyFile.vectors.filter((x) => x.outcome === "valid")) {
    const key = vec.key.trim();
    for (const edited of edits(key, key.indexOf("_") + 1, crockford)) {
      assert.equal(refusal(() => v.verifyLicenceKey(edited)), "licence_key_invalid", edited);
      n++;
    }
  }
  assert.ok(n >= 4 * 143 * 3, `only ${n} edits`);
});

test("every edit of a valid verdict is refused", () => {
  let n = 0;
  for (const vec of verdictFile.vectors.filter((x) => x.outcome === "valid")) {
    for (const edited of edits(vec.verdict, 3, base64url)) {
      assert.equal(refusal(() => verifyVerdict(edited, verdictProduct)), "verdict_invalid");
      n++;
    }
  }
  assert.ok(n >= 3 * 600 * 3, `only ${n} edits`);
});

test("a product with no keys, or with keys of the wrong size, accepts nothing", () => {
  const vec = keyFile.vectors[0];
  assert.ok(vec !== undefined);
  const photo = keyProducts[0] as Product;
  for (const publicKeys of [[], [new Uint8Array(31)], [new Uint8Array(32)]]) {
    assert.equal(refusal(() => verifyLicenceKey(vec.key, { ...photo, publicKeys })), "licence_key_invalid");
  }
});

test("a verifier refuses a bad or repeated prefix", () => {
  const photo = keyProducts[0] as Product;
  assert.throws(() => new Verifier({ ...photo, keyPrefix: "1AB" }), /bad key prefix/);
  assert.throws(() => new Verifier(photo, { ...photo, id: "other", keyPrefix: "photo" }), /used twice/);
});
