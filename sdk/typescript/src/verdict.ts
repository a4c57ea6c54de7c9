import { decodeStrict } from "./base64.js";
import { loadPublicKey, verifies } from "./crypto.js";
import { VerificationError } from "./errors.js";
import { decodePayload, type Verdict } from "./payload.js";
import type { Product } from "./verifier.js";
import { concat, trimSpace, utf8 } from "./text.js";

/** VERDICT_FORMAT is the verdict format version this package reads. */
export const VERDICT_FORMAT = 1;

/** DEFAULT_VERDICT_DOMAIN is the verdict signing domain of a product that set none. */
export const DEFAULT_VERDICT_DOMAIN = "licentia/verdict/v1";

/**
 * verdictMessage is what a verdict signature covers:
 *
 *	domain 0x00 "verdict" 0x00 payload
 *
 * where payload is the exact JSON bytes carried in the verdict, so no
 * canonical JSON is needed.
 */
export function verdictMessage(domain: string, payload: Uint8Array): Uint8Array {
  return concat(utf8(domain), Uint8Array.of(0), utf8("verdict"), Uint8Array.of(0), payload);
}

/**
 * verifyVerdict checks a verdict's signature against the product's keys and
 * returns its payload:
 *
 *	"v1." base64url(payload) "." base64url(signature)
 *
 * It throws a VerificationError (verdict_invalid) for a verdict that is
 * malformed, edited, not signed by a key of the product, or about another
 * product. It does not judge the content; checkVerdict does.
 */
export function verifyVerdict(s: string, product: Product): Verdict {
  s = trimSpace(s);
  if (utf8(s).length > 16384) throw new VerificationError("verdict_invalid");
  const parts = s.split(".");
  if (parts.length !== 3 || parts[0] !== "v1") throw new VerificationError("verdict_invalid");
  const payload = decodeStrict(parts[1] ?? "");
  const sig = decodeStrict(parts[2] ?? "");
  if (payload === null || sig === null || sig.length !== 64) throw new VerificationError("verdict_invalid");
  const msg = verdictMessage(product.verdictDomain || DEFAULT_VERDICT_DOMAIN, payload);
  if (!product.publicKeys.some((raw) => verifies(loadPublicKey(raw), msg, sig))) {
    throw new VerificationError("verdict_invalid");
  }
  const v = decodePayload(payload);
  if (v === null || v.format !== VERDICT_FORMAT || v.product_id !== product.id) {
    throw new VerificationError("verdict_invalid");
  }
  return v;
}
