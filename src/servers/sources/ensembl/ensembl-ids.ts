/**
 * Ensembl identifiers and names: stable ids (`ENSG00000157764`, `ENSMUST00000002487.9`), species names and
 * their common aliases, and the canonical HTTPS pages of www.ensembl.org.
 */
import { ProviderError } from "../provider-error.js";

/** What a stable id names. */
export type EnsemblIdKind = "gene" | "transcript" | "protein" | "exon" | "regulatory";

/** A normalized Ensembl stable id. */
export interface EnsemblStableId {
  /** The id without version (`ENSG00000157764`). */
  id: string;
  kind: EnsemblIdKind;
  /** The version asked for (13 for `.13`), when one was. */
  version?: number;
}

const KIND_LETTERS: Record<string, EnsemblIdKind> = {
  G: "gene",
  T: "transcript",
  P: "protein",
  E: "exon",
  R: "regulatory",
};
/** ENS, an optional species prefix (`MUS`, `DAR`), the feature letter and eleven digits. */
const ENSEMBL_ID = /^(ENS[A-Z]{0,6}?)([GTPER])(\d{11})(?:\.(\d+))?$/;
/** FlyBase ids, which Ensembl uses as the stable ids of Drosophila melanogaster. */
const FLYBASE_ID = /^FB(gn|tr|pp)(\d{7})(?:\.(\d+))?$/;

/** Common names and taxon ids Ensembl users write, mapped to Ensembl's production names. */
const SPECIES_ALIASES: Record<string, string> = {
  human: "homo_sapiens",
  "9606": "homo_sapiens",
  mouse: "mus_musculus",
  "10090": "mus_musculus",
  rat: "rattus_norvegicus",
  "10116": "rattus_norvegicus",
  zebrafish: "danio_rerio",
  "7955": "danio_rerio",
  fly: "drosophila_melanogaster",
  drosophila: "drosophila_melanogaster",
  "7227": "drosophila_melanogaster",
  worm: "caenorhabditis_elegans",
  "c._elegans": "caenorhabditis_elegans",
  "6239": "caenorhabditis_elegans",
  yeast: "saccharomyces_cerevisiae",
  "4932": "saccharomyces_cerevisiae",
  chicken: "gallus_gallus",
  "9031": "gallus_gallus",
  dog: "canis_lupus_familiaris",
  pig: "sus_scrofa",
  cow: "bos_taurus",
  chimpanzee: "pan_troglodytes",
  macaque: "macaca_mulatta",
  xenopus: "xenopus_tropicalis",
};

/** The species used when a tool call names none. */
export const DEFAULT_SPECIES = "homo_sapiens";

/**
 * Normalizes a species to Ensembl's production name: `Homo sapiens`, `homo_sapiens`, `human` and `9606` all
 * become `homo_sapiens`. Unknown aliases pass through lower-cased (Ensembl knows many more).
 * @param value user input; absent means human
 * @returns the production name or alias to send
 * @throws ProviderError `invalid_input` when the text cannot be a species name
 */
export function normalizeSpecies(value: string | undefined): string {
  if (value === undefined) return DEFAULT_SPECIES;
  const text = value.trim().toLowerCase().replace(/\s+/g, "_");
  const name = SPECIES_ALIASES[text] ?? text;
  if (!/^[a-z][a-z0-9_]{1,79}$/.test(name) && !/^\d{1,8}$/.test(name)) {
    throw new ProviderError(
      "invalid_input",
      "The species must be an Ensembl species name such as homo_sapiens, a common name such as mouse, or a taxon id.",
    );
  }
  return name;
}

/**
 * Whether a normalized species is a production name (`genus_species…`) rather than an alias Ensembl resolves.
 * @param species a value of `normalizeSpecies`
 * @returns true for a production name
 */
export function isProductionName(species: string): boolean {
  return /^[a-z]+_[a-z0-9_]+$/.test(species);
}

/**
 * Normalizes an Ensembl stable id from its bare or versioned form, an `ensembl:` prefix, or a www.ensembl.org
 * URL (`/Homo_sapiens/Gene/Summary?g=ENSG…`, `/id/ENSG…`).
 * @param value user input
 * @returns the id, its kind and requested version, or undefined when it is not a stable id
 */
export function normalizeEnsemblId(value: string): EnsemblStableId | undefined {
  let text = value.trim().replace(/^ensembl\s*:\s*/i, "");
  if (/^(?:https?:\/\/)?[a-z0-9.-]*ensembl\.org\//i.test(text)) {
    const fromUrl = idInEnsemblUrl(text);
    if (fromUrl === undefined) return undefined;
    text = fromUrl;
  }
  const fly = FLYBASE_ID.exec(text);
  if (fly) {
    const kind: EnsemblIdKind = fly[1] === "gn" ? "gene" : fly[1] === "tr" ? "transcript" : "protein";
    return withVersion(`FB${fly[1]}${fly[2]}`, kind, fly[3]);
  }
  const match = ENSEMBL_ID.exec(text.toUpperCase());
  if (!match) return undefined;
  const [, prefix, letter = "", digits, version] = match;
  const kind = KIND_LETTERS[letter];
  return kind ? withVersion(`${prefix}${letter}${digits}`, kind, version) : undefined;
}

/**
 * Whether the input looks like an attempt at an Ensembl stable id (so a failed parse is an invalid id, not a
 * gene symbol to look up).
 * @param value user input
 * @returns true for `ENS…` followed by digits, `FBgn…`, or an ensembl.org URL
 */
export function looksLikeEnsemblId(value: string): boolean {
  const text = value.trim();
  return /^ENS[A-Z]*\d/i.test(text) || /^FB(gn|tr|pp)\d/i.test(text) || /ensembl\.org\//i.test(text);
}

/**
 * The species part of www.ensembl.org paths (`Homo_sapiens`).
 * @param species a production name
 * @returns the name with its first letter capitalized
 */
export function speciesPath(species: string): string {
  return species.charAt(0).toUpperCase() + species.slice(1);
}

/** The assembly whose Ensembl site is not www.ensembl.org: GRCh37 (human) lives on its own archive site. */
export const GRCH37 = "GRCh37";

/**
 * The Ensembl website that shows features on an assembly: www.ensembl.org (the current release, which the REST
 * API serves) or, for human GRCh37, grch37.ensembl.org, the site that keeps that assembly.
 * @param species a production name
 * @param assembly the assembly the answer was computed on (`assembly_name`), when it names one
 * @returns the site's origin, without a trailing slash
 */
export function ensemblSite(species: string, assembly?: string): string {
  return assembly === GRCH37 && species === DEFAULT_SPECIES
    ? "https://grch37.ensembl.org"
    : "https://www.ensembl.org";
}

/**
 * The canonical HTTPS page of an Ensembl feature.
 * @param species the production name of the feature's species
 * @param kind what the id names
 * @param id the stable id (or variant name for `variation`)
 * @param assembly the assembly read (`GRCh37` links to grch37.ensembl.org) @default the current one
 * @returns e.g. `https://www.ensembl.org/Homo_sapiens/Gene/Summary?g=ENSG00000157764`
 */
export function ensemblPageUrl(
  species: string,
  kind: EnsemblIdKind | "variation" | "structural_variation",
  id: string,
  assembly?: string,
): string {
  const site = ensemblSite(species, assembly);
  const base = `${site}/${speciesPath(species)}`;
  const value = encodeURIComponent(id);
  switch (kind) {
    case "gene":
      return `${base}/Gene/Summary?g=${value}`;
    case "transcript":
      return `${base}/Transcript/Summary?t=${value}`;
    case "protein":
      return `${base}/Transcript/ProteinSummary?p=${value}`;
    case "regulatory":
      return `${base}/Regulation/Summary?rf=${value}`;
    case "variation":
      return `${base}/Variation/Explore?v=${value}`;
    case "structural_variation":
      return `${base}/StructuralVariation/Explore?sv=${value}`;
    case "exon":
      return `${site}/id/${value}`;
  }
}

/**
 * The location view of a region on the Ensembl site of its assembly.
 * @param species the production name
 * @param seqRegion the sequence region (`7`)
 * @param start first base
 * @param end last base
 * @param assembly the assembly of the coordinates (`GRCh37` links to grch37.ensembl.org) @default the current one
 * @returns `https://www.ensembl.org/<Species>/Location/View?r=<region>:<start>-<end>`
 */
export function ensemblLocationUrl(
  species: string,
  seqRegion: string,
  start: number,
  end: number,
  assembly?: string,
): string {
  return `${ensemblSite(species, assembly)}/${speciesPath(species)}/Location/View?r=${encodeURIComponent(seqRegion)}:${start}-${end}`;
}

function idInEnsemblUrl(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(/^https?:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    return undefined;
  }
  for (const name of ["g", "t", "p", "rf"]) {
    const value = url.searchParams.get(name);
    if (value) return value;
  }
  return /^\/id\/([^/]+)\/?$/.exec(url.pathname)?.[1];
}

function withVersion(id: string, kind: EnsemblIdKind, version: string | undefined): EnsemblStableId {
  return version === undefined ? { id, kind } : { id, kind, version: Number(version) };
}
