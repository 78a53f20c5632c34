/**
 * The environment naming scheme of provider base URLs, shared by every source, the fake provider server
 * and the offline demo:
 *
 * - main endpoint of a source: `SCIENCEGATE_<SOURCE>_BASE_URL` (for example `SCIENCEGATE_PUBMED_BASE_URL`)
 * - any other endpoint: `SCIENCEGATE_<SOURCE>_<ENDPOINT>_BASE_URL` (`SCIENCEGATE_PUBMED_PMC_OA_BASE_URL`)
 *
 * `<SOURCE>` and `<ENDPOINT>` are the ids upper-cased with `-` turned into `_` (`europe-pmc` → `EUROPE_PMC`).
 * An empty value counts as unset.
 */
import { GovernanceError } from "../../core/index.js";
import type { SourceEndpoint, SourceModule } from "./source-module.js";

/** Environment variables as `process.env` holds them. */
export type SourceEnv = Readonly<Record<string, string | undefined>>;

/**
 * The environment variable that overrides one endpoint's base URL.
 * @param sourceId the source id (`pubmed`)
 * @param endpointKey the endpoint key (`pmc-oa`); omit it for the source's main endpoint
 * @returns the variable name, e.g. `SCIENCEGATE_PUBMED_BASE_URL`
 */
export function baseUrlEnvVar(sourceId: string, endpointKey?: string): string {
  const parts = endpointKey === undefined ? [sourceId] : [sourceId, endpointKey];
  return `SCIENCEGATE_${parts.map((part) => part.toUpperCase().replace(/[^A-Z0-9]+/g, "_")).join("_")}_BASE_URL`;
}

/**
 * The environment variable of each endpoint of a source, in endpoint order (the main one first).
 * @param source the source module
 * @returns pairs of endpoint and variable name
 */
export function endpointEnvVars(source: SourceModule): { endpoint: SourceEndpoint; envVar: string }[] {
  return source.endpoints.map((endpoint, index) => ({
    endpoint,
    envVar: baseUrlEnvVar(source.id, index === 0 ? undefined : endpoint.key),
  }));
}

/**
 * The base URL of every endpoint of a source: the environment override when set, else the default.
 * @param source the source module
 * @param env the environment to read
 * @returns endpoint key → base URL without a trailing slash
 * @throws GovernanceError `INVALID_CONFIG` when an override is not an http(s) URL (names the variable)
 */
export function resolveBaseUrls(source: SourceModule, env: SourceEnv): Map<string, string> {
  const urls = new Map<string, string>();
  for (const { endpoint, envVar } of endpointEnvVars(source)) {
    const override = env[envVar]?.trim();
    const value = override ? override : endpoint.defaultBaseUrl;
    if (!isHttpUrl(value)) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        `Environment variable ${envVar} must be an http(s) URL such as ${endpoint.defaultBaseUrl}; got '${value}'. ` +
          "Fix or unset it.",
      );
    }
    urls.set(endpoint.key, value.replace(/\/+$/, ""));
  }
  return urls;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}
