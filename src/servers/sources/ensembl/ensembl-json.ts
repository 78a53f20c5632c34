/**
 * Reading Ensembl REST answers. Ensembl reports an unknown id, symbol or species with HTTP 400 and a JSON
 * `{"error": "..."}` body (not 404), so that body decides between `not_found` and `invalid_input`.
 */
import { ProviderError } from "../provider-error.js";
import { parseJsonBody } from "../provider-http.js";
import type { ProviderAnswer } from "../source-module.js";

/** The `lookup/id` and `lookup/symbol` object of a gene, transcript, translation or exon. */
export interface EnsemblLookupObject {
  id: string;
  object_type: string;
  [field: string]: unknown;
}

/** The messages to use for the failures a call can meet. */
export interface EnsemblFailureMessages {
  /** For an unknown id or symbol. */
  notFound: string;
  /** For any other rejected request. @default "Ensembl rejected the request as invalid." */
  invalid?: string;
}

/**
 * Parses an Ensembl JSON answer, turning an HTTP 400 error body into the matching `ProviderError`. The
 * provider's own message is not forwarded: it repeats the input.
 * @param answer the answer (HTTP 400 must have been accepted by the request)
 * @param messages what to say for an unknown record or another rejection
 * @returns the parsed JSON
 * @throws ProviderError `not_found` (unknown id or symbol), `invalid_input` (unknown species, other
 *   rejections), `upstream_unavailable` (malformed JSON)
 */
export function readEnsemblJson(answer: ProviderAnswer, messages: EnsemblFailureMessages): unknown {
  if (answer.status === 400) {
    const error = errorText(answer);
    const status = { status: 400 };
    if (/species/i.test(error)) {
      throw new ProviderError("invalid_input", "Ensembl does not know the requested species.", status);
    }
    if (/not found|no valid lookup|could not (?:find|get)|can(?:no|')t find|does not exist/i.test(error)) {
      throw new ProviderError("not_found", messages.notFound, status);
    }
    throw new ProviderError(
      "invalid_input",
      messages.invalid ?? "Ensembl rejected the request as invalid.",
      status,
    );
  }
  return parseJsonBody(answer);
}

/**
 * Parses a `lookup/id` or `lookup/symbol` answer.
 * @param answer the provider answer
 * @param messages failure messages (see `readEnsemblJson`)
 * @returns the looked-up object
 * @throws ProviderError as `readEnsemblJson`, and `upstream_unavailable` when the JSON is not a lookup object
 */
export function parseEnsemblLookup(
  answer: ProviderAnswer,
  messages: EnsemblFailureMessages = { notFound: "Ensembl has no such record." },
): EnsemblLookupObject {
  const value = readEnsemblJson(answer, messages);
  if (!isObject(value) || typeof value.id !== "string" || typeof value.object_type !== "string") {
    throw new ProviderError(
      "upstream_unavailable",
      `${answer.host} sent an answer that is not a lookup object.`,
      {
        status: answer.status,
      },
    );
  }
  return value as EnsemblLookupObject;
}

/**
 * Parses an answer that must be a JSON array (overlap, VEP).
 * @param answer the provider answer
 * @param messages failure messages (see `readEnsemblJson`)
 * @returns the array's object items
 * @throws ProviderError as `readEnsemblJson`, and `upstream_unavailable` when the JSON is not an array
 */
export function parseEnsemblArray(
  answer: ProviderAnswer,
  messages: EnsemblFailureMessages,
): Record<string, unknown>[] {
  const value = readEnsemblJson(answer, messages);
  if (!Array.isArray(value)) {
    throw new ProviderError("upstream_unavailable", `${answer.host} sent an answer that is not a list.`, {
      status: answer.status,
    });
  }
  return value.filter(isObject);
}

/**
 * Whether a JSON value is a plain object.
 * @param value any JSON value
 * @returns true for an object that is not an array
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A string field, or undefined.
 * @param value the field
 * @returns the trimmed non-empty string
 */
export function str(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/**
 * A finite number field, or undefined.
 * @param value the field
 * @returns the number
 */
export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function errorText(answer: ProviderAnswer): string {
  try {
    const body: unknown = JSON.parse(answer.text);
    if (isObject(body) && typeof body.error === "string") return body.error;
  } catch {
    // Not JSON: fall back to the raw text, only to classify it.
  }
  return answer.text.slice(0, 500);
}
