import { loadPublicKey, verifies, type PublicKey } from "./crypto.js";
import { VerificationError } from "./errors.js";
import {
  DEFAULT_LICENCE_DOMAIN,
  formatUUID,
  isKeyPrefix,
  licenceKeyMessage,
  parseLicenceKey,
  productTag,
  upperPrefix,
  type LicenceKey,
} from "./licencekey.js";
import { equalBytes, hex, trimSpace } from "./text.js";

/**
 * Product is what offline verification needs to know of a product: its id,
 * key prefix, signing domains (empty or absent for the defaults) and the
 * public keys it accepts (the current one and previous ones not retired),
 * each 32 bytes (see parsePublicKey).
 */
export interface Product {
  id: string;
  keyPrefix: string;
  licenceDomain?: string;
  verdictDomain?: string;
  publicKeys: Uint8Array[];
}

/** parsePublicKey reads a public key in 64 hexadecimal characters. */
export function parsePublicKey(s: string): Uint8Array {
  const h = trimSpace(s);
  if (!/^[0-9a-fA-F]{64}$/.test(h)) throw new Error("public key must be 64 hexadecimal characters");
  return Uint8Array.from(h.match(/../g) ?? [], (x) => parseInt(x, 16));
}

/**
 * productFromJSON reads a product as the administration API shows it
 * (id, key_prefix, licence_signing_domain, verdict_signing_domain,
 * public_key, previous_public_keys) or as the vector files write it
 * (public_keys).
 */
export function productFromJSON(o: Record<string, unknown>): Product {
  const str = (k: string): string => (typeof o[k] === "string" ? (o[k] as string) : "");
  const list = (k: string): string[] => (Array.isArray(o[k]) ? (o[k] as unknown[]).map(String) : []);
  const keys = [...(str("public_key") ? [str("public_key")] : []), ...list("previous_public_keys"), ...list("public_keys")];
  return {
    id: str("id"),
    keyPrefix: str("key_prefix"),
    licenceDomain: str("licence_signing_domain"),
    verdictDomain: str("verdict_signing_domain"),
    publicKeys: keys.map(parsePublicKey),
  };
}

/** VerifiedKey is a licence key whose signature checked. */
export interface VerifiedKey {
  productId: string;
  /** licenceId is the licence's UUID, lower case. */
  licenceId: string;
  /** publicKey signed it: the current key or a previous one not yet retired. */
  publicKey: Uint8Array;
}

interface Known {
  product: Product;
  keys: PublicKey[];
}

/**
 * Verifier checks licence keys offline against a set of products. Build it
 * once; it loads each public key once.
 */
export class Verifier {
  readonly #byPrefix = new Map<string, Known>();
  readonly #byTag = new Map<string, Known>();

  /** Prefixes are matched case insensitively; a bad or repeated prefix throws. */
  constructor(...products: Product[]) {
    for (const p of products) {
      const prefix = upperPrefix(p.keyPrefix) ?? "";
      if (!isKeyPrefix(prefix)) throw new Error(`product ${JSON.stringify(p.id)}: bad key prefix ${JSON.stringify(p.keyPrefix)}`);
      if (this.#byPrefix.has(prefix)) {
        throw new Error(`product ${JSON.stringify(p.id)}: key prefix ${JSON.stringify(prefix)} used twice`);
      }
      const known = { product: { ...p, keyPrefix: prefix }, keys: p.publicKeys.map(loadPublicKey) };
      this.#byPrefix.set(prefix, known);
      this.#byTag.set(hex(productTag(p.id)), known);
    }
  }

  /**
   * verifyLicenceKey checks s. It throws a VerificationError:
   * licence_key_invalid for anything not issued for a known product under a
   * key it accepts (any edit included), and licence_wrong_product when the
   * prefix names one product and a valid payload another.
   */
  verifyLicenceKey(s: string): VerifiedKey {
    const k = parseLicenceKey(s);
    const p = this.#byPrefix.get(k.prefix);
    if (p === undefined) throw new VerificationError("licence_key_invalid");
    const pub = signer(k, p);
    if (pub !== null) return { productId: p.product.id, licenceId: formatUUID(k.licenceId), publicKey: pub.raw };
    const other = this.#byTag.get(hex(k.productTag));
    if (other !== undefined && other.product.id !== p.product.id && signer(k, other) !== null) {
      throw new VerificationError("licence_wrong_product");
    }
    throw new VerificationError("licence_key_invalid");
  }
}

/** verifyLicenceKey checks s against products; see Verifier.verifyLicenceKey. */
export function verifyLicenceKey(s: string, ...products: Product[]): VerifiedKey {
  return new Verifier(...products).verifyLicenceKey(s);
}

// signer is the key of p that signed k for p, or null.
function signer(k: LicenceKey, p: Known): PublicKey | null {
  if (!equalBytes(k.productTag, productTag(p.product.id))) return null;
  const msg = licenceKeyMessage(p.product.licenceDomain || DEFAULT_LICENCE_DOMAIN, p.product.id, k.version, k.licenceId);
  return p.keys.find((pub) => verifies(pub, msg, k.signature)) ?? null;
}
