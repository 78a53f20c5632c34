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
 * Replaces every string in free-form `data` that is a link with a script-capable scheme
 * (`javascript:`, `data:`, `vbscript:`) with `DISARMED_LINK`. Other strings, `https:` links included,
 * are left as they are (free-form data has no host allowlist). The walk is as deep as the value; the
 * broker's response cap and depth guard bound it.
 * @param value the result's `data`
 * @returns the disarmed copy and how many strings were replaced
 */
export function disarmLinks(value: unknown): { value: unknown; replaced: number } {
  let replaced = 0;
  const walk = (inner: unknown): unknown => {
    if (typeof inner === "string") {
      if (!DANGEROUS_SCHEME.test(inner.replace(/[\t\n\r]/g, ""))) return inner;
      replaced++;
      return DISARMED_LINK;
    }
    if (Array.isArray(inner)) return inner.map(walk);
    if (typeof inner === "object" && inner !== null) {
      // fromEntries defines own properties, so a "__proto__" key from JSON stays a plain key.
      return Object.fromEntries(Object.entries(inner).map(([key, item]) => [key, walk(item)]));
    }
    return inner;
  };
  return { value: walk(value), replaced };
}
