/**
 * NCBI E-utilities calls shared by the NCBI sources (pubmed now; clinvar and geo use the same endpoint
 * definition and helpers). Identification parameters are added by ProviderHttp (`ncbi: true`).
 */
import { ProviderError } from "../provider-error.js";
import { parseJsonBody } from "../provider-http.js";
import type { ProviderAnswer, ProviderResponse, SourceEndpoint, SourceHttp } from "../source-module.js";

/** The E-utilities endpoint; a source that declares it first gets `SCIENCEGATE_<SOURCE>_BASE_URL`. */
export const EUTILS_ENDPOINT: SourceEndpoint = {
  key: "eutils",
  defaultBaseUrl: "https://eutils.ncbi.nlm.nih.gov/entrez/eutils",
  ncbi: true,
};

/** One page of an ESearch. */
export interface EsearchPage {
  total: number;
  start: number;
  ids: string[];
  /** How many query phrases NCBI could not match and dropped. */
  phrasesNotFound: number;
  /** The phrases and field tags NCBI dropped, as it names them (`p.E1317Q`). */
  dropped: string[];
  /** NCBI's messages about quoted phrases it could not match or searched differently. */
  notices: string[];
  /** The query NCBI actually ran (`QueryTranslation`), when it gives one. */
  queryTranslation: string | undefined;
}

/**
 * The warnings of an ESearch page whose query NCBI widened or rewrote: the dropped phrases by name, NCBI's
 * notices, and the query it actually ran.
 * @param page the page
 * @param database the database's display name (`PubMed`)
 * @returns zero or more warnings
 */
export function widenedSearchWarnings(page: EsearchPage, database: string): string[] {
  const warnings: string[] = [];
  if (page.dropped.length > 0) {
    const names = page.dropped.map((phrase) => `"${phrase}"`).join(", ");
    const ran = page.queryTranslation ? ` NCBI actually searched: ${page.queryTranslation}` : "";
    warnings.push(
      page.total > 0
        ? `${database} found nothing for ${names} and dropped it from the query, so these ${page.total} hit(s) ` +
            `are for a wider search than the one asked.${ran}`
        : `${database} found nothing for ${names} and dropped it from the query.${ran}`,
    );
  }
  for (const notice of page.notices) {
    // "No items found." only repeats an empty result.
    if (!(page.total === 0 && /^no items found/i.test(notice)))
      warnings.push(`${database} (NCBI) says: ${notice}`);
  }
  return warnings;
}

/** Parameters of an ESearch. */
export interface EsearchParams {
  db: string;
  term: string;
  start: number;
  max: number;
  /** An E-utilities sort value (`relevance`, `pub_date`); omitted for the database default. */
  sort?: string | undefined;
}

/**
 * Runs an ESearch (JSON).
 * @param http the source's HTTP client
 * @param params database, query, paging and sort
 * @returns the page of UIDs and the total
 * @throws ProviderError `invalid_input` when NCBI rejects the query, `rate_limited`, `upstream_unavailable`
 */
export async function esearch(http: SourceHttp, params: EsearchParams): Promise<EsearchPage> {
  const response = await http.request("eutils", "/esearch.fcgi", {
    query: {
      db: params.db,
      term: params.term,
      retmode: "json",
      retstart: params.start,
      retmax: params.max,
      sort: params.sort,
    },
    accept: "application/json",
  });
  return parseEsearchJson(response, params.start);
}

/**
 * Parses an ESearch JSON answer.
 * @param answer the answer
 * @param start the requested offset, when the answer does not repeat it @default 0
 * @returns the page of UIDs and the total
 * @throws ProviderError `invalid_input` when NCBI rejected the query, `rate_limited`, `upstream_unavailable`
 */
export function parseEsearchJson(answer: ProviderAnswer, start = 0): EsearchPage {
  const result = record(eutilsJson(answer).esearchresult);
  if (typeof result.ERROR === "string") {
    throw new ProviderError("invalid_input", "NCBI could not run the query (check its syntax).", {
      status: answer.status,
    });
  }
  const total = Number(result.count);
  const ids = result.idlist;
  if (!Number.isInteger(total) || !Array.isArray(ids)) throw malformed(answer, "no count or idlist");
  const errors = record(result.errorlist);
  const warnings = record(result.warninglist);
  const phrases = strings(errors.phrasesnotfound);
  const fields = strings(errors.fieldsnotfound);
  const notices = [
    ...strings(warnings.quotedphrasesnotfound).map(
      (phrase) => `quoted phrase "${phrase.replace(/^"|"$/g, "")}" was not found.`,
    ),
    ...strings(warnings.phrasesignored).map((phrase) => `phrase "${phrase}" was ignored.`),
    ...strings(warnings.outputmessages),
  ];
  const translation = typeof result.querytranslation === "string" ? result.querytranslation.trim() : "";
  return {
    total,
    start: Number(result.retstart) || start,
    ids: ids.map(String),
    phrasesNotFound: phrases.length,
    dropped: [...phrases, ...fields.map((field) => `[${field}]`)],
    notices,
    queryTranslation: translation || undefined,
  };
}

/** Parameters of an ELink by a single UID. */
export interface ElinkParams {
  dbfrom: string;
  db: string;
  id: string;
  /** The link name, e.g. `pubmed_pubmed_citedin`. */
  linkname: string;
}

/**
 * Runs an ELink (JSON) for one UID and one link name.
 * @param http the source's HTTP client
 * @param params databases, UID and link name
 * @returns the linked UIDs in NCBI's order (empty when there are none)
 * @throws ProviderError `rate_limited`, `upstream_unavailable`
 */
export async function elink(http: SourceHttp, params: ElinkParams): Promise<string[]> {
  const response = await http.request("eutils", "/elink.fcgi", {
    query: {
      dbfrom: params.dbfrom,
      db: params.db,
      id: params.id,
      linkname: params.linkname,
      retmode: "json",
    },
    accept: "application/json",
  });
  return parseElinkJson(response, params.linkname);
}

/**
 * Parses an ELink JSON answer.
 * @param answer the answer
 * @param linkname the link name to read
 * @returns the distinct linked UIDs in NCBI's order
 * @throws ProviderError `rate_limited`, `upstream_unavailable`
 */
export function parseElinkJson(answer: ProviderAnswer, linkname: string): string[] {
  const body = eutilsJson(answer);
  if (!Array.isArray(body.linksets)) throw malformed(answer, "no linksets");
  const links: string[] = [];
  for (const linkset of body.linksets) {
    for (const db of asList(record(linkset).linksetdbs)) {
      if (record(db).linkname !== linkname) continue;
      // Plain UIDs with cmd=neighbor; {id, score} objects with cmd=neighbor_score.
      for (const link of asList(record(db).links)) {
        const id = typeof link === "object" && link !== null ? record(link).id : link;
        if (typeof id === "string" || typeof id === "number") links.push(String(id));
      }
    }
  }
  return [...new Set(links)];
}

/**
 * Runs an EFetch for a list of UIDs.
 * @param http the source's HTTP client
 * @param db the database
 * @param ids the UIDs (at most a few hundred: they travel in the URL)
 * @param rettype the E-utilities `rettype`, if any
 * @returns the raw answer (XML for `retmode=xml`)
 * @throws ProviderError `rate_limited`, `upstream_unavailable`
 */
export function efetch(
  http: SourceHttp,
  db: string,
  ids: readonly string[],
  rettype?: string,
): Promise<ProviderResponse> {
  return http.request("eutils", "/efetch.fcgi", {
    query: { db, id: ids.join(","), retmode: "xml", rettype },
    accept: "application/xml",
  });
}

/**
 * Parses an E-utilities JSON answer and surfaces the errors NCBI sends with HTTP 200.
 * @param response the answer
 * @returns the JSON object
 * @throws ProviderError `rate_limited` for NCBI's "API rate limit exceeded" body, `upstream_unavailable`
 *   for any other error body or a malformed answer
 */
export function eutilsJson(response: ProviderAnswer): Record<string, unknown> {
  const body = parseJsonBody(response);
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw malformed(response, "not an object");
  const error = (body as Record<string, unknown>).error ?? (body as Record<string, unknown>).ERROR;
  if (typeof error === "string") {
    // NCBI's documented over-limit body; it has no Retry-After, the broker applies its own cooldown.
    if (error === "API rate limit exceeded") {
      throw new ProviderError("rate_limited", `${response.host} rate-limited the request.`);
    }
    throw new ProviderError("upstream_unavailable", `${response.host} reported an error.`, {
      status: response.status,
    });
  }
  return body as Record<string, unknown>;
}

function malformed(response: ProviderAnswer, reason: string): ProviderError {
  return new ProviderError("upstream_unavailable", `${response.host} sent a malformed answer (${reason}).`, {
    status: response.status,
  });
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function strings(value: unknown): string[] {
  return asList(value).flatMap((item) =>
    typeof item === "string" && item.trim() !== "" ? [item.trim()] : [],
  );
}
