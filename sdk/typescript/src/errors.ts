/** The reasons a licence key or a verdict is refused, as the Go SDK names them. */
export type RefusalCode = "licence_key_invalid" | "licence_wrong_product" | "verdict_invalid" | "verdict_mismatch";

const messages: Record<RefusalCode, string> = {
  licence_key_invalid: "licence key invalid",
  licence_wrong_product: "licence key belongs to another product",
  verdict_invalid: "verdict invalid",
  verdict_mismatch: "verdict is about another machine or licence",
};

/**
 * VerificationError is thrown when a licence key or verdict is refused. Its
 * code says why; match on it rather than on the message.
 */
export class VerificationError extends Error {
  readonly code: RefusalCode;

  constructor(code: RefusalCode) {
    super(messages[code]);
    this.name = "VerificationError";
    this.code = code;
  }
}
