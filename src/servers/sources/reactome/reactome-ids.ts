/**
 * Reactome identifiers (`R-HSA-5673001`, versioned `R-HSA-5673001.4`, numeric database ids), their URL forms,
 * canonical pages, and the plain text of Reactome's HTML-flavoured names and summaries.
 */

/** A normalized Reactome identifier. */
export interface ReactomeId {
  /** `R-HSA-5673001`, or a numeric database id (`5673001`) that the answer resolves to a stable id. */
  id: string;
  /** The version asked for (4 for `.4`), when one was. */
  version?: number;
}

const STABLE_ID = /^R-([A-Z]{3})-(\d{1,12})(?:\.(\d+))?$/i;
const DB_ID = /^\d{1,12}$/;

/**
 * Normalizes a Reactome id from `R-HSA-5673001`, `r-hsa-5673001.4`, `reactome:R-HSA-…`, a numeric database id,
 * or a reactome.org / identifiers.org URL (`/content/detail/R-HSA-…`, `/PathwayBrowser/#/R-HSA-…`).
 * @param value user input
 * @returns the id and requested version, or undefined when it is not a Reactome id
 */
export function normalizeReactomeId(value: string): ReactomeId | undefined {
  let text = value.trim();
  if (/^(?:https?:\/\/)?(?:[a-z0-9-]+\.)*(?:reactome|identifiers)\.org\//i.test(text)) {
    // The pathway browser keeps the id in the fragment, possibly followed by '&' options.
    const match = /(R-[A-Z]{3}-\d+(?:\.\d+)?)(?:[&/?#].*)?$/i.exec(text);
    if (!match?.[1]) return undefined;
    text = match[1];
  }
  text = text.replace(/^reactome\s*:\s*/i, "");
  if (DB_ID.test(text)) return { id: text.replace(/^0+(?=\d)/, "") };
  const match = STABLE_ID.exec(text);
  if (!match) return undefined;
  const id = `R-${match[1]?.toUpperCase()}-${match[2]}`;
  return match[3] === undefined ? { id } : { id, version: Number(match[3]) };
}

/**
 * Whether a string is a Reactome stable id (without version).
 * @param value any string
 * @returns true for `R-XXX-digits`
 */
export function isReactomeStableId(value: string): boolean {
  return /^R-[A-Z]{3}-\d+$/.test(value);
}

/**
 * The canonical HTTPS page of a Reactome object.
 * @param stId a stable id
 * @returns `https://reactome.org/content/detail/<stId>`
 */
export function reactomeUrl(stId: string): string {
  return `https://reactome.org/content/detail/${encodeURIComponent(stId)}`;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/**
 * The plain text of Reactome's HTML fragments: search highlighting `<span>`s and `<br>`s removed, entities
 * decoded, whitespace collapsed (paragraph breaks kept as blank lines).
 * @param html a name, summation or search snippet
 * @returns the text, or undefined when nothing is left
 */
export function plainText(html: string | undefined): string | undefined {
  if (html === undefined) return undefined;
  const text = html
    .replace(/<br\s*\/?>|<\/p>/gi, "\n\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name.startsWith("#")) {
        const code =
          name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
        return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      }
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.replace(/\s+/g, " ").trim())
    .filter(Boolean)
    .join("\n\n");
  return text || undefined;
}

/** Reactome's species codes in stable ids (`R-HSA-…`), for the species it curates or infers pathways for. */
const SPECIES_CODES: Record<string, string> = {
  HSA: "Homo sapiens",
  MMU: "Mus musculus",
  RNO: "Rattus norvegicus",
  BTA: "Bos taurus",
  CFA: "Canis familiaris",
  SSC: "Sus scrofa",
  GGA: "Gallus gallus",
  XTR: "Xenopus tropicalis",
  DRE: "Danio rerio",
  DME: "Drosophila melanogaster",
  CEL: "Caenorhabditis elegans",
  DDI: "Dictyostelium discoideum",
  SPO: "Schizosaccharomyces pombe",
  SCE: "Saccharomyces cerevisiae",
  PFA: "Plasmodium falciparum",
  MTU: "Mycobacterium tuberculosis",
};

/**
 * The species a Reactome stable id names (`R-HSA-5673001` → Homo sapiens).
 * @param stId a stable id
 * @returns the species' scientific name, or undefined for codes that name no single species (`R-ALL-…`)
 *   or that this table does not know
 */
export function reactomeSpeciesOfStableId(stId: string): string | undefined {
  const code = /^R-([A-Z]{3})-\d+/.exec(stId)?.[1];
  return code ? SPECIES_CODES[code] : undefined;
}
