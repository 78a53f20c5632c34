/**
 * Parses Europe PMC REST `search` answers (JSON, `resultType` lite or core) into plain hits, and Europe PMC's
 * error bodies (JSON `{errCode, errMsg}` and XML `<errorBean>`, both sent with HTTP 200) into ProviderErrors.
 */
import { type AuthorDetail, authorOf } from "../author-names.js";
import { ProviderError } from "../provider-error.js";
import { parseJsonBody } from "../provider-http.js";
import { scriptedText } from "../script-markup.js";
import type { ProviderAnswer } from "../source-module.js";
import { parseXml, xmlText } from "../xml-document.js";

/** One search hit, with the fields the Europe PMC and preprint tools use. */
export interface EuropePmcHit {
  /** Europe PMC id within `source` (`20516115`, `PMC3040717`, `PPR1302423`). */
  id: string;
  /** Europe PMC source code: `MED`, `PMC`, `PPR`, `AGR`, `CBA`, `CTX`, `ETH`, `HIR`, `PAT`. */
  source: string;
  pmid: string | undefined;
  pmcid: string | undefined;
  doi: string | undefined;
  title: string | undefined;
  /** Plain text (markup removed); only `resultType=core` answers carry it. */
  abstract: string | undefined;
  /** In the common display form, family name then initials (`Flaherty KT`); collective names as written. */
  authors: string[];
  /** The name parts Europe PMC gives (core answers only; lite ones carry just the display form). */
  authorDetails: AuthorDetail[];
  year: number | undefined;
  journal: string | undefined;
  volume: string | undefined;
  issue: string | undefined;
  pages: string | undefined;
  firstPublicationDate: string | undefined;
  /** Core answers only: the online and the print (issue) publication dates, `YYYY-MM-DD`. */
  electronicPublicationDate: string | undefined;
  printPublicationDate: string | undefined;
  publicationTypes: string[];
  keywords: string[];
  isOpenAccess: boolean;
  inEPMC: boolean;
  inPMC: boolean;
  hasPDF: boolean;
  citedByCount: number | undefined;
  /** The article licence as Europe PMC states it (`cc by`), core answers only. */
  license: string | undefined;
  /** The preprint server of a `PPR` record (`bioRxiv`, `medRxiv`). */
  preprintServer: string | undefined;
  /** Linked comments and corrections (`Retraction in`, `Erratum in`), core answers only. */
  commentCorrections: EuropePmcCommentCorrection[];
}

/** One `commentCorrectionList` entry of a core answer. */
export interface EuropePmcCommentCorrection {
  /** As Europe PMC writes it: `Retraction in`, `Expression of concern in`, `Erratum for`. */
  type: string;
  id: string | undefined;
  /** Europe PMC source code of `id` (`MED`). */
  source: string | undefined;
  /** Citation text of the linked item. */
  reference: string | undefined;
}

/** One page of a search. */
export interface EuropePmcPage {
  total: number;
  hits: EuropePmcHit[];
  /** The cursor of the next page, as Europe PMC gives it (it repeats the sent one at the end). */
  nextCursor: string | undefined;
  /** Results left out because they had no id or source. */
  skipped: number;
}

type Json = Record<string, unknown>;

/**
 * Parses a Europe PMC `search` answer.
 * @param answer the body, host and status
 * @returns the page of hits
 * @throws ProviderError `invalid_input` for Europe PMC's error body (a rejected query, cursor or page size),
 *   the mapped code of an XML `<errorBean>`, `upstream_unavailable` (with the status) for an empty or
 *   malformed answer
 */
export function parseEuropePmcSearch(answer: ProviderAnswer): EuropePmcPage {
  const text = answer.text.trim();
  if (text === "") throw malformed(answer, "empty answer");
  if (text.startsWith("<")) throw europePmcErrorBean(answer);
  const body = parseJsonBody(answer);
  if (!isObject(body)) throw malformed(answer, "not an object");
  if (body.errCode !== undefined) {
    // errMsg may quote the request; only the code travels.
    throw new ProviderError(
      "invalid_input",
      `Europe PMC rejected the request (error code ${String(body.errCode)}).`,
      {
        status: answer.status,
      },
    );
  }
  const total = Number(body.hitCount);
  const results = isObject(body.resultList) ? body.resultList.result : undefined;
  if (!Number.isInteger(total) || (results !== undefined && !Array.isArray(results))) {
    throw malformed(answer, "no hitCount or resultList");
  }
  const hits: EuropePmcHit[] = [];
  let skipped = 0;
  for (const result of results ?? []) {
    const hit = isObject(result) ? toHit(result) : undefined;
    if (hit) hits.push(hit);
    else skipped++;
  }
  return { total, hits, nextCursor: textOf(body.nextCursorMark), skipped };
}

/**
 * The ProviderError of a Europe PMC XML `<errorBean>` answer (sent by the per-article endpoints, and by
 * `search` when it fails before choosing a format).
 * @param answer the XML body, host and status
 * @returns `not_open_access` when Europe PMC says the article is not open access, `not_found` when it says
 *   there is no such article, `invalid_input` otherwise
 * @throws ProviderError `upstream_unavailable` when the body is not an `<errorBean>`
 */
export function europePmcErrorBean(answer: ProviderAnswer): ProviderError {
  const bean = parseXml(answer, { root: "errorBean" });
  const message = (xmlText(bean.errMsg) ?? "").toLowerCase();
  if (message.includes("not open access")) {
    return new ProviderError("not_open_access", "Europe PMC: the article is not open access.", {
      status: answer.status,
    });
  }
  if (/\bnot found\b|\bno (?:such )?(?:article|record)/.test(message)) {
    return new ProviderError("not_found", "Europe PMC has no such article.", { status: answer.status });
  }
  return new ProviderError(
    "invalid_input",
    `Europe PMC rejected the request (error code ${xmlText(bean.errCode) ?? "?"}).`,
    { status: answer.status },
  );
}

function toHit(result: Json): EuropePmcHit | undefined {
  const id = textOf(result.id);
  const source = textOf(result.source);
  if (!id || !source) return undefined;
  const journalInfo = object(result.journalInfo);
  const journal = object(journalInfo.journal);
  const year = Number(textOf(result.pubYear) ?? journalInfo.yearOfPublication);
  return {
    id,
    source,
    pmid: textOf(result.pmid),
    pmcid: textOf(result.pmcid),
    doi: textOf(result.doi),
    title: scriptedText(textOf(result.title)),
    abstract: abstractText(textOf(result.abstractText)),
    ...authorsOf(result),
    year: Number.isInteger(year) && year > 0 ? year : undefined,
    journal: textOf(journal.title) ?? textOf(result.journalTitle),
    volume: textOf(journalInfo.volume) ?? textOf(result.journalVolume),
    issue: textOf(journalInfo.issue) ?? textOf(result.issue),
    pages: textOf(result.pageInfo),
    firstPublicationDate: textOf(result.firstPublicationDate),
    electronicPublicationDate: textOf(result.electronicPublicationDate),
    printPublicationDate: textOf(journalInfo.printPublicationDate),
    publicationTypes: publicationTypes(result),
    keywords: strings(object(result.keywordList).keyword),
    isOpenAccess: result.isOpenAccess === "Y",
    inEPMC: result.inEPMC === "Y",
    inPMC: result.inPMC === "Y",
    hasPDF: result.hasPDF === "Y",
    citedByCount: typeof result.citedByCount === "number" ? result.citedByCount : undefined,
    license: textOf(result.license),
    preprintServer: textOf(object(result.bookOrReportDetails).publisher),
    commentCorrections: commentCorrections(result),
  };
}

function authorsOf(result: Json): { authors: string[]; authorDetails: AuthorDetail[] } {
  const list = object(result.authorList).author;
  if (Array.isArray(list)) {
    const authors = list.flatMap((entry) => {
      const author = object(entry);
      const id = object(author.authorId);
      const found = authorOf({
        collective: textOf(author.collectiveName),
        family: textOf(author.lastName),
        given: textOf(author.firstName),
        initials: textOf(author.initials),
        fullName: textOf(author.fullName),
        orcid: textOf(id.type) === "ORCID" ? textOf(id.value) : undefined,
      });
      return found ? [found] : [];
    });
    return {
      authors: authors.map((author) => author.display),
      authorDetails: authors.map((author) => author.detail),
    };
  }
  // Lite answers only have "Lee MS, Green R, Glover JN.", already in the display form (collective names with
  // commas are rare).
  const names = textOf(result.authorString)?.replace(/\.$/, "");
  return {
    authors: names ? names.split(/,\s*/).filter((name) => name.trim() !== "") : [],
    authorDetails: [],
  };
}

function publicationTypes(result: Json): string[] {
  const list = strings(object(result.pubTypeList).pubType);
  if (list.length > 0) return list;
  return (textOf(result.pubType) ?? "")
    .split(";")
    .map((type) => type.trim())
    .filter(Boolean);
}

function commentCorrections(result: Json): EuropePmcCommentCorrection[] {
  const list = object(result.commentCorrectionList).commentCorrection;
  return (Array.isArray(list) ? list : isObject(list) ? [list] : []).flatMap((entry) => {
    const item = object(entry);
    const type = textOf(item.type);
    if (!type) return [];
    return [{ type, id: textOf(item.id), source: textOf(item.source), reference: textOf(item.reference) }];
  });
}

// Abstracts carry HTML: <h4> section headings, <i>, <sup>. Each section becomes its own "Label: text"
// paragraph, as PubMed's labelled AbstractText are.
function abstractText(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const sections = raw.split(/(?=<h4\b)/i).flatMap((section) => {
    const heading = /^<h4\b[^>]*>([\s\S]*?)<\/h4\s*>/i.exec(section);
    const label = heading ? scriptedText(heading[1])?.replace(/\s*:$/, "") : undefined;
    const text = scriptedText(heading ? section.slice(heading[0].length) : section);
    if (!text) return label ? [] : [];
    return [label ? `${label}: ${text}` : text];
  });
  return sections.length > 0 ? sections.join("\n\n") : undefined;
}

function malformed(answer: ProviderAnswer, reason: string): ProviderError {
  return new ProviderError("upstream_unavailable", `${answer.host} sent a malformed answer (${reason}).`, {
    status: answer.status,
  });
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function object(value: unknown): Json {
  return isObject(value) ? value : {};
}

function textOf(value: unknown): string | undefined {
  if (typeof value === "number") return String(value);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.flatMap((item) => textOf(item) ?? []) : [];
}
