import { VerificationError } from "./errors.js";
import type { Verdict } from "./payload.js";
import { parseTime } from "./time.js";
import { verifyVerdict } from "./verdict.js";
import type { Product } from "./verifier.js";

/**
 * Reason says why a verdict does not let the application run, as the Go
 * SDK's Status.Reason, for the reasons a verdict decides by itself.
 */
export type Reason = "revoked" | "expired" | "newer_major" | "seat_freed";

/** CheckOptions is what a verdict is checked against. */
export interface CheckOptions {
  /** machineId is this machine; the verdict must name it. */
  machineId: string;
  /** licenceId is the licence of the licence key entered; the verdict must name it. */
  licenceId: string;
  /** now is the time to judge at; the system clock when absent. */
  now?: Date;
  /** major is the application's major version; a licence for an older major refuses it. 0 or absent: not judged. */
  major?: number;
  /** requireSeat refuses a verdict that names no live seat of this machine (the Go SDK's RequireSeat). */
  requireSeat?: boolean;
}

/** Judgement is what a verdict says about running the application now. */
export interface Judgement {
  /** valid reports whether the application may run. */
  valid: boolean;
  /** reason says why not; absent when valid. */
  reason?: Reason;
  verdict: Verdict;
  /** seated reports whether the verdict names a live seat of this machine. */
  seated: boolean;
  /**
   * stale is true when valid_until has passed. A stale verdict is still the
   * last word: it never refuses by itself (docs/sdk.md).
   */
  stale: boolean;
}

/**
 * checkVerdict verifies a verdict (verifyVerdict), checks that it is about
 * this machine and licence, and judges it at now by the rules of the Go
 * SDK's Client (docs/sdk.md): revoked, expired (by state or by its signed
 * expires_at), newer_major and, when asked, seat_freed. It throws a
 * VerificationError: verdict_invalid as verifyVerdict does, or when
 * issued_at is not a time; verdict_mismatch for another machine or licence.
 */
export function checkVerdict(s: string, product: Product, opts: CheckOptions): Judgement {
  const v = verifyVerdict(s, product);
  if (v.machine_id !== opts.machineId || v.licence_id !== opts.licenceId) {
    throw new VerificationError("verdict_mismatch");
  }
  if (parseTime(v.issued_at) === null) throw new VerificationError("verdict_invalid");
  const now = opts.now ?? new Date();
  const until = parseTime(v.valid_until);
  const j: Judgement = {
    valid: true,
    verdict: v,
    seated: v.activation_id !== null,
    stale: until === null || now.getTime() > until.getTime(),
  };
  const reason = judge(v, now, opts);
  if (reason !== undefined) {
    j.valid = false;
    j.reason = reason;
  }
  return j;
}

function judge(v: Verdict, now: Date, opts: CheckOptions): Reason | undefined {
  if (v.state === "revoked") return "revoked";
  if (v.state === "expired") return "expired";
  // The licence's own expiry is signed, so it is judged offline.
  const exp = v.expires_at === null ? null : parseTime(v.expires_at);
  if (exp !== null && now.getTime() >= exp.getTime()) return "expired";
  if ((opts.major ?? 0) > v.major) return "newer_major";
  if (opts.requireSeat && v.activation_id === null) return "seat_freed";
  return undefined;
}

/**
 * feature reports whether the verdict grants code at now (the system clock
 * when absent), as the Go SDK's Verdict.Feature: granted, and its
 * expires_at, if any, after now. It judges only the grant: ask checkVerdict
 * whether the application may run at all.
 */
export function feature(v: Verdict, code: string, now: Date = new Date()): boolean {
  const f = (v.features ?? []).find((x) => x.code === code);
  if (f === undefined) return false;
  if (f.expires_at === null) return true;
  const exp = parseTime(f.expires_at);
  return exp !== null && now.getTime() < exp.getTime();
}
