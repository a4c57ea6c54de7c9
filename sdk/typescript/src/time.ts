// The layout Go's time.Parse reads as RFC 3339: the hour may have one digit,
// the fraction may follow a comma and have any length, and an offset may
// reach 24:60.
const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;

/**
 * parseTime reads an RFC 3339 time, as the verdict's times are written
 * (2026-11-22T01:16:13.000Z), to the millisecond. It answers null where
 * Go's time.Parse(time.RFC3339Nano) fails, a day the month does not have
 * included.
 */
export function parseTime(s: string): Date | null {
  const m = rfc3339.exec(s);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = Number((m[7] ?? "").padEnd(3, "0").slice(0, 3));
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) {
    return null;
  }
  let offset = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 24 || om > 60) return null;
    offset = (m[9] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute - offset, second, ms);
  return d;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
