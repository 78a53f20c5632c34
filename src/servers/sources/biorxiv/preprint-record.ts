/**
 * Normalized records of bioRxiv/medRxiv preprints, identified by their DOI and cited with their page on the
 * server's website (the version that was read, when known).
 */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { europePmcArticleUrl } from "../europe-pmc/europe-pmc-ids.js";
import type { EuropePmcHit } from "../europe-pmc/europe-pmc-search-parser.js";
import { normalizeDoi } from "../identifiers.js";
import { buildRecord, doiReference } from "../record-builder.js";
import type { PreprintVersion } from "./preprint-details-parser.js";
import { normalizePreprintDoi } from "./preprint-dois.js";
import type { PreprintPublication } from "./preprint-pubs-parser.js";
import {
  type PreprintServer,
  preprintArticleType,
  preprintLicense,
  preprintPageUrl,
} from "./preprint-server.js";

/**
 * The record of one preprint version from the API's `details` answer.
 * @param server the preprint server
 * @param version the version that was read
 * @param versions every version number the server lists for the DOI
 * @param publication the journal version from the `pubs` endpoint, when it was fetched and names the same
 *   journal DOI as `version.publishedDoi`
 * @returns the record, cited as `[bioRxiv:<doi>v<n>](https://www.biorxiv.org/content/<doi>v<n>)`
 */
export function preprintVersionRecord(
  server: PreprintServer,
  version: PreprintVersion,
  versions: readonly number[],
  publication?: PreprintPublication,
): McpRecord {
  const { doi } = version;
  const publishedDoi = version.publishedDoi ? normalizeDoi(version.publishedDoi) : undefined;
  const crossReferences: CrossReference[] = [doiReference(doi)];
  const warnings: string[] = [];
  if (publishedDoi) {
    crossReferences.push({ ...doiReference(publishedDoi), identifierType: "published-doi" });
    const journal = publication?.journal ? ` in ${publication.journal}` : "";
    const date = publication?.publishedDate ? ` on ${publication.publishedDate}` : "";
    warnings.push(
      `A journal version of this preprint was published as doi:${publishedDoi}${journal}${date}; prefer ` +
        "citing the published version.",
    );
  }
  return buildRecord({
    source: server.id,
    identifier: doi,
    identifierType: "doi",
    label: `${server.name}:${doi}v${version.version}`,
    url: preprintPageUrl(server, doi),
    citationUrl: preprintPageUrl(server, doi, version.version),
    citationVersion: `v${version.version}`,
    title: version.title,
    abstract: version.abstract,
    authors: version.authors,
    year: yearOf(version.date),
    crossReferences,
    peerReviewStatus: "preprint",
    warnings,
    structuredData: compact({
      server: version.server ?? server.name,
      version: version.version,
      versions: [...versions],
      postedDate: version.date,
      category: version.category,
      articleType: preprintArticleType(version.type),
      articleTypeCode: version.type,
      license: preprintLicense(version.license),
      licenseCode: version.license,
      correspondingAuthor: version.correspondingAuthor,
      correspondingInstitution: version.correspondingInstitution,
      publishedDoi,
      publishedJournal: publishedDoi ? publication?.journal : undefined,
      publishedDate: publishedDoi ? publication?.publishedDate : undefined,
    }),
  });
}

/**
 * The record of a preprint found through Europe PMC's preprint index.
 * @param server the preprint server the search was for
 * @param hit a Europe PMC `PPR` hit
 * @returns the record, or undefined when the hit is not a preprint of this server with a bioRxiv/medRxiv DOI
 */
export function europePmcPreprintRecord(server: PreprintServer, hit: EuropePmcHit): McpRecord | undefined {
  const parsed = hit.doi ? normalizePreprintDoi(hit.doi) : undefined;
  if (!parsed || hit.preprintServer?.toLowerCase() !== server.name.toLowerCase()) return undefined;
  const { doi } = parsed;
  return buildRecord({
    source: server.id,
    identifier: doi,
    identifierType: "doi",
    label: `${server.name}:${doi}`,
    url: preprintPageUrl(server, doi),
    title: hit.title,
    abstract: hit.abstract,
    authors: hit.authors,
    year: hit.year,
    crossReferences: [
      doiReference(doi),
      { identifier: hit.id, identifierType: "ppr", url: europePmcArticleUrl(hit.source, hit.id) },
    ],
    peerReviewStatus: "preprint",
    structuredData: compact({
      server: server.name,
      europePmcId: hit.id,
      postedDate: hit.firstPublicationDate,
      citedByCount: hit.citedByCount,
      license: hit.license,
    }),
  });
}

function yearOf(date: string | undefined): number | undefined {
  const year = Number(date?.slice(0, 4));
  return Number.isInteger(year) && year > 0 ? year : undefined;
}

function compact(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined));
}
