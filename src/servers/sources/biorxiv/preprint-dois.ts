/**
 * bioRxiv/medRxiv DOIs: the legacy prefix `10.1101/` and, since December 2025, `10.64898/`, both shared by
 * the two servers; date-based suffixes (`2024.01.15.575001`, medRxiv `2020.09.09.20191205`), the oldest
 * six-digit bioRxiv ones (`10.1101/339747`) or the eight-digit medRxiv ones of 2019 (`10.1101/19000109`);
 * an optional version suffix (`v2`).
 */
import { urlHostPath } from "../identifiers.js";

/** A normalized preprint DOI. */
export interface PreprintDoi {
  /** The DOI without version (`10.1101/2024.01.15.575001`). */
  doi: string;
  /** The version asked for (2 for `v2`), when one was. */
  version?: number;
}

const WEBSITE_HOSTS = new Set(["biorxiv.org", "medrxiv.org", "connect.biorxiv.org", "connect.medrxiv.org"]);
const DOI_HOSTS = new Set(["doi.org", "dx.doi.org"]);
const PREPRINT_DOI = /^(10\.(?:1101|64898)\/(?:\d{4}\.\d{2}\.\d{2}\.\d{6,8}|\d{6}|\d{8}))(?:v(\d{1,3}))?$/i;
// A website path: /content/<doi>[vN][.full|.full.pdf|.abstract|.full-text|.supplementary-material]
const CONTENT_PATH =
  /^content\/(?:early\/)?(.+?)(?:\.full(?:\.pdf|-text)?|\.abstract|\.supplementary-material)?\/?$/i;

/**
 * Normalizes a bioRxiv/medRxiv DOI from `10.1101/…`, `doi:10.1101/…`, a `doi.org` URL or a
 * www.biorxiv.org / www.medrxiv.org content URL, with or without a version suffix.
 * @param value user input
 * @returns the DOI and requested version, or undefined when it is not a preprint DOI of these servers
 */
export function normalizePreprintDoi(value: string): PreprintDoi | undefined {
  let text = value.trim();
  const hostPath = urlHostPath(text);
  if (hostPath) {
    const slash = hostPath.indexOf("/");
    const host = hostPath.slice(0, slash);
    const path = hostPath.slice(slash + 1);
    if (WEBSITE_HOSTS.has(host)) {
      const match = CONTENT_PATH.exec(path);
      if (!match?.[1]) return undefined;
      text = match[1];
    } else if (DOI_HOSTS.has(host)) {
      text = path;
    } else if (/^https?:\/\//i.test(text) || !/^10\./.test(text)) {
      return undefined;
    }
    // Otherwise a bare DOI such as 10.1101/339747 only looked like a host and path.
  }
  text = text.replace(/^doi:\s*/i, "");
  const match = PREPRINT_DOI.exec(text);
  if (!match?.[1]) return undefined;
  const doi = match[1].toLowerCase();
  if (match[2] === undefined) return { doi };
  const version = Number(match[2]);
  return version >= 1 ? { doi, version } : undefined;
}
