import { createHash, createPublicKey, verify, type KeyObject } from "node:crypto";

import { encode } from "./base64.js";

/** sha256 is the SHA-256 digest of b. */
export function sha256(b: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(b).digest());
}

/**
 * PublicKey is a raw 32-byte Ed25519 public key with Node's key object
 * for it, made once. key is null when the bytes are not a key Node can
 * load: such a key verifies nothing, as in Go.
 */
export interface PublicKey {
  raw: Uint8Array;
  key: KeyObject | null;
}

/** loadPublicKey wraps raw bytes; anything but 32 bytes verifies nothing. */
export function loadPublicKey(raw: Uint8Array): PublicKey {
  if (raw.length !== 32) return { raw, key: null };
  try {
    return { raw, key: createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: encode(raw) }, format: "jwk" }) };
  } catch {
    return { raw, key: null };
  }
}

/** verifies reports whether sig is pub's Ed25519 signature of msg (RFC 8032). */
export function verifies(pub: PublicKey, msg: Uint8Array, sig: Uint8Array): boolean {
  if (pub.key === null || sig.length !== 64) return false;
  try {
    return verify(null, msg, pub.key, sig);
  } catch {
    return false;
  }
}
