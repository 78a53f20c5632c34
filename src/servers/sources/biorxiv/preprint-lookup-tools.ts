/** `<server>_lookup_doi` and `<server>_prepare_paper_download`: one preprint by DOI, from api.biorxiv.org. */
import { z } from "zod";
import type { ArtifactCandidate } from "../../../contract/index.js";
import { invalidId } from "../identifiers.js";
import { ProviderError } from "../provider-error.js";
import type { SourceHttp } from "../source-module.js";
import { type AnySourceTool, defineTool } from "../source-module.js";
import { type PreprintVersion, parsePreprintDetails } from "./preprint-details-parser.js";
import { normalizePreprintDoi, type PreprintDoi } from "./preprint-dois.js";
import { type PreprintPublication, parsePreprintPublications } from "./preprint-pubs-parser.js";
import { preprintVersionRecord } from "./preprint-record.js";
import { type PreprintServer, preprintLicense, preprintPdfUrl } from "./preprint-server.js";

const ID_FORMS = "a bioRxiv/medRxiv DOI (10.1101/… or 10.64898/…, optionally with v2, doi: prefix or URL)";

/** A preprint version and the versions the server lists for its DOI. */
interface FetchedPreprint {
  chosen: PreprintVersion;
  /** Version numbers, ascending. */
  versions: number[];
}

/**
 * Fetches the versions of one preprint and picks the requested (or latest) one.
 * @throws ProviderError `not_found` (no such preprint on this server, or no such version), `rate_limited`,
 *   `upstream_unavailable`
 */
async function fetchPreprint(
  server: PreprintServer,
  http: SourceHttp,
  wanted: PreprintDoi,
): Promise<FetchedPreprint> {
  const response = await http.request("api", `/details/${server.id}/${wanted.doi}/na/json`, {
    accept: "application/json",
  });
  const details = parsePreprintDetails(response);
  const own = details.versions.filter(
    (v) => v.doi === wanted.doi && (v.server === undefined || v.server.toLowerCase() === server.id),
  );
  if (own.length === 0) {
    throw new ProviderError(
      "not_found",
      `${server.name} has no preprint doi:${wanted.doi}; if it is a ${server.sibling} preprint, use ` +
        `${server.sibling}_lookup_doi.`,
    );
  }
  const versions = [...new Set(own.map((v) => v.version))].sort((a, b) => a - b);
  const number = wanted.version ?? versions.at(-1);
  // The API lists each version once; the last entry of a version wins if it ever repeats one.
  const chosen = own.findLast((v) => v.version === number);
  if (!chosen) {
    throw new ProviderError(
      "not_found",
      `${server.name} has no version v${wanted.version} of doi:${wanted.doi} (versions: ${versions.join(", ")}).`,
    );
  }
  return { chosen, versions };
}

/**
 * The journal and date of a preprint's published version, from the `pubs` endpoint: one request, only for
 * a preprint whose `details` name a published DOI. A failure costs the journal and date, not the preprint.
 * @returns the publication when `pubs` names the same journal DOI, and warnings about what is missing
 */
async function fetchPublication(
  server: PreprintServer,
  http: SourceHttp,
  chosen: PreprintVersion,
): Promise<{ publication: PreprintPublication | undefined; warnings: string[] }> {
  const publishedDoi = chosen.publishedDoi;
  if (!publishedDoi) return { publication: undefined, warnings: [] };
  let publications: PreprintPublication[];
  try {
    const response = await http.request("api", `/pubs/${server.id}/${chosen.doi}/na/json`, {
      accept: "application/json",
    });
    publications = parsePreprintPublications(response);
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    const reason = error.status === undefined ? error.code : `HTTP ${error.status}`;
    return {
      publication: undefined,
      warnings: [
        `The journal and date of the published version could not be fetched from the ${server.name} API's ` +
          `/pubs endpoint (${reason}); the preprint record itself is complete.`,
      ],
    };
  }
  const own = publications.filter((p) => p.preprintDoi === chosen.doi);
  const publication = own.find((p) => p.publishedDoi.toLowerCase() === publishedDoi.toLowerCase());
  if (publication || own.length === 0) return { publication, warnings: [] };
  const named = own.map((p) => `doi:${p.publishedDoi}`).join(", ");
  return {
    publication: undefined,
    warnings: [
      `${server.name}'s /pubs endpoint names ${named} as the published version, its details doi:` +
        `${publishedDoi}; check which one is the journal version before citing.`,
    ],
  };
}

/**
 * Creates the `lookup_doi` tool of one server.
 * @param server the preprint server
 * @returns the tool
 */
export function createPreprintLookupTool(server: PreprintServer): AnySourceTool {
  return defineTool({
    id: "lookup_doi",
    title: `Look up a ${server.name} preprint`,
    description:
      `Fetch a ${server.name} preprint by DOI (10.1101/… or 10.64898/…, with or without version, doi: prefix, ` +
      `doi.org or ${server.host} URL): title, authors, abstract, posting date, category, licence, versions and ` +
      "the published journal version (DOI, journal, date). The latest version unless a version (v2) is given.",
    inputShape: { doi: doiInput(server) },
    async run(input, { http }) {
      const wanted = normalizePreprintDoi(input.doi) ?? invalidId(input.doi, ID_FORMS);
      const { chosen, versions } = await fetchPreprint(server, http, wanted);
      const { publication, warnings } = await fetchPublication(server, http, chosen);
      const record = preprintVersionRecord(server, chosen, versions, publication);
      record.warnings.push(...warnings);
      return {
        records: [record],
        warnings: olderVersionWarning(chosen.version, versions),
        data: { doi: chosen.doi, version: chosen.version, latestVersion: versions.at(-1), versions },
      };
    },
  });
}

/**
 * Creates the `prepare_paper_download` tool of one server.
 * @param server the preprint server
 * @returns the tool
 */
export function createPreprintDownloadTool(server: PreprintServer): AnySourceTool {
  return defineTool({
    id: "prepare_paper_download",
    title: `Plan a ${server.name} preprint download`,
    description:
      `Plan the download of a ${server.name} preprint's full text: confirms the preprint and returns download ` +
      "candidates (the PDF of the exact version, and its JATS XML when listed) with the authors' licence, for " +
      "artifact_download. Downloads nothing.",
    inputShape: { id: doiInput(server) },
    async run(input, { http }) {
      const wanted = normalizePreprintDoi(input.id) ?? invalidId(input.id, ID_FORMS);
      const { chosen, versions } = await fetchPreprint(server, http, wanted);
      const license = preprintLicense(chosen.license);
      const versioned = `${chosen.doi.slice(chosen.doi.indexOf("/") + 1)}v${chosen.version}`;
      const candidate = (format: "pdf" | "xml", url: string, filename: string): ArtifactCandidate => ({
        candidateId: `${server.id}:${chosen.doi}v${chosen.version}:${format}`,
        sourceId: server.id,
        sourceRecordId: chosen.doi,
        url,
        format,
        kind: "paper",
        filename,
        ...(license ? { license } : {}),
      });
      const artifacts = [
        candidate("pdf", preprintPdfUrl(server, chosen.doi, chosen.version), `${versioned}.full.pdf`),
      ];
      const xml = jatsXmlUrl(server, chosen.jatsXml);
      if (xml) artifacts.push(candidate("xml", xml, `${versioned}.source.xml`));
      const warnings = olderVersionWarning(chosen.version, versions);
      if (!license) warnings.push(`${server.name} states no licence for this preprint; check before reuse.`);
      else if (chosen.license === "cc_no") {
        warnings.push(
          "The authors reserve all rights: read it, but do not redistribute or reuse it without permission.",
        );
      }
      return {
        records: [preprintVersionRecord(server, chosen, versions)],
        artifacts,
        warnings,
        data: {
          doi: chosen.doi,
          version: chosen.version,
          latestVersion: versions.at(-1),
          license: license ?? null,
        },
      };
    },
  });
}

function olderVersionWarning(version: number, versions: readonly number[]): string[] {
  const latest = versions.at(-1) ?? version;
  return version < latest ? [`Version v${version} was asked for; the latest version is v${latest}.`] : [];
}

function doiInput(server: PreprintServer) {
  return z
    .string()
    .trim()
    .min(1)
    .describe(
      `A ${server.name} DOI: ${server.exampleDois.join(", ")}, with optional version (v2), ` +
        `doi: prefix, or a doi.org or ${server.host} URL.`,
    );
}

// Only an HTTPS link on the server's own website becomes a candidate (the manifest allows no other host).
function jatsXmlUrl(server: PreprintServer, href: string | undefined): string | undefined {
  if (!href) return undefined;
  try {
    const url = new URL(href);
    return url.protocol === "https:" && url.hostname === server.host ? url.href : undefined;
  } catch {
    return undefined;
  }
}
