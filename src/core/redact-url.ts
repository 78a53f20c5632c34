/**
 * The one rule for putting a URL into text (an error message, a log line, a ledger row): scheme, host,
 * port and path stay, so the reader can still tell which endpoint is meant; user information, query
 * values and the fragment, where tokens and passwords travel, become `***`. A URL that names an origin
 * only (the LLM Wiki's) may carry a secret in its path (a capability URL): with `hidePath` the path
 * becomes `***` too.
 */

const MASK = "***";

/** Options of {@link redactUrl}. */
export interface RedactUrlOptions {
  /**
   * Masks the path as well (`https://host/***`), for a value that should be an origin, whose path can
   * only be a mistake or a credential. A bare `/` stays. @default false
   */
  hidePath?: boolean | undefined;
}

/**
 * A URL with its secrets masked.
 * @param url any string meant as a URL (it need not parse)
 * @param options `hidePath`: mask the path too
 * @returns e.g. `https://***@wiki.example/?token=***` for `https://user:pass@wiki.example/?token=SECRET`;
 *   the parameter names of the query stay, their values do not; the fragment becomes `#***`
 * @example
 * redactUrl("https://wiki.example:8443/a?token=s3cret#x"); // "https://wiki.example:8443/a?token=***#***"
 * redactUrl("http://wiki.example/capability-s3cret", { hidePath: true }); // "http://wiki.example/***"
 */
export function redactUrl(url: string, options: RedactUrlOptions = {}): string {
  // Split by hand rather than with URL: an unparseable value must be masked too, and URL would
  // normalize (lowercase, percent-encode) the parts a reader needs to recognize.
  const hashAt = url.indexOf("#");
  const beforeHash = hashAt === -1 ? url : url.slice(0, hashAt);
  const queryAt = beforeHash.indexOf("?");
  const base = queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt);
  const query = queryAt === -1 ? undefined : beforeHash.slice(queryAt + 1);
  let out = maskUserInfo(options.hidePath ? maskPath(base) : base);
  if (query !== undefined) out += `?${maskQuery(query)}`;
  if (hashAt !== -1) out += `#${MASK}`;
  return out;
}

/**
 * Free text with every URL in it masked by `redactUrl`: for text that may quote a URL without saying
 * so, such as a server's stderr or an error from a transport.
 * @param text any text
 * @returns the text with each `scheme://…` run (up to whitespace, a quote or trailing punctuation) replaced by its redaction
 */
export function redactUrls(text: string): string {
  // Trailing punctuation belongs to the sentence, not to the URL.
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]*[^\s"'<>`.,;:!?)\]]/gi, (url) => redactUrl(url));
}

function maskUserInfo(base: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(base);
  const authorityStart = scheme ? scheme[0].length : base.startsWith("//") ? 2 : -1;
  if (authorityStart === -1) return base;
  const slash = base.indexOf("/", authorityStart);
  const authorityEnd = slash === -1 ? base.length : slash;
  const at = base.lastIndexOf("@", authorityEnd - 1);
  if (at < authorityStart) return base;
  return `${base.slice(0, authorityStart)}${MASK}@${base.slice(at + 1)}`;
}

/** The part before the query with any path other than `/` masked (also a value without a scheme). */
function maskPath(base: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(base);
  const authorityStart = scheme ? scheme[0].length : base.startsWith("//") ? 2 : 0;
  const slash = base.indexOf("/", authorityStart);
  if (slash === -1 || base.slice(slash) === "/") return base;
  return `${base.slice(0, slash)}/${MASK}`;
}

function maskQuery(query: string): string {
  if (query === "") return "";
  return query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      return eq === -1 ? MASK : `${pair.slice(0, eq)}=${MASK}`;
    })
    .join("&");
}
