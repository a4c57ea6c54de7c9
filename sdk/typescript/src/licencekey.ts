import { decode } from "./base32.js";
import { sha256 } from "./crypto.js";
import { VerificationError } from "./errors.js";
import { concat, hex, trimSpace, utf8 } from "./text.js";

/**
 * LICENCE_KEY_FORMAT is the licence-key format version this package reads.
 * Keys already sold keep verifying forever: a new format takes a new
 * version, and version 1 stays readable.
 */
export const LICENCE_KEY_FORMAT = 1;

/** DEFAULT_LICENCE_DOMAIN is the licence signing domain of a product that set none. */
export const DEFAULT_LICENCE_DOMAIN = "licentia/licence-key/v1";

// Key layout, version 1 (docs/licence-key-format.md):
//
//	PREFIX "_" base32( version[1] | product_tag[8] | licence_id[16] | signature[64] )
const productTagLen = 8;
const licenceIdLen = 16;
const payloadLen = 1 + productTagLen + licenceIdLen;
const keyBytesLen = payloadLen + 64;

/** LicenceKey is a parsed, not yet verified, licence key. */
export interface LicenceKey {
  prefix: string;
  version: number;
  productTag: Uint8Array;
  licenceId: Uint8Array;
  signature: Uint8Array;
}

/**
 * parseLicenceKey reads the shape of a key: surrounding white space is
 * ignored, letters may be of either case and dashes may group the body
 * anywhere. It checks nothing a signature proves; that is
 * Verifier.verifyLicenceKey. It throws a VerificationError
 * (licence_key_invalid) for anything that is not a key's shape.
 */
export function parseLicenceKey(s: string): LicenceKey {
  s = trimSpace(s);
  const cut = s.indexOf("_");
  if (cut < 0 || utf8(s).length > 512) throw new VerificationError("licence_key_invalid");
  const prefix = upperPrefix(s.slice(0, cut));
  if (prefix === null || !isKeyPrefix(prefix)) throw new VerificationError("licence_key_invalid");
  const b = decode(s.slice(cut + 1).replaceAll("-", ""), keyBytesLen);
  if (b === null || b[0] !== LICENCE_KEY_FORMAT) throw new VerificationError("licence_key_invalid");
  return {
    prefix,
    version: b[0],
    productTag: b.slice(1, 1 + productTagLen),
    licenceId: b.slice(1 + productTagLen, payloadLen),
    signature: b.slice(payloadLen),
  };
}

/**
 * upperPrefix upper-cases a prefix as Go's strings.ToUpper does for the
 * characters that can end up a prefix: a-z, and the two non-ASCII letters
 * whose upper case is ASCII (dotless i and long s). Any other non-ASCII
 * character can never make a prefix: null.
 */
export function upperPrefix(p: string): string | null {
  let out = "";
  for (const ch of p) {
    const c = ch.codePointAt(0) ?? 0;
    if (c < 0x80) out += ch.toUpperCase();
    else if (c === 0x131) out += "I";
    else if (c === 0x17f) out += "S";
    else return null;
  }
  return out;
}

/** isKeyPrefix reports whether p is a key prefix: 2 to 8 of A-Z and 2-9, first a letter. */
export function isKeyPrefix(p: string): boolean {
  return /^[A-Z][A-Z2-9]{1,7}$/.test(p);
}

/** productTag is the first 8 bytes of SHA-256 of the product id: it names the product in a key's payload. */
export function productTag(productId: string): Uint8Array {
  return sha256(utf8(productId)).slice(0, productTagLen);
}

/** formatUUID writes 16 bytes as a lower-case UUID. */
export function formatUUID(id: Uint8Array): string {
  const h = hex(id);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * licenceKeyMessage is what a licence-key signature covers:
 *
 *	domain 0x00 "licence-key" 0x00 version product_id 0x00 licence_id[16]
 *
 * The full product id is signed (the payload carries only its tag), and the
 * prefix is not: a valid payload behind another product's prefix is
 * recognised as belonging to that other product.
 */
export function licenceKeyMessage(domain: string, productId: string, version: number, licenceId: Uint8Array): Uint8Array {
  return concat(
    utf8(domain),
    Uint8Array.of(0),
    utf8("licence-key"),
    Uint8Array.of(0, version),
    utf8(productId),
    Uint8Array.of(0),
    licenceId,
  );
}
