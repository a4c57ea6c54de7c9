// Verdicts signed here, to hold the reading of their payload to what the Go
// SDK's encoding/json does with the same bytes (each case was checked
// against Go), and checkVerdict's judgement to the Go SDK's Client.
import assert from "node:assert/strict";
import { generateKeyPairSync, sign } from "node:crypto";
import test from "node:test";

import { checkVerdict, feature, fingerprint, VerificationError, verifyVerdict, type Product, type Verdict } from "licentia-verify";

import { decodeStrict, encode } from "../dist/base64.js";

const { publicKey, privateKey } = generateKeyPairSync("ed25519");
const raw = decodeStrict(publicKey.export({ format: "jwk" }).x ?? "");
assert.ok(raw !== null);
const product: Product = { id: "photo-editor", keyPrefix: "PHOTO", publicKeys: [raw] };

const enc = new TextEncoder();

// signed makes a verdict of exactly these payload bytes under domain.
function signed(payload: Uint8Array | string, domain = "licentia/verdict/v1"): string {
  const p = typeof payload === "string" ? enc.encode(payload) : payload;
  const msg = new Uint8Array([...enc.encode(domain), 0, ...enc.encode("verdict"), 0, ...p]);
  return `v1.${encode(p)}.${encode(new Uint8Array(sign(null, msg, privateKey)))}`;
}

const base = {
  format: 1,
  licence_id: "0b7d4f1e-8c2a-4e6b-9f3d-5a1c7e9b2d4f",
  product_id: "photo-editor",
  machine_id: "machine-1",
  activation_id: "5f0c9a7e-3b1d-4c8e-a2f6-9d4b7e1c3a5f",
  state: "active",
  expires_at: "2027-11-22T00:00:00.000Z",
  trial_ends_at: null,
  major: 3,
  limit_kind: "seats",
  limit_count: 2,
  issued_at: "2026-11-22T01:16:13.000Z",
  valid_until: "2026-11-29T01:16:13.000Z",
  key_fingerprint: fingerprint(raw),
};

// json is base with changes, written as JSON text after the fields.
function json(changes: Partial<Record<keyof typeof base, unknown>>, extra = ""): string {
  const s = JSON.stringify({ ...base, ...changes });
  return extra === "" ? s : s.slice(0, -1) + "," + extra + "}";
}

function outcome(s: string): string {
  try {
    verifyVerdict(s, product);
    return "valid";
  } catch (e) {
    if (e instanceof VerificationError) return e.code;
    throw e;
  }
}

test("payloads are read as Go's encoding/json reads them", () => {
  const cases: { name: string; payload: string | Uint8Array; want: string; check?: (v: Verdict) => void }[] = [
    { name: "as the server writes it", payload: json({}), want: "valid" },
    { name: "unknown fields, nested deep", payload: json({}, `"x":${"[".repeat(3000)}{}${"]".repeat(3000)}`), want: "valid" },
    { name: "names in another case", payload: json({}).replace('"format"', '"FORMAT"').replace('"state"', '"State"'), want: "valid" },
    {
      name: "long s and Kelvin sign fold to s and k",
      payload: json({}, `"\u017ftate":"trial","\u212aey_fingerprint":"x"`),
      want: "valid",
      check: (v) => assert.deepEqual([v.state, v.key_fingerprint], ["trial", "x"]),
    },
    { name: "dotted capital I does not fold to i", payload: json({}, `"l\u0130cence_id":"x"`), want: "valid", check: (v) => assert.equal(v.licence_id, base.licence_id) },
    { name: "the last of a repeated name wins", payload: json({}, `"state":"revoked","STATE":"expired"`), want: "valid", check: (v) => assert.equal(v.state, "expired") },
    { name: "null leaves a string field as it was", payload: json({}, `"state":null`), want: "valid", check: (v) => assert.equal(v.state, "active") },
    { name: "null empties a nullable field", payload: json({}, `"activation_id":null`), want: "valid", check: (v) => assert.equal(v.activation_id, null) },
    { name: "an integer written 3.0", payload: json({ major: "MAJOR" }).replace('"MAJOR"', "3.0"), want: "verdict_invalid" },
    { name: "an integer written 3e0", payload: json({ major: "MAJOR" }).replace('"MAJOR"', "3e0"), want: "verdict_invalid" },
    { name: "-0 is 0", payload: json({ major: "MAJOR" }).replace('"MAJOR"', "-0"), want: "valid", check: (v) => assert.equal(v.major, 0) },
    { name: "the largest int64", payload: json({ limit_count: "N" }).replace('"N"', "9223372036854775807"), want: "valid" },
    { name: "past int64", payload: json({ limit_count: "N" }).replace('"N"', "9223372036854775808"), want: "verdict_invalid" },
    { name: "a number for a string", payload: json({ state: 1 }), want: "verdict_invalid" },
    { name: "a string for a number", payload: json({ major: "3" }), want: "verdict_invalid" },
    { name: "an object for a string", payload: json({ state: {} }), want: "verdict_invalid" },
    { name: "a boolean for a nullable string", payload: json({ expires_at: true }), want: "verdict_invalid" },
    { name: "format 2", payload: json({ format: 2 }), want: "verdict_invalid" },
    { name: "no format", payload: json({}).replace('"format":1,', ""), want: "verdict_invalid" },
    { name: "another product", payload: json({ product_id: "notes" }), want: "verdict_invalid" },
    { name: "a top-level null", payload: "null", want: "verdict_invalid" },
    { name: "a top-level array", payload: "[]", want: "verdict_invalid" },
    { name: "a trailing comma", payload: json({}).slice(0, -1) + ",}", want: "verdict_invalid" },
    { name: "NaN", payload: json({}, `"x":NaN`), want: "verdict_invalid" },
    { name: "a leading zero", payload: json({}, `"x":01`), want: "verdict_invalid" },
    { name: "a raw control character", payload: json({ state: "a\u0001" }).replace("\\u0001", "\u0001"), want: "verdict_invalid" },
    { name: "trailing white space", payload: json({}) + " \n", want: "valid" },
    { name: "a trailing value", payload: json({}) + "{}", want: "verdict_invalid" },
    {
      name: "unpaired surrogate escapes read as U+FFFD",
      payload: json({}, `"state":"\\ud800x\\udc00\\ud83d\\ude00"`),
      want: "valid",
      check: (v) => assert.equal(v.state, "\ufffdx\ufffd\u{1f600}"),
    },
    {
      name: "each byte of invalid UTF-8 reads as U+FFFD",
      payload: new Uint8Array([...enc.encode(json({}).slice(0, -1) + ',"state":"'), 0xe2, 0x82, 0x41, 0xed, 0xa0, 0x80, 0xc3, 0xa9, 0x22, 0x7d]),
      want: "valid",
      check: (v) => assert.equal(v.state, "\ufffd\ufffdA\ufffd\ufffd\ufffd\u00e9"),
    },
  ];
  for (const c of cases) {
    const s = signed(c.payload);
    assert.equal(outcome(s), c.want, c.name);
    if (c.check) c.check(verifyVerdict(s, product));
  }
});

test("features are read as Go's encoding/json reads them into the SDK's Verdict", () => {
  const f = (code: string, expires_at: string | null = null) => ({ code, expires_at });
  // want: the features read, undefined for none, or "verdict_invalid".
  const cases: { name: string; extra: string; want: object[] | undefined | "verdict_invalid" }[] = [
    {
      name: "as the server writes them",
      extra: `"features":[{"code":"export-pdf","expires_at":"2026-12-22T00:00:00.000Z"},{"code":"sso","expires_at":null}]`,
      want: [f("export-pdf", "2026-12-22T00:00:00.000Z"), f("sso")],
    },
    { name: "none", extra: `"features":[]`, want: undefined },
    { name: "null", extra: `"features":null`, want: undefined },
    { name: "an object", extra: `"features":{}`, want: "verdict_invalid" },
    { name: "a string", extra: `"features":"sso"`, want: "verdict_invalid" },
    { name: "a number element", extra: `"features":[1]`, want: "verdict_invalid" },
    { name: "a string element", extra: `"features":["sso"]`, want: "verdict_invalid" },
    { name: "an array element", extra: `"features":[[]]`, want: "verdict_invalid" },
    { name: "a null element is an empty grant", extra: `"features":[null]`, want: [f("")] },
    { name: "a number code", extra: `"features":[{"code":1}]`, want: "verdict_invalid" },
    { name: "a boolean expiry", extra: `"features":[{"expires_at":false}]`, want: "verdict_invalid" },
    {
      name: "names in another case, long s, unknown names",
      extra: `"features":[{"CODE":"a","Expire\u017f_At":"x","extra":[[{}]]}]`,
      want: [f("a", "x")],
    },
    { name: "the order as written", extra: `"features":[{"code":"b"},{"code":"a"}]`, want: [f("b"), f("a")] },
    { name: "null code leaves it empty", extra: `"features":[{"code":"a"},{"code":null}]`, want: [f("a"), f("")] },
    { name: "nested unknown values", extra: `"features":[{"x":[[[[]]]],"code":"a"}]`, want: [f("a")] },
    {
      name: "the last of a repeated name in a grant wins",
      extra: `"features":[{"code":"a","code":"b","expires_at":"x","expires_at":null}]`,
      want: [f("b")],
    },
    {
      name: "a repeated features reuses the earlier elements",
      extra: `"features":[{"code":"a","expires_at":"x"},{"code":"b"}],"features":[{"code":"c"}]`,
      want: [f("c", "x")],
    },
    {
      name: "elements past a shorter repeat come back",
      extra: `"features":[{"code":"a","expires_at":"x"},{"code":"b","expires_at":"y"}],"features":[{"code":"c"}],"features":[{},{}]`,
      want: [f("c", "x"), f("b", "y")],
    },
    {
      name: "null starts afresh",
      extra: `"features":[{"code":"a","expires_at":"x"}],"features":null,"features":[{"code":"c"}]`,
      want: [f("c")],
    },
    { name: "[] starts afresh", extra: `"features":[{"code":"a","expires_at":"x"}],"features":[],"features":[{}]`, want: [f("")] },
    { name: "a null element keeps the earlier one", extra: `"features":[{"code":"a","expires_at":"x"}],"FEATURES":[null]`, want: [f("a", "x")] },
    { name: "a later wrong type", extra: `"features":[{"code":"a"}],"features":true`, want: "verdict_invalid" },
  ];
  for (const c of cases) {
    const s = signed(json({}, c.extra));
    if (c.want === "verdict_invalid") {
      assert.equal(outcome(s), "verdict_invalid", c.name);
      continue;
    }
    assert.deepEqual(verifyVerdict(s, product).features, c.want, c.name);
  }
});

test("feature judges a grant as the Go SDK's Verdict.Feature", () => {
  const v = verifyVerdict(
    signed(json({}, `"features":[{"code":"export-pdf","expires_at":"2026-12-22T00:00:00.000Z"},{"code":"sso","expires_at":null},{"code":"x","expires_at":"soon"}]`)),
    product,
  );
  const at = (t: string): Date => new Date(t);
  assert.equal(feature(v, "sso", at("2030-01-01T00:00:00Z")), true, "no expiry");
  assert.equal(feature(v, "export-pdf", at("2026-12-21T23:59:59.999Z")), true, "before its expiry");
  assert.equal(feature(v, "export-pdf", at("2026-12-22T00:00:00Z")), false, "at its expiry");
  assert.equal(feature(v, "x", at("2020-01-01T00:00:00Z")), false, "an expiry that is not a time");
  assert.equal(feature(v, "sso-2", at("2026-01-01T00:00:00Z")), false, "not granted");
  assert.equal(feature(v, "SSO", at("2026-01-01T00:00:00Z")), false, "codes are exact");
  assert.equal(feature(verifyVerdict(signed(json({})), product), "sso"), false, "a verdict without features");
});

test("the encoding is read as Go reads it", () => {
  const good = signed(json({}));
  const [, payload, sig] = good.split(".") as [string, string, string];
  const cases: { name: string; verdict: string; want: string }[] = [
    { name: "surrounding white space, U+0085 and U+3000 included", verdict: `\u0085 ${good}\n\u3000`, want: "valid" },
    { name: "a byte-order mark is not white space", verdict: `\ufeff${good}`, want: "verdict_invalid" },
    { name: "line breaks inside the parts are skipped", verdict: `v1.${payload.slice(0, 10)}\r\n${payload.slice(10)}.${sig.slice(0, 5)}\n${sig.slice(5)}`, want: "valid" },
    { name: "padding", verdict: `${good}==`, want: "verdict_invalid" },
    { name: "standard base64", verdict: `v1.${payload}.${sig.replaceAll("-", "+").replaceAll("_", "/")}`, want: sig.match(/[-_]/) ? "verdict_invalid" : "valid" },
    { name: "a fourth part", verdict: `${good}.`, want: "verdict_invalid" },
    { name: "upper-case tag", verdict: `V1${good.slice(2)}`, want: "verdict_invalid" },
    { name: "signed in another domain", verdict: signed(json({}), "licentia/licence-key/v1"), want: "verdict_invalid" },
    { name: "over 16 KB", verdict: signed(json({}, `"x":"${"a".repeat(16384)}"`)), want: "verdict_invalid" },
  ];
  for (const c of cases) assert.equal(outcome(c.verdict), c.want, c.name);
  const own: Product = { ...product, verdictDomain: "example.com/verdict" };
  assert.equal(verifyVerdict(signed(json({}), "example.com/verdict"), own).state, "active");
});

test("checkVerdict judges as the Go SDK's Client", () => {
  const at = (t: string): Date => new Date(t);
  const opts = { machineId: base.machine_id, licenceId: base.licence_id, now: at("2026-11-23T00:00:00Z"), major: 3 };
  const cases: { name: string; verdict: string; opts?: object; want: object }[] = [
    { name: "active", verdict: signed(json({})), want: { valid: true, seated: true, stale: false } },
    { name: "past valid_until: stale, still valid", verdict: signed(json({})), opts: { now: at("2026-12-01T00:00:00Z") }, want: { valid: true, stale: true } },
    { name: "revoked", verdict: signed(json({ state: "revoked", activation_id: null })), want: { valid: false, reason: "revoked", seated: false } },
    { name: "expired state", verdict: signed(json({ state: "expired" })), want: { valid: false, reason: "expired" } },
    { name: "expires_at reached", verdict: signed(json({})), opts: { now: at("2027-11-22T00:00:00Z") }, want: { valid: false, reason: "expired" } },
    { name: "just before expires_at", verdict: signed(json({})), opts: { now: at("2027-11-21T23:59:59.999Z") }, want: { valid: true } },
    { name: "a newer major", verdict: signed(json({})), opts: { major: 4 }, want: { valid: false, reason: "newer_major" } },
    { name: "an older major runs", verdict: signed(json({})), opts: { major: 2 }, want: { valid: true } },
    { name: "no seat, not required", verdict: signed(json({ activation_id: null })), want: { valid: true, seated: false } },
    { name: "no seat, required", verdict: signed(json({ activation_id: null })), opts: { requireSeat: true }, want: { valid: false, reason: "seat_freed" } },
  ];
  for (const c of cases) {
    const j = checkVerdict(c.verdict, product, { ...opts, ...c.opts });
    for (const [k, v] of Object.entries(c.want)) assert.equal((j as unknown as Record<string, unknown>)[k], v, `${c.name}: ${k}`);
    if (j.valid) assert.equal(j.reason, undefined, c.name);
  }
  const mismatch = (o: object): string => {
    try {
      checkVerdict(signed(json({})), product, { ...opts, ...o });
      return "valid";
    } catch (e) {
      return (e as VerificationError).code;
    }
  };
  assert.equal(mismatch({ machineId: "machine-2" }), "verdict_mismatch");
  assert.equal(mismatch({ licenceId: "7c0e2b9a-1d4f-4a8e-b6c3-2f5d8e1a9c7b" }), "verdict_mismatch");
  assert.throws(() => checkVerdict(signed(json({ issued_at: "yesterday" })), product, opts), { code: "verdict_invalid" });
});
