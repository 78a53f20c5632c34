/**
 * The two preprint servers of Cold Spring Harbor Laboratory, bioRxiv and medRxiv: one API
 * (api.biorxiv.org, with the server as a path segment), one DOI scheme, two websites. Everything that
 * differs between the `biorxiv` and `medrxiv` sources is here.
 */

/** One preprint server. */
export interface PreprintServer {
  /** The source id, also the server segment of api.biorxiv.org paths (`biorxiv`). */
  id: "biorxiv" | "medrxiv";
  /** The server's own spelling, as Europe PMC's PUBLISHER field and the API's `server` field give it. */
  name: "bioRxiv" | "medRxiv";
  /** The website that serves abstract pages and PDFs. */
  host: "www.biorxiv.org" | "www.medrxiv.org";
  /** The other server's source id, for hints when a DOI belongs to it. */
  sibling: "biorxiv" | "medrxiv";
  /** What the server holds, for tool descriptions. */
  subject: string;
  /** Example DOIs for input descriptions: one with the legacy prefix, one with the current one. */
  exampleDois: readonly [string, string];
}

/** bioRxiv, the preprint server for biology. */
export const BIORXIV: PreprintServer = {
  id: "biorxiv",
  name: "bioRxiv",
  host: "www.biorxiv.org",
  sibling: "medrxiv",
  subject: "biology",
  exampleDois: ["10.1101/2024.01.15.575001", "10.64898/2026.07.31.741992"],
};

/** medRxiv, the preprint server for health sciences. */
export const MEDRXIV: PreprintServer = {
  id: "medrxiv",
  name: "medRxiv",
  host: "www.medrxiv.org",
  sibling: "biorxiv",
  subject: "medicine and health sciences",
  exampleDois: ["10.1101/2020.09.09.20191205", "10.64898/2026.09.03.26361736"],
};

/** The bioRxiv/medRxiv API. */
export const PREPRINT_API_BASE_URL = "https://api.biorxiv.org";

/** Readable names of the API's licence codes (bioRxiv and medRxiv use the 4.0 Creative Commons licences). */
const LICENSES: Readonly<Record<string, string>> = {
  cc_by: "CC-BY-4.0",
  cc_by_nc: "CC-BY-NC-4.0",
  cc_by_nd: "CC-BY-ND-4.0",
  cc_by_nc_nd: "CC-BY-NC-ND-4.0",
  cc0: "CC0-1.0",
  cc_no: "All rights reserved (no reuse without permission)",
};

/**
 * Readable names of the API's article types (`type`), keyed by the lower-cased code. bioRxiv files each
 * preprint under one of three result types; medRxiv sends the publishing-workflow state
 * `PUBLISHAHEADOFPRINT` for its posted preprints, which says nothing about the results.
 */
const ARTICLE_TYPES: Readonly<Record<string, string>> = {
  "new results": "new results",
  "confirmatory results": "confirmatory results (largely replicates published work and agrees with it)",
  "contradictory results": "contradictory results (largely replicates published work and contradicts it)",
  publishaheadofprint: "posted preprint (medRxiv gives no results type)",
};

/**
 * The readable article type of a preprint, from the API's `type` field.
 * @param code the `type` field (`new results`, `PUBLISHAHEADOFPRINT`)
 * @returns the readable type; an unknown code labelled as such; undefined when absent
 */
export function preprintArticleType(code: string | undefined): string | undefined {
  if (!code) return undefined;
  return ARTICLE_TYPES[code.toLowerCase()] ?? `unrecognized article type "${code}" (as the API sent it)`;
}

/**
 * The licence of a preprint, from the API's licence code.
 * @param code the `license` field (`cc_by_nc_nd`)
 * @returns an SPDX id or a readable statement; the code itself when unknown; undefined when absent
 */
export function preprintLicense(code: string | undefined): string | undefined {
  if (!code) return undefined;
  return LICENSES[code.toLowerCase()] ?? code;
}

/**
 * The canonical HTTPS page of a preprint.
 * @param server the preprint server
 * @param doi the preprint DOI (`10.1101/2024.01.15.575001`)
 * @param version the version, for a page of exactly that version
 * @returns `https://www.biorxiv.org/content/<doi>[v<version>]`
 */
export function preprintPageUrl(server: PreprintServer, doi: string, version?: number): string {
  return `https://${server.host}/content/${doi}${version === undefined ? "" : `v${version}`}`;
}

/**
 * The HTTPS full-text PDF of one preprint version.
 * @param server the preprint server
 * @param doi the preprint DOI
 * @param version the version
 * @returns `https://www.biorxiv.org/content/<doi>v<version>.full.pdf`
 */
export function preprintPdfUrl(server: PreprintServer, doi: string, version: number): string {
  return `${preprintPageUrl(server, doi, version)}.full.pdf`;
}
