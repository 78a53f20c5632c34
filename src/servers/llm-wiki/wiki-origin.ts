/**
 * The two values a wiki citation is built from: the configured origin and a validated page path. Citation
 * URLs never come from a URL the wiki returned, so a hostile wiki cannot point a citation elsewhere.
 */
import { GovernanceError, redactUrl } from "../../core/index.js";
import { ProviderError } from "../sources/provider-error.js";

/** The environment variable holding the wiki origin (shared by citation building and the bridge). */
export const LLM_WIKI_URL_ENV = "SCIENCE_AGENT_LLM_WIKI_URL";
/** The environment variable holding the optional Bearer token. */
export const LLM_WIKI_TOKEN_ENV = "SCIENCE_AGENT_LLM_WIKI_TOKEN";
/** The origin used when `SCIENCE_AGENT_LLM_WIKI_URL` is unset or empty. */
export const DEFAULT_LLM_WIKI_URL = "http://127.0.0.1:8100";
/** The prefix of every wiki HTTP endpoint below the origin. */
export const WIKI_API_PREFIX = "/api/v1";

/**
 * Validates the configured wiki URL: an http(s) origin, nothing else.
 * @param raw the value of `SCIENCE_AGENT_LLM_WIKI_URL` (undefined or empty means the default)
 * @returns the origin, e.g. `http://127.0.0.1:8100` (no trailing slash)
 * @throws GovernanceError `INVALID_CONFIG` when the value is not a URL, not http(s), carries user
 *   information, or has a path (such as `/api/v1`), query or fragment
 */
export function parseWikiOrigin(raw: string | undefined): string {
  const value = raw?.trim() || DEFAULT_LLM_WIKI_URL;
  // Messages quote the value redacted: a token in its query, user information or path (a capability
  // URL) must not reach a log, the catalog's reason or a ledger row.
  const shown = redactUrl(value, { hidePath: true });
  const fix = `Set ${LLM_WIKI_URL_ENV} to the wiki origin only, e.g. ${DEFAULT_LLM_WIKI_URL}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new GovernanceError("INVALID_CONFIG", `${LLM_WIKI_URL_ENV}='${shown}' is not a URL. ${fix}.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `${LLM_WIKI_URL_ENV}='${shown}' must use http or https, not ${url.protocol}. ${fix}.`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `${LLM_WIKI_URL_ENV}='${shown}' must not carry user information; put a token in ${LLM_WIKI_TOKEN_ENV}. ${fix}.`,
    );
  }
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "" || /[?#]/.test(value)) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `${LLM_WIKI_URL_ENV}='${shown}' has a path, query or fragment; it takes the origin only, without ${WIKI_API_PREFIX}. ${fix}.`,
    );
  }
  return url.origin;
}

/**
 * Checks a page path the model or the wiki supplied and returns it percent-encoded, segment by segment.
 * Percent-escapes are decoded once before the checks, so `%2e%2e` counts as `..`.
 * @param path a relative page path such as `concepts/crispr.md`
 * @returns the encoded relative path (no leading slash)
 * @throws ProviderError `invalid_input` for an empty path, a scheme or absolute URL (`https://evil`,
 *   `//host`), `.` or `..` segments, backslashes, control characters or malformed escapes
 */
export function encodePagePath(path: string): string {
  const reject = (why: string) =>
    new ProviderError("invalid_input", `The page path is not a relative wiki path: ${why}.`);
  let decoded: string;
  try {
    decoded = decodeURIComponent(path.trim());
  } catch {
    throw reject("it has a malformed percent-escape");
  }
  if (decoded === "") throw reject("it is empty");
  if (/^[a-z][a-z0-9+.-]*:/i.test(decoded)) throw reject("it has a URL scheme");
  if (decoded.startsWith("//")) throw reject("it is an absolute URL");
  if (decoded.includes("\\")) throw reject("it contains a backslash");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is rejected
  if (/[\u0000-\u001f\u007f]/.test(decoded)) throw reject("it contains control characters");
  // One leading slash is tolerated (`/concepts/x`): the path is always resolved below the API prefix.
  const segments = decoded.replace(/^\//, "").split("/");
  if (segments.some((s) => s === "." || s === "..")) throw reject("it contains '.' or '..' segments");
  if (segments.some((s) => s === "")) throw reject("it contains an empty segment");
  return segments.map((s) => encodeURIComponent(s)).join("/");
}

/**
 * The citation URL of a wiki page: the configured origin plus the page endpoint and the encoded path.
 * @param origin the validated origin (`parseWikiOrigin`)
 * @param path the raw page path
 * @returns e.g. `http://127.0.0.1:8100/api/v1/wiki/concepts/crispr.md`
 * @throws ProviderError `invalid_input` as `encodePagePath`
 */
export function wikiPageUrl(origin: string, path: string): string {
  return `${origin}${WIKI_API_PREFIX}/wiki/${encodePagePath(path)}`;
}
