/**
 * Parses the HTML directory listings (Apache autoindex) that the GEO FTP site serves over HTTPS, e.g.
 * `https://ftp.ncbi.nlm.nih.gov/geo/series/GSE236nnn/GSE236084/suppl/`. No HTML library is used: the
 * listing is one `<a href="name">name</a>  date  size` line per file, and only that line shape is read.
 */
import { ProviderError } from "../provider-error.js";
import type { ProviderAnswer } from "../source-module.js";

/** One file of a listing. */
export interface FtpListingEntry {
  /** The file name, percent- and entity-decoded. */
  name: string;
  /** `YYYY-MM-DD HH:MM`, as the listing shows it. */
  modified?: string;
  /** The size as the listing shows it (`30M`, `3.1K`, `512`). */
  size?: string;
  /** The size in bytes, only when the listing shows it exactly (a plain number). */
  sizeBytes?: number;
}

const ANCHOR = /<a\s[^>]*?href\s*=\s*(["'])([^"']*)\1[^>]*>[\s\S]*?<\/a>([^<\n]*)/gi;
const TAIL = /(\d{4}-\d{2}-\d{2} \d{2}:\d{2})\s+(\d+(?:\.\d+)?[KMGTP]?|-)/;
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", "#39": "'" };

/**
 * Parses one directory listing.
 * @param answer the HTML body, host and status
 * @returns the files of the folder (sort links, the parent link, sub-folders and off-site links left out)
 * @throws ProviderError `upstream_unavailable` when the body is not a directory listing
 */
export function parseFtpListing(answer: ProviderAnswer): FtpListingEntry[] {
  if (!/<title>\s*Index of \//i.test(answer.text)) {
    throw new ProviderError(
      "upstream_unavailable",
      `${answer.host} sent something other than a folder listing.`,
      {
        status: answer.status,
      },
    );
  }
  const entries: FtpListingEntry[] = [];
  const seen = new Set<string>();
  for (const match of answer.text.matchAll(ANCHOR)) {
    const name = fileName(match[2] ?? "");
    if (name === undefined || seen.has(name)) continue;
    seen.add(name);
    const entry: FtpListingEntry = { name };
    const tail = TAIL.exec(match[3] ?? "");
    if (tail?.[1]) entry.modified = tail[1];
    if (tail?.[2] && tail[2] !== "-") {
      entry.size = tail[2];
      if (/^\d+$/.test(tail[2])) entry.sizeBytes = Number(tail[2]);
    }
    entries.push(entry);
  }
  return entries;
}

/**
 * The file name an `href` of a listing names, if it names a file of this folder.
 * @param href the raw attribute value
 * @returns the decoded name, or undefined for navigation, sub-folders, other sites and unsafe names
 */
function fileName(href: string): string | undefined {
  // Sort links (?C=N), absolute paths (the parent link), fragments, other schemes and sub-folders.
  if (!href || /^[?#/]/.test(href) || /^[a-z][a-z0-9+.-]*:/i.test(href) || href.endsWith("/"))
    return undefined;
  let name: string;
  try {
    name = decodeURIComponent(href.replace(/&(#39|[a-z]+);/gi, (e, body: string) => ENTITIES[body] ?? e));
  } catch {
    return undefined;
  }
  // A name is a single path segment: no separators, no traversal, no control characters.
  if (/[/\\\p{Cc}]/u.test(name) || name === "." || name === ".." || name.startsWith("-")) return undefined;
  return name;
}

/**
 * The download format of a file name: its extension, with the compression suffix kept (`txt.gz`).
 * @param name a file name
 * @returns e.g. `tar`, `csv.gz`, `soft.gz`, `h5`; `file` when the name has no extension
 */
export function fileFormat(name: string): string {
  const parts = name.toLowerCase().split(".");
  if (parts.length < 2) return "file";
  const last = parts.at(-1) ?? "";
  const compressed = ["gz", "bz2", "xz", "zip", "zst"].includes(last);
  return compressed && parts.length > 2 ? `${parts.at(-2)}.${last}` : last;
}
