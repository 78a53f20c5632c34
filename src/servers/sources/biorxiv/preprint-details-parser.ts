/**
 * Parses answers of the bioRxiv/medRxiv API `details` endpoint (`/details/<server>/<doi>/na/json` and the
 * date-interval form): `{messages: [{status, ...}], collection: [one object per preprint version]}`.
 * Errors come with HTTP 200: `status` other than "ok", or an empty body.
 */

import { ALL_ENTITIES, EntityDecoder } from "@nodable/entities";
import { authorOf } from "../author-names.js";
import { ProviderError } from "../provider-error.js";
import { parseJsonBody } from "../provider-http.js";
import type { ProviderAnswer } from "../source-module.js";

/** One version of a preprint, as the API describes it. */
export interface PreprintVersion {
  doi: string;
  version: number;
  title: string | undefined;
  /** Names as "M. Loconsole" (the API writes "Loconsole, M."). */
  authors: string[];
  /** Posting date of this version (`2026-08-01`). */
  date: string | undefined;
  /** `new results`, `confirmatory results`, `contradictory results` (bioRxiv), `PUBLISHAHEADOFPRINT` (medRxiv). */
  type: string | undefined;
  /** The API's licence code (`cc_by_nc_nd`). */
  license: string | undefined;
  category: string | undefined;
  abstract: string | undefined;
  /** `bioRxiv` or `medRxiv`. */
  server: string | undefined;
  /** The DOI of the journal version, when the preprint was published. */
  publishedDoi: string | undefined;
  /** The JATS XML of this version on the server's website. */
  jatsXml: string | undefined;
  correspondingAuthor: string | undefined;
  correspondingInstitution: string | undefined;
}

/** A parsed `details` answer. */
export interface PreprintDetails {
  /** False for the API's "no posts found" answer. */
  found: boolean;
  /** Versions in the answer's order (oldest first for a DOI). */
  versions: PreprintVersion[];
  /** The interval total (interval queries only; the API sends it as a string). */
  total: number | undefined;
}

/**
 * Parses a `details` answer.
 * @param answer the JSON body, host and status
 * @returns whether anything was found, and the versions
 * @throws ProviderError `upstream_unavailable` (with the status) for an empty or malformed body or an API
 *   error status
 */
export function parsePreprintDetails(answer: ProviderAnswer): PreprintDetails {
  // The API has been seen answering HTTP 200 with an empty body when it fails.
  if (answer.text.trim() === "") throw malformed(answer, "empty answer");
  const body = parseJsonBody(answer);
  if (!isObject(body) || !Array.isArray(body.messages)) throw malformed(answer, "no messages");
  const message = isObject(body.messages[0]) ? body.messages[0] : {};
  const status = textOf(message.status)?.toLowerCase();
  if (status === "no posts found") return { found: false, versions: [], total: 0 };
  if (status !== "ok") {
    throw new ProviderError("upstream_unavailable", `${answer.host} reported an error.`, {
      status: answer.status,
    });
  }
  if (!Array.isArray(body.collection)) throw malformed(answer, "no collection");
  const versions = body.collection.flatMap((item) => {
    const version = isObject(item) ? toVersion(item) : undefined;
    return version ? [version] : [];
  });
  const total = Number(message.total);
  return { found: versions.length > 0, versions, total: Number.isInteger(total) ? total : undefined };
}

// The API's "Last, F.; Other, A. B." author list in the common display form ("Last F"), in order.
function preprintAuthors(authors: string | undefined): string[] {
  if (!authors) return [];
  return authors
    .split(";")
    .map((author) => author.trim())
    .filter(Boolean)
    .map((author) => {
      const comma = author.indexOf(",");
      if (comma < 0) return author;
      const family = author.slice(0, comma);
      const given = author.slice(comma + 1);
      return authorOf({ family, given, fullName: author })?.display ?? author;
    });
}

function toVersion(item: Record<string, unknown>): PreprintVersion | undefined {
  const doi = textOf(item.doi)?.toLowerCase();
  const version = Number(textOf(item.version) ?? 1);
  if (!doi || !Number.isInteger(version) || version < 1) return undefined;
  return {
    doi,
    version,
    title: plainText(textOf(item.title)),
    authors: preprintAuthors(textOf(item.authors)),
    date: textOf(item.date),
    type: textOf(item.type),
    license: textOf(item.license),
    category: textOf(item.category),
    abstract: plainText(textOf(item.abstract)),
    server: textOf(item.server),
    publishedDoi: textOf(item.published),
    jatsXml: textOf(item.jatsxml),
    correspondingAuthor: textOf(item.author_corresponding),
    correspondingInstitution: textOf(item.author_corresponding_institution),
  };
}

// The API writes HTML entities into its JSON strings (`&quot;budded&quot;`, `&lt;`, `&alpha;`); one decoding
// pass, whatever the entity, by the HTML5 table.
const ENTITIES = new EntityDecoder({ namedEntities: ALL_ENTITIES });

// Plain text, not HTML ("p < 0.05" must survive), with entities decoded and flattened with bioRxiv's markers of
// small capitals (O_SCPCAP...C_SCPCAP, sometimes glued inside a word) and list items (O_LI, C_LIO_LI).
function plainText(text: string | undefined): string | undefined {
  const clean = (text === undefined ? undefined : ENTITIES.decode(text))
    ?.replace(/[OC]_SCPCAP/g, "")
    .replace(/[OC]_(?:LIO_LI|LIO|LI|LIST)/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return clean || undefined;
}

function malformed(answer: ProviderAnswer, reason: string): ProviderError {
  return new ProviderError("upstream_unavailable", `${answer.host} sent a malformed answer (${reason}).`, {
    status: answer.status,
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// The API writes "NA" for absent values (funder, published).
function textOf(value: unknown): string | undefined {
  if (typeof value === "number") return String(value);
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  return text === "" || text === "NA" ? undefined : text;
}
