/** PubMed and PubMed Central identifiers: PMIDs and PMCIDs in their bare, prefixed and URL forms. */
import { urlHostPath } from "../identifiers.js";

const PMID = /^[1-9]\d{0,8}$/;
const PMCID = /^PMC([1-9]\d{0,9})(?:\.\d+)?$/i;

/**
 * Normalizes a PMID from `123`, `PMID:123`, `PMID 123`, or a PubMed URL
 * (`https://pubmed.ncbi.nlm.nih.gov/123/`, `www.ncbi.nlm.nih.gov/pubmed/123`).
 * @param value user input
 * @returns the bare PMID (`123`), or undefined when it is not one
 */
export function normalizePmid(value: string): string | undefined {
  let text = value.trim();
  const hostPath = urlHostPath(text);
  if (hostPath) {
    const match = /^(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov\/pubmed)\/(\d+)\/?$/.exec(hostPath);
    if (!match?.[1]) return undefined;
    text = match[1];
  }
  text = text.replace(/^pmid\s*:?\s*/i, "");
  return PMID.test(text) ? text : undefined;
}

/**
 * Normalizes a PMCID from `PMC123`, `pmc123`, `PMCID:PMC123`, a version suffix (`PMC123.1`), or a PMC URL
 * (`https://pmc.ncbi.nlm.nih.gov/articles/PMC123/`, `www.ncbi.nlm.nih.gov/pmc/articles/PMC123/`).
 * @param value user input
 * @returns the PMCID in canonical case (`PMC123`), or undefined when it is not one
 */
export function normalizePmcid(value: string): string | undefined {
  let text = value.trim();
  const hostPath = urlHostPath(text);
  if (hostPath) {
    const match = /^(?:pmc\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov\/pmc)\/articles\/(PMC[\d.]+)\/?$/i.exec(
      hostPath,
    );
    if (!match?.[1]) return undefined;
    text = match[1];
  }
  text = text.replace(/^pmcid\s*:?\s*/i, "");
  const match = PMCID.exec(text);
  return match ? `PMC${match[1]}` : undefined;
}

/**
 * The canonical HTTPS page of a PubMed record.
 * @param pmid a normalized PMID
 * @returns `https://pubmed.ncbi.nlm.nih.gov/<pmid>/`
 */
export function pubmedUrl(pmid: string): string {
  return `https://pubmed.ncbi.nlm.nih.gov/${pmid}/`;
}

/**
 * The canonical HTTPS page of a PubMed Central article.
 * @param pmcid a normalized PMCID
 * @returns `https://pmc.ncbi.nlm.nih.gov/articles/<pmcid>/`
 */
export function pmcUrl(pmcid: string): string {
  return `https://pmc.ncbi.nlm.nih.gov/articles/${pmcid}/`;
}
