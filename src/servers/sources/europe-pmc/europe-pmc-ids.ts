/** Europe PMC identifiers and pages: article URLs by source and id, and PMCIDs in their Europe PMC URL forms. */
import { urlHostPath } from "../identifiers.js";
import { normalizePmcid } from "../pubmed/pubmed-ids.js";

/** The Europe PMC REST API, the default base URL of every endpoint that searches it. */
export const EUROPE_PMC_REST_BASE_URL = "https://www.ebi.ac.uk/europepmc/webservices/rest";

/** Europe PMC record sources with a well-known identifier scheme (the rest keep `<SOURCE>:<id>`). */
const SOURCE_LABELS: Readonly<Record<string, { type: string; label: (id: string) => string }>> = {
  MED: { type: "pmid", label: (id) => `PMID:${id}` },
  PMC: { type: "pmcid", label: (id) => id },
  PPR: { type: "ppr", label: (id) => `Europe PMC ${id}` },
};

/**
 * The canonical HTTPS page of a Europe PMC record.
 * @param source the Europe PMC source code (`MED`, `PMC`, `PPR`, `AGR`, ...)
 * @param id the record id within that source (`20516115`, `PMC3040717`, `PPR1302423`)
 * @returns `https://europepmc.org/article/<SOURCE>/<id>`
 */
export function europePmcArticleUrl(source: string, id: string): string {
  return `https://europepmc.org/article/${encodeURIComponent(source)}/${encodeURIComponent(id)}`;
}

/**
 * How a Europe PMC record is identified and labelled in citations.
 * @param source the Europe PMC source code
 * @param id the record id within that source
 * @returns the stable identifier, its type and the citation label text
 */
export function europePmcIdentity(
  source: string,
  id: string,
): { identifier: string; identifierType: string; label: string } {
  const known = SOURCE_LABELS[source];
  if (known) return { identifier: id, identifierType: known.type, label: known.label(id) };
  // Agricola, patents, theses...: the id is only unique together with its source.
  const identifier = `${source}:${id}`;
  return { identifier, identifierType: "europepmc", label: `Europe PMC ${identifier}` };
}

/**
 * Normalizes a PMCID from `PMC123`, `PMCID:PMC123`, a version suffix, a Europe PMC URL
 * (`europepmc.org/article/PMC/PMC123`, `europepmc.org/articles/PMC123`, `.../abstract/PMC/PMC123`), or an
 * NCBI PMC URL.
 * @param value user input
 * @returns the PMCID (`PMC123`), or undefined when it is not one
 */
export function normalizeEuropePmcPmcid(value: string): string | undefined {
  const hostPath = urlHostPath(value);
  if (hostPath?.startsWith("europepmc.org/")) {
    const match = /^europepmc\.org\/(?:(?:article|abstract)\/PMC\/|articles\/)(PMC[\d.]+)\/?$/i.exec(
      hostPath,
    );
    return match?.[1] ? normalizePmcid(match[1]) : undefined;
  }
  return normalizePmcid(value);
}
