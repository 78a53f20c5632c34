/** The URL allowlist: which URLs a result's records, citations and candidates may use. */

/** The allowed hosts (HTTPS), plus exact origins of a private source (any scheme the origin has). */
export interface AllowedUrls extends ReadonlySet<string> {
  readonly origins?: ReadonlySet<string>;
}

/**
 * The origin (`scheme://host:port`) of a configured URL.
 * @param url an absolute URL
 * @returns its origin, or undefined when it does not parse or has no origin (`file:`, `data:`)
 */
export function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.origin === "null" ? undefined : parsed.origin;
  } catch {
    return undefined;
  }
}

/**
 * Why a URL is not acceptable: it must parse, be `https:`, carry no user information and no explicit
 * port, and its host must be exactly (case-insensitively) one of `hosts` — no subdomains. A URL on one
 * of `hosts.origins` is accepted with that origin's scheme and port, still without user information.
 * @param what the field named in the reason (`url`, `citation 0 url`)
 * @param url the URL to check
 * @param hosts the allowed hosts (lower case) and origins
 * @returns the reason, ready to follow "Dropped record X: ", or undefined when the URL is acceptable
 */
export function urlProblem(what: string, url: string, hosts: AllowedUrls): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `its ${what} is not a valid URL`;
  }
  const onAllowedOrigin = hosts.origins?.has(parsed.origin) === true;
  if (onAllowedOrigin && parsed.username === "" && parsed.password === "") return undefined;
  if (parsed.protocol !== "https:") return `its ${what} uses "${parsed.protocol}" instead of https`;
  if (parsed.username !== "" || parsed.password !== "") return `its ${what} carries user information`;
  // URL drops the default port 443, so any port left is a non-standard one.
  if (parsed.port !== "") return `its ${what} uses port ${parsed.port}`;
  if (!hosts.has(parsed.hostname)) return `its ${what} host "${parsed.hostname}" is not an allowed host`;
  return undefined;
}

/** What a disarmed link in free-form `data` becomes. */
export const DISARMED_LINK = "[link removed: unsafe scheme]";

// Browsers ignore leading control characters and spaces, and tabs and newlines anywhere in a URL.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are the point
const DANGEROUS_SCHEME = /^[\u0000-\u0020]*(javascript|data|vbscript):/i;

/**
 * Whether a string is a link with a script-capable scheme (`javascript:`, `data:`, `vbscript:`); tabs
 * and line breaks inside the scheme do not hide it. Free-form `data` has no host allowlist, so such
 * links are its only strings replaced (by `DISARMED_LINK`); `https:` links stay.
 * @param text any string
 */
export function isDangerousLink(text: string): boolean {
  return DANGEROUS_SCHEME.test(text.replace(/[\t\n\r]/g, ""));
}
