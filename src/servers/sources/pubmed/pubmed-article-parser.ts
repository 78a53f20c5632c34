/** Parses PubMed EFetch XML (`PubmedArticleSet`) into normalized records. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { buildRecord, doiReference } from "../record-builder.js";
import { integrityWarning } from "../record-integrity.js";
import { scriptedText } from "../script-markup.js";
import type { ProviderAnswer } from "../source-module.js";
import { asArray, asNode, child, parseXml, type XmlNode, xmlAttr, xmlText } from "../xml-document.js";
import {
  electronicPublicationDate,
  pubmedAuthors,
  pubmedCommentsCorrections,
  pubmedDataBanks,
  pubmedMesh,
} from "./pubmed-citation-details.js";
import { pmcUrl, pubmedUrl } from "./pubmed-ids.js";
import { pubmedIntegrity } from "./pubmed-integrity.js";

const ARRAY_TAGS = [
  "PubmedArticle",
  "PubmedBookArticle",
  "Author",
  "AbstractText",
  "ArticleId",
  "ELocationID",
  "PublicationType",
  "MeshHeading",
  "KeywordList",
  "Keyword",
  "AuthorList",
  "CommentsCorrectionsList",
  "CommentsCorrections",
  "ArticleDate",
  "PubMedPubDate",
  "DataBank",
  "AccessionNumber",
  "QualifierName",
  "Identifier",
  "Language",
];
const MARKUP_TAGS = ["ArticleTitle", "VernacularTitle", "BookTitle", "AbstractText"];
/** Publication types that are not peer-reviewed research even in indexed journals. */
const NOT_PEER_REVIEWED = new Set([
  "Preprint",
  "Comment",
  "Editorial",
  "Letter",
  "News",
  "Published Erratum",
]);

/**
 * Parses an EFetch answer of `db=pubmed&retmode=xml`.
 * @param answer the XML body, host and status
 * @returns one record per article, in the answer's order
 * @throws ProviderError `upstream_unavailable` when the XML is malformed
 */
export function parsePubmedArticles(answer: ProviderAnswer): McpRecord[] {
  const root = parseXml(answer, { root: "PubmedArticleSet", arrayTags: ARRAY_TAGS, markupTags: MARKUP_TAGS });
  const records: McpRecord[] = [];
  for (const article of asArray(root.PubmedArticle)) {
    const record = journalArticle(article as XmlNode);
    if (record) records.push(record);
  }
  for (const article of asArray(root.PubmedBookArticle)) {
    const record = bookArticle(article as XmlNode);
    if (record) records.push(record);
  }
  return records;
}

function journalArticle(node: XmlNode): McpRecord | undefined {
  const citation = child(node, "MedlineCitation");
  const pmid = xmlText(citation.PMID);
  if (!pmid) return undefined;
  const article = child(citation, "Article");
  const journal = child(article, "Journal");
  const issue = child(journal, "JournalIssue");
  const pubDate = child(issue, "PubDate");
  const publicationTypes = asArray(child(article, "PublicationTypeList").PublicationType).flatMap(textList);
  const ids = articleIds(child(child(node, "PubmedData"), "ArticleIdList"));
  // The DOI is in ArticleIdList for most records, only in ELocationID for some recent ones.
  const doi = ids.doi ?? xmlText(asArray(article.ELocationID).find((e) => xmlAttr(e, "EIdType") === "doi"));
  const links = pubmedCommentsCorrections(citation);
  const integrity = pubmedIntegrity(links, publicationTypes);
  const authors = pubmedAuthors(asArray(article.AuthorList)[0]);
  const { trialRegistrations, dataBankAccessions } = pubmedDataBanks(article);
  const { meshHeadings, meshMajorTopics } = pubmedMesh(citation);
  const languages = asArray(article.Language).flatMap(textList);
  const originalTitle = scriptedText(article.VernacularTitle);
  const warnings = integrity ? [integrityWarning(integrity, `PMID:${pmid}`)] : [];
  warnings.push(...languageWarnings(`PMID:${pmid}`, languages, originalTitle));
  return buildRecord({
    source: "pubmed",
    identifier: pmid,
    identifierType: "pmid",
    label: `PMID:${pmid}`,
    url: pubmedUrl(pmid),
    title: scriptedText(article.ArticleTitle) ?? scriptedText(article.VernacularTitle),
    abstract: abstractOf(child(article, "Abstract")),
    authors: authors.map((author) => author.display),
    year: yearOf(pubDate) ?? yearOf(asNode(asArray(article.ArticleDate)[0])),
    crossReferences: crossReferences(doi, ids.pmc),
    // Peer review does not vouch for a retracted, withdrawn or questioned article (an erratum leaves it so).
    peerReviewStatus:
      integrity && integrity.status !== "corrected" ? "unknown" : peerReviewOf(publicationTypes),
    warnings,
    structuredData: compact({
      integrity,
      languages,
      languageNames: languages.map(languageName),
      originalTitle,
      journal: xmlText(journal.Title),
      journalAbbreviation: xmlText(journal.ISOAbbreviation),
      volume: xmlText(issue.Volume),
      issue: xmlText(issue.Issue),
      pages: xmlText(child(article, "Pagination").MedlinePgn),
      authorDetails: authors.map((author) => author.detail),
      // The issue (print) date as the journal dates it; the online date is labelled beside it.
      publicationDate: dateText(pubDate),
      electronicPublicationDate: electronicPublicationDate(article, child(node, "PubmedData")),
      publicationModel: xmlAttr(article, "PubModel"),
      publicationTypes,
      trialRegistrations,
      dataBankAccessions,
      commentsCorrections: links,
      meshMajorTopics,
      meshHeadings,
      keywords: asArray(citation.KeywordList).flatMap((list) =>
        asArray(asNode(list).Keyword).flatMap(textList),
      ),
    }),
  });
}

function bookArticle(node: XmlNode): McpRecord | undefined {
  const document = child(node, "BookDocument");
  const pmid = xmlText(document.PMID);
  if (!pmid) return undefined;
  const book = child(document, "Book");
  const ids = articleIds(child(child(node, "PubmedBookData"), "ArticleIdList"));
  return buildRecord({
    source: "pubmed",
    identifier: pmid,
    identifierType: "pmid",
    label: `PMID:${pmid}`,
    url: pubmedUrl(pmid),
    title: scriptedText(document.ArticleTitle) ?? scriptedText(book.BookTitle),
    abstract: abstractOf(child(document, "Abstract")),
    authors: pubmedAuthors(asArray(document.AuthorList)[0]).map((author) => author.display),
    year: yearOf(child(book, "PubDate")),
    crossReferences: crossReferences(ids.doi, ids.pmc),
    peerReviewStatus: "unknown",
    structuredData: compact({ bookTitle: scriptedText(book.BookTitle), publicationTypes: ["Book chapter"] }),
  });
}

/**
 * What a reader must know about an article's language: NLM lists the languages it is published in and, for an
 * article not in English, gives an English title in brackets and the original in `VernacularTitle`.
 */
function languageWarnings(label: string, languages: string[], originalTitle: string | undefined): string[] {
  const others = languages.filter((code) => code !== "eng");
  if (others.length === 0) return [];
  const names = languages.map(languageName).join(" and ");
  const original = originalTitle ? ` Its original title is "${originalTitle}"` : "";
  if (languages.includes("eng")) return [`${label} is published in ${names}.${original}`];
  return [
    `${label} is written in ${names}, not English: its title here is NLM's English translation and its text ` +
      `is in ${names}.${original}`,
  ];
}

const LANGUAGE_NAMES = new Intl.DisplayNames(["en"], { type: "language" });

/** `ger` → `German` (MEDLINE's ISO 639-2 codes); an unknown code is kept as written. */
function languageName(code: string): string {
  try {
    const name = LANGUAGE_NAMES.of(code);
    return name && name !== code ? name : code;
  } catch {
    return code;
  }
}

function abstractOf(abstract: XmlNode): string | undefined {
  const parts = asArray(abstract.AbstractText).flatMap((part) => {
    const text = scriptedText(part);
    if (!text) return [];
    const label = xmlAttr(part, "Label");
    return [label ? `${label}: ${text}` : text];
  });
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

function articleIds(list: XmlNode): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const id of asArray(list.ArticleId)) {
    const type = xmlAttr(id, "IdType");
    const value = xmlText(id);
    if (type && value && ids[type] === undefined) ids[type] = value;
  }
  return ids;
}

function crossReferences(doi: string | undefined, pmcid: string | undefined): CrossReference[] {
  const references: CrossReference[] = [];
  if (doi) references.push(doiReference(doi));
  if (pmcid && /^PMC\d+$/.test(pmcid))
    references.push({ identifier: pmcid, identifierType: "pmcid", url: pmcUrl(pmcid) });
  return references;
}

function yearOf(date: XmlNode): number | undefined {
  const year = xmlText(date.Year) ?? xmlText(date.MedlineDate)?.slice(0, 4);
  const value = Number(year);
  return year && Number.isInteger(value) ? value : undefined;
}

function dateText(date: XmlNode): string | undefined {
  const medline = xmlText(date.MedlineDate);
  if (medline) return medline;
  return [xmlText(date.Year), xmlText(date.Month), xmlText(date.Day)].filter(Boolean).join(" ") || undefined;
}

function peerReviewOf(types: string[]): McpRecord["peerReviewStatus"] {
  if (types.includes("Preprint")) return "preprint";
  if (types.some((type) => NOT_PEER_REVIEWED.has(type))) return "unknown";
  return types.includes("Journal Article") ? "peer-reviewed" : "unknown";
}

function textList(node: unknown): string[] {
  const text = xmlText(node);
  return text ? [text] : [];
}

function compact(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(data).filter(
      ([, value]) => value !== undefined && !(Array.isArray(value) && value.length === 0),
    ),
  );
}
