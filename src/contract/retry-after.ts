/**
 * Parsing of the HTTP `Retry-After` value: delay-seconds or an HTTP-date.
 * Hand-written because `Date.parse` is too lenient (it reads "soon 2030" or "-1" as dates, and the
 * zone-less asctime form as local time), and a wrong cooldown would stall a whole rate-limit group.
 */

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DELAY_SECONDS = /^\d+(?:\.\d+)?$/;
/** IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT` (the preferred form). */
const IMF_FIXDATE = /^[a-z]{3}, (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/i;
/** Obsolete RFC 850 form: `Sunday, 06-Nov-94 08:49:37 GMT`. */
const RFC_850 = /^[a-z]{6,9}, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/i;
/** Obsolete asctime form, always UTC: `Sun Nov  6 08:49:37 1994`. */
const ASCTIME = /^[a-z]{3} ([a-z]{3}) ( \d|\d{2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

/**
 * How long a `Retry-After` value asks the client to wait.
 * @param value delay in seconds (a number or a numeric string) or an HTTP-date string
 * @param now the current time in ms since the epoch (from the injected clock), for HTTP-dates
 * @returns the wait in ms (0 for a date in the past), or undefined when the value is absent,
 *   negative or unparseable
 * @example
 * parseRetryAfterMs("120", clock.now()); // 120000
 * parseRetryAfterMs("Wed, 21 Oct 2015 07:28:00 GMT", Date.UTC(2015, 9, 21, 7, 27, 0)); // 60000
 */
export function parseRetryAfterMs(
  value: string | number | null | undefined,
  now: number,
): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "number")
    return Number.isFinite(value) && value >= 0 ? Math.ceil(value * 1000) : undefined;
  const text = value.trim();
  if (DELAY_SECONDS.test(text)) return Math.ceil(Number(text) * 1000);
  const at = parseHttpDate(text, now);
  return at === undefined ? undefined : Math.max(0, at - now);
}

function parseHttpDate(text: string, now: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m) return utc(m[3], m[2], m[1], m[4], m[5], m[6]);
  m = RFC_850.exec(text);
  if (m) return utc(fullYear(Number(m[3]), now), m[2], m[1], m[4], m[5], m[6]);
  m = ASCTIME.exec(text);
  if (m) return utc(m[6], m[1], m[2], m[3], m[4], m[5]);
  return undefined;
}

/** RFC 9110: a two-digit year more than 50 years in the future means the past century. */
function fullYear(twoDigits: number, now: number): number {
  const currentYear = new Date(now).getUTCFullYear();
  let year = Math.floor(currentYear / 100) * 100 + twoDigits;
  if (year > currentYear + 50) year -= 100;
  return year;
}

function utc(
  year: string | number | undefined,
  monthName: string | undefined,
  day: string | undefined,
  hour: string | undefined,
  minute: string | undefined,
  second: string | undefined,
): number | undefined {
  const month = MONTHS.indexOf(monthName?.toLowerCase() ?? "");
  const parts = [Number(year), Number(day), Number(hour), Number(minute), Number(second)] as const;
  const [y, d, h, min, s] = parts;
  if (month < 0 || h > 23 || min > 59 || s > 60) return undefined;
  const at = Date.UTC(y, month, d, h, min, Math.min(s, 59));
  // Date.UTC rolls "31 Feb" over into March; such a date is malformed, not a March date.
  return new Date(at).getUTCDate() === d ? at : undefined;
}
