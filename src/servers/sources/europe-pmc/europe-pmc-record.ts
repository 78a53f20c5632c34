/** Normalized records of Europe PMC search hits. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { normalizeDoi } from "../identifiers.js";
import { buildRecord, doiReference } from "../record-builder.js";
import { integrityWarning } from "../record-integrity.js";
import { europePmcArticleUrl, europePmcIdentity } from "./europe-pmc-ids.js";
import { europePmcIntegrity } from "./europe-pmc-integrity.js";
import type { EuropePmcHit } from "./europe-pmc-search-parser.js";

/** Publication types that are not peer-reviewed research even in indexed journals (lower case). */
const NOT_PEER_REVIEWED = new Set([
  "comment",
  "editorial",
  "letter",
  "news",
  "published erratum",
  "abstract",
]);
const RESEARCH_TYPES = new Set(["journal article", "research-article", "review-article", "review"]);

/**
 * The record of one Europe PMC hit: identified by PMID for MEDLINE records, by PMCID for PMC-only ones, by
 * the Europe PMC id otherwise; cited with its europepmc.org page.
 * @param hit a parsed search hit
 * @returns the record (`abstract` scope only when the hit carries an abstract)
 */
export function europePmcRecord(hit: EuropePmcHit): McpRecord {
  const identity = europePmcIdentity(hit.source, hit.id);
  const url = europePmcArticleUrl(hit.source, hit.id);
  const integrity = europePmcIntegrity(hit);
  return buildRecord({
    source: "europe-pmc",
    ...identity,
    url,
    title: hit.title,
    abstract: hit.abstract,
    authors: hit.authors,
    year: hit.year,
    crossReferences: europePmcCrossReferences(hit),
    // Peer review does not vouch for a retracted, withdrawn or questioned article (an erratum leaves it so).
    peerReviewStatus: integrity && integrity.status !== "corrected" ? "unknown" : peerReviewOf(hit),
    warnings: integrity ? [integrityWarning(integrity, identity.label)] : [],
    structuredData: compact({
      integrity,
      europePmcSource: hit.source,
      europePmcId: hit.id,
      pmid: hit.pmid,
      pmcid: hit.pmcid,
      doi: hit.doi,
      journal: hit.journal,
      volume: hit.volume,
      issue: hit.issue,
      pages: hit.pages,
      authorDetails: hit.authorDetails,
      firstPublicationDate: hit.firstPublicationDate,
      electronicPublicationDate: hit.electronicPublicationDate,
      printPublicationDate: hit.printPublicationDate,
      publicationTypes: hit.publicationTypes,
      keywords: hit.keywords,
      preprintServer: hit.preprintServer,
      isOpenAccess: hit.isOpenAccess,
      inEuropePmc: hit.inEPMC,
      inPmc: hit.inPMC,
      hasPdf: hit.hasPDF,
      citedByCount: hit.citedByCount,
      license: hit.license,
    }),
  });
}

// The identifiers of a hit other than its own: DOI (doi.org), PMID and PMCID (their Europe PMC pages).
function europePmcCrossReferences(hit: EuropePmcHit): CrossReference[] {
  const references: CrossReference[] = [];
  const doi = hit.doi ? normalizeDoi(hit.doi) : undefined;
  if (doi) references.push(doiReference(doi));
  if (hit.pmid && !(hit.source === "MED" && hit.id === hit.pmid)) {
    references.push({
      identifier: hit.pmid,
      identifierType: "pmid",
      url: europePmcArticleUrl("MED", hit.pmid),
    });
  }
  if (hit.pmcid && !(hit.source === "PMC" && hit.id === hit.pmcid)) {
    references.push({
      identifier: hit.pmcid,
      identifierType: "pmcid",
      url: europePmcArticleUrl("PMC", hit.pmcid),
    });
  }
  return references;
}

function peerReviewOf(hit: EuropePmcHit): McpRecord["peerReviewStatus"] {
  const types = hit.publicationTypes.map((type) => type.toLowerCase());
  if (hit.source === "PPR" || types.includes("preprint")) return "preprint";
  if (types.some((type) => NOT_PEER_REVIEWED.has(type))) return "unknown";
  return types.some((type) => RESEARCH_TYPES.has(type)) ? "peer-reviewed" : "unknown";
}

function compact(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(data).filter(
      ([, value]) => value !== undefined && !(Array.isArray(value) && value.length === 0),
    ),
  );
}
