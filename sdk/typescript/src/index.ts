/**
 * Offline verification of Licentia licence keys and signed verdicts, as the
 * Go SDK (github.com/licentia/licentia/sdk) does it: the same inputs are
 * accepted and refused, for the same reasons. The formats are in
 * docs/licence-key-format.md and docs/verdict-format.md.
 *
 * @module
 */
export { VerificationError, type RefusalCode } from "./errors.js";
export {
  DEFAULT_LICENCE_DOMAIN,
  LICENCE_KEY_FORMAT,
  formatUUID,
  isKeyPrefix,
  parseLicenceKey,
  productTag,
  type LicenceKey,
} from "./licencekey.js";
export {
  Verifier,
  parsePublicKey,
  productFromJSON,
  verifyLicenceKey,
  type Product,
  type VerifiedKey,
} from "./verifier.js";
export { DEFAULT_VERDICT_DOMAIN, VERDICT_FORMAT, verifyVerdict } from "./verdict.js";
export type { Verdict, VerdictFeature } from "./payload.js";
export { checkVerdict, feature, type CheckOptions, type Judgement, type Reason } from "./check.js";
export { fingerprint } from "./fingerprint.js";
