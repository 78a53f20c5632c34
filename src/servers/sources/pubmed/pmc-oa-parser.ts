/** Parses answers of the PMC Open Access web service (`oa.fcgi`). */
import { ProviderError } from "../provider-error.js";
import type { ProviderAnswer } from "../source-module.js";
import { asArray, asNode, child, parseXml, xmlAttr } from "../xml-document.js";

/** Hosts a PMC OA link may point at (all in the pubmed manifest's `networkHosts`). */
const NCBI_FILE_HOSTS = new Set(["ftp.ncbi.nlm.nih.gov", "www.ncbi.nlm.nih.gov", "pmc.ncbi.nlm.nih.gov"]);

/** A file of the PMC OA subset. */
export interface PmcOaLink {
  /** `pdf` or `tgz` (the article package: JATS XML, PDF, figures, supplements). */
  format: string;
  /** HTTPS URL (the service's `ftp://` links are rewritten to NCBI's HTTPS mirror of the same path). */
  url: string;
}

/** The OA record of one article. */
export interface PmcOaRecord {
  pmcid: string;
  citation: string | undefined;
  license: string | undefined;
  retracted: boolean;
  links: PmcOaLink[];
  /** Links left out because they were not on an NCBI host or not ftp/https. */
  skippedLinks: number;
}

/**
 * Parses an `oa.fcgi?id=PMC…` answer.
 * @param answer the XML body, host and status
 * @returns the record of the requested article
 * @throws ProviderError `not_open_access` (idIsNotOpenAccess), `not_found` (idDoesNotExist or no record),
 *   `invalid_id` (idIsNotWellFormed), `upstream_unavailable` (other error codes, malformed XML)
 */
export function parsePmcOaAnswer(answer: ProviderAnswer): PmcOaRecord {
  const root = parseXml(answer, { root: "OA", arrayTags: ["record", "link"] });
  const error = root.error;
  if (error !== undefined) {
    const code = xmlAttr(error, "code");
    if (code === "idIsNotOpenAccess") {
      throw new ProviderError(
        "not_open_access",
        "The article is not in the PubMed Central Open Access subset.",
      );
    }
    if (code === "idDoesNotExist")
      throw new ProviderError("not_found", "PubMed Central has no such article.");
    if (code === "idIsNotWellFormed")
      throw new ProviderError("invalid_id", "PubMed Central rejected the PMCID.");
    throw new ProviderError(
      "upstream_unavailable",
      `The PMC OA service answered with error code '${code ?? "?"}'.`,
    );
  }
  const record = asArray(child(root, "records").record)[0];
  const pmcid = xmlAttr(record, "id");
  if (!record || !pmcid) throw new ProviderError("not_found", "The PMC OA service returned no record.");
  const links: PmcOaLink[] = [];
  let skippedLinks = 0;
  for (const link of asArray(asNode(record).link)) {
    const format = xmlAttr(link, "format");
    const url = httpsFileUrl(xmlAttr(link, "href"));
    if (format && url) links.push({ format, url });
    else skippedLinks++;
  }
  return {
    pmcid,
    citation: xmlAttr(record, "citation"),
    license: xmlAttr(record, "license"),
    retracted: xmlAttr(record, "retracted") === "yes",
    links,
    skippedLinks,
  };
}

function httpsFileUrl(href: string | undefined): string | undefined {
  if (!href) return undefined;
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return undefined;
  }
  if (!NCBI_FILE_HOSTS.has(url.hostname)) return undefined;
  // The OA service still lists ftp:// links; NCBI serves the same paths over HTTPS.
  if (url.protocol !== "ftp:" && url.protocol !== "https:") return undefined;
  return `https://${url.hostname}${url.pathname}`;
}
