/** Genomic regions as users write them (`7:140719327-140924928`, `chr7:140,719,327..140,924,928:-1`). */
import { ProviderError } from "../provider-error.js";

/** The largest region Ensembl's overlap endpoint serves. */
export const MAX_OVERLAP_BASES = 5_000_000;

/** A normalized region. */
export interface GenomicRegion {
  /** Sequence region without a `chr` prefix (`7`, `X`, `MT`, `KI270728.1`). */
  seqRegion: string;
  start: number;
  end: number;
  /** 1 or -1 when given. */
  strand?: 1 | -1;
}

const REGION = /^(?:chr)?([A-Za-z0-9_.]{1,40}):([\d,]+)(?:-|\.\.)([\d,]+)(?::(-?1))?$/i;

/**
 * Parses a region.
 * @param value user input such as `7:140719327-140924928`, `chrX:1,000..2,000` or `7:100-200:-1`
 * @returns the region, or undefined when the text is not a region
 */
export function parseRegion(value: string): GenomicRegion | undefined {
  const match = REGION.exec(value.trim().replace(/\s+/g, ""));
  if (!match) return undefined;
  const [, name = "", first = "", last = "", strand] = match;
  const start = Number(first.replace(/,/g, ""));
  const end = Number(last.replace(/,/g, ""));
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 1 || end < start)
    return undefined;
  // UCSC writes the mitochondrion as chrM; Ensembl calls it MT.
  const seqRegion = /^m$/i.test(name) ? "MT" : name;
  const region: GenomicRegion = { seqRegion, start, end };
  if (strand !== undefined) region.strand = strand === "-1" ? -1 : 1;
  return region;
}

/**
 * Parses a region for `overlap/region` and enforces Ensembl's size limit before any request.
 * @param value user input
 * @returns the region
 * @throws ProviderError `invalid_input` for a malformed region or one larger than 5 Mb
 */
export function overlapRegion(value: string): GenomicRegion {
  const region = parseRegion(value);
  if (!region) {
    throw new ProviderError(
      "invalid_input",
      "The region must look like 7:140719327-140924928 (sequence region, start, end; 1-based, start <= end).",
    );
  }
  const size = region.end - region.start + 1;
  if (size > MAX_OVERLAP_BASES) {
    throw new ProviderError(
      "invalid_input",
      `The region spans ${size.toLocaleString("en-US")} bases; Ensembl's overlap serves at most 5 Mb ` +
        `(${MAX_OVERLAP_BASES.toLocaleString("en-US")} bases). Split it or narrow it.`,
    );
  }
  return region;
}

/**
 * The region in Ensembl's path notation.
 * @param region a region
 * @returns `7:140719327-140924928` (with `:-1` when on the reverse strand)
 */
export function regionText(region: GenomicRegion): string {
  const strand = region.strand === undefined ? "" : `:${region.strand}`;
  return `${region.seqRegion}:${region.start}-${region.end}${strand}`;
}
