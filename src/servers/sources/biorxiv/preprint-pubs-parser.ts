/**
 * Parses answers of the bioRxiv/medRxiv API `pubs` endpoint (`/pubs/<server>/<doi>/na/json` and the
 * date-interval form): the published journal versions of preprints, one object per preprint in
 * `collection` (`preprint_doi`, `published_doi`, `published_journal`, `published_date`, ...). The envelope
 * and its errors are those of `details` (see preprint-details-parser.ts).
 */
import { ProviderError } from "../provider-error.js";
import { parseJsonBody } from "../provider-http.js";
import type { ProviderAnswer } from "../source-module.js";

/** The journal version of one preprint, as the `pubs` endpoint describes it. */
export interface PreprintPublication {
  /** The preprint's DOI, lower-cased (`10.1101/2025.09.17.676679`). */
  preprintDoi: string;
  /** The journal version's DOI, as the API writes it (`10.1091/mbc.E25-09-0454`). */
  publishedDoi: string;
  /** The journal's name (`Molecular Biology of the Cell`). */
  journal: string | undefined;
  /** The journal version's publication date (`2026-06-01`). */
  publishedDate: string | undefined;
  /** `bioRxiv` or `medRxiv`. */
  preprintPlatform: string | undefined;
}

/**
 * Parses a `pubs` answer.
 * @param answer the JSON body, host and status
 * @returns the publications in the answer's order; empty for the API's "no posts found"
 * @throws ProviderError `upstream_unavailable` (with the status) for an empty or malformed body or an API
 *   error status
 */
export function parsePreprintPublications(answer: ProviderAnswer): PreprintPublication[] {
  if (answer.text.trim() === "") throw malformed(answer, "empty answer");
  const body = parseJsonBody(answer);
  if (!isObject(body) || !Array.isArray(body.messages)) throw malformed(answer, "no messages");
  const message = isObject(body.messages[0]) ? body.messages[0] : {};
  const status = textOf(message.status)?.toLowerCase();
  if (status === "no posts found") return [];
  if (status !== "ok") {
    throw new ProviderError("upstream_unavailable", `${answer.host} reported an error.`, {
      status: answer.status,
    });
  }
  if (!Array.isArray(body.collection)) throw malformed(answer, "no collection");
  return body.collection.flatMap((item) => {
    if (!isObject(item)) return [];
    const preprintDoi = textOf(item.preprint_doi)?.toLowerCase() ?? textOf(item.biorxiv_doi)?.toLowerCase();
    const publishedDoi = textOf(item.published_doi);
    if (!preprintDoi || !publishedDoi) return [];
    return [
      {
        preprintDoi,
        publishedDoi,
        journal: textOf(item.published_journal),
        publishedDate: textOf(item.published_date),
        preprintPlatform: textOf(item.preprint_platform),
      },
    ];
  });
}

function malformed(answer: ProviderAnswer, reason: string): ProviderError {
  return new ProviderError("upstream_unavailable", `${answer.host} sent a malformed answer (${reason}).`, {
    status: answer.status,
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// The API writes "NA" for absent values.
function textOf(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  return text === "" || text === "NA" ? undefined : text;
}
