/** arXiv identifiers: new style (`1605.08386`), old style (`astro-ph/0601001`, `math.GT/0309136`), versions. */
import { urlHostPath } from "../identifiers.js";

/** A normalized arXiv identifier. */
export interface ArxivId {
  /** The identifier without version (`1605.08386`, `astro-ph/0601001`; old style without subject class). */
  id: string;
  /** The version asked for (2 for `v2`), when one was. */
  version?: number;
}

const ARXIV_HOSTS = new Set(["arxiv.org", "export.arxiv.org"]);
const NEW_STYLE = /^(\d{2})(0[1-9]|1[0-2])\.(\d{4,5})(?:v(\d+))?$/;
const OLD_STYLE = /^([a-z]+(?:-[a-z]+)*)(\.[a-z]{2})?\/(\d{2}(?:0[1-9]|1[0-2])\d{3})(?:v(\d+))?$/i;

/**
 * Normalizes an arXiv identifier from a bare id, `arXiv:` prefix, version suffix, an arxiv.org
 * `abs`/`pdf`/`html` URL, or its DataCite DOI (`10.48550/arXiv.1605.08386`, also as a doi.org URL).
 * @param value user input
 * @returns the id and requested version, or undefined when it is not an arXiv id
 */
export function normalizeArxivId(value: string): ArxivId | undefined {
  let text = value.trim();
  const hostPath = urlHostPath(text);
  if (hostPath) {
    const slash = hostPath.indexOf("/");
    const host = hostPath.slice(0, slash);
    const path = hostPath.slice(slash + 1);
    if (ARXIV_HOSTS.has(host)) {
      const match = /^(?:abs|pdf|html)\/(.+?)(?:\.pdf)?\/?$/.exec(path);
      if (!match?.[1]) return undefined;
      text = match[1];
    } else if (host === "doi.org" || host === "dx.doi.org") {
      text = path;
    } else if (/^[a-z]+:\/\//i.test(text)) {
      return undefined;
    }
    // Otherwise a dotted old-style id such as math.GT/0309136 only looked like a host and path.
  }
  text = text.replace(/^(?:doi:\s*)?10\.48550\/arxiv\./i, "").replace(/^arxiv:\s*/i, "");
  const modern = NEW_STYLE.exec(text);
  if (modern) {
    const [, yy, mm, sequence, version] = modern;
    // Five-digit sequence numbers began in January 2015 (1501); before that they had four digits.
    if ((sequence?.length === 5) !== `${yy}${mm}` >= "1501") return undefined;
    return withVersion(`${yy}${mm}.${sequence}`, version);
  }
  const old = OLD_STYLE.exec(text);
  if (old) {
    // The canonical old-style id is archive/number: math.GT/0309136 and math/0309136 are the same paper.
    const [, archive, , number, version] = old;
    return withVersion(`${archive?.toLowerCase()}/${number}`, version);
  }
  return undefined;
}

/**
 * The canonical HTTPS abstract page.
 * @param id an arXiv id, optionally with its `vN` suffix
 * @returns `https://arxiv.org/abs/<id>`
 */
export function arxivAbsUrl(id: string): string {
  return `https://arxiv.org/abs/${id}`;
}

/**
 * The HTTPS PDF of a paper.
 * @param id an arXiv id, optionally with its `vN` suffix
 * @returns `https://arxiv.org/pdf/<id>`
 */
export function arxivPdfUrl(id: string): string {
  return `https://arxiv.org/pdf/${id}`;
}

/**
 * Splits an id as the Atom feed writes it (`http://arxiv.org/abs/1605.08386v1`) into id and version.
 * @param entryId the `<id>` of a feed entry
 * @returns the normalized id, or undefined for a non-paper entry (such as an API error entry)
 */
export function arxivIdOfEntry(entryId: string): ArxivId | undefined {
  const match = /^https?:\/\/(?:export\.)?arxiv\.org\/abs\/(.+)$/.exec(entryId.trim());
  return match?.[1] ? normalizeArxivId(match[1]) : undefined;
}

function withVersion(id: string, version: string | undefined): ArxivId | undefined {
  if (version === undefined) return { id };
  const number = Number(version);
  return number >= 1 ? { id, version: number } : undefined;
}
