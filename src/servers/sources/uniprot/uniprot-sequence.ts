/**
 * What a UniProtKB sequence length is the length of: the canonical (displayed) isoform among the entry's
 * isoforms, and the precursor before its signal peptide, propeptide or transit peptide is removed. A bare
 * "length 620" hides both; these facts and the warnings that say them in words travel with the record.
 */

/** One isoform of an entry (`ALTERNATIVE PRODUCTS` comment). */
export interface UniprotIsoform {
  /** `O14975-1`. */
  id: string;
  name?: string;
  synonyms?: string[];
  /** `Displayed` (the entry's sequence), `Described`, `External`, `Not described`. */
  status?: string;
}

/** A processing feature (signal peptide, propeptide, transit peptide, chain, peptide), 1-based inclusive. */
export interface UniprotSegment {
  start?: number;
  end?: number;
  description?: string;
}

/** The sequence facts of an entry (`structuredData` fields). */
export interface UniprotSequenceFacts {
  /** The isoform whose sequence (and `sequenceLength`) the entry shows, when UniProt lists isoforms. */
  sequenceIsoform?: string;
  isoforms?: UniprotIsoform[];
  /** UniProt's flag: the sequence is of a precursor, or a fragment. */
  precursor?: boolean;
  fragment?: boolean;
  signalPeptide?: UniprotSegment;
  transitPeptide?: UniprotSegment;
  propeptides?: UniprotSegment[];
  initiatorMethionineRemoved?: boolean;
  /** The mature chains and peptides, each with its length. */
  matureChains?: (UniprotSegment & { length?: number; type: "chain" | "peptide" })[];
}

/**
 * Reads an entry's isoforms, precursor flag and processing features.
 * @param entry the parsed entry (comments, features, proteinDescription.flag)
 * @returns the facts UniProt stated, nothing invented
 */
export function uniprotSequenceFacts(entry: {
  comments?: { commentType?: string | undefined; isoforms?: unknown[] | undefined }[] | undefined;
  features?: unknown[] | undefined;
  proteinDescription?: { flag?: string | undefined } | undefined;
}): UniprotSequenceFacts {
  const facts: UniprotSequenceFacts = {};
  const isoforms = (entry.comments ?? [])
    .filter((c) => c.commentType === "ALTERNATIVE PRODUCTS")
    .flatMap((c) => (c.isoforms ?? []).flatMap(isoformOf));
  if (isoforms.length > 0) {
    facts.isoforms = isoforms;
    const displayed = isoforms.find((i) => i.status === "Displayed");
    if (displayed) facts.sequenceIsoform = displayed.id;
  }
  const flag = entry.proteinDescription?.flag ?? "";
  if (/precursor/i.test(flag)) facts.precursor = true;
  if (/fragment/i.test(flag)) facts.fragment = true;
  const features = (entry.features ?? []).flatMap(featureOf);
  const first = (type: string) => features.find((f) => f.type === type)?.segment;
  const signal = first("Signal");
  const transit = first("Transit peptide");
  const propeptides = features.filter((f) => f.type === "Propeptide").map((f) => f.segment);
  if (signal) facts.signalPeptide = signal;
  if (transit) facts.transitPeptide = transit;
  if (propeptides.length > 0) facts.propeptides = propeptides;
  if (features.some((f) => f.type === "Initiator methionine")) facts.initiatorMethionineRemoved = true;
  const mature = features.flatMap((f) => {
    if (f.type !== "Chain" && f.type !== "Peptide") return [];
    const { start, end } = f.segment;
    const length = start !== undefined && end !== undefined && end >= start ? end - start + 1 : undefined;
    return [{ ...f.segment, ...(length === undefined ? {} : { length }), type: lower(f.type) }];
  });
  if (mature.length > 0) facts.matureChains = mature;
  return facts;
}

/**
 * The warnings that say what the entry's sequence length is the length of.
 * @param accession the entry accession
 * @param length the entry's `sequence.length`
 * @param facts the entry's sequence facts
 * @returns zero to three warnings
 */
export function sequenceWarnings(
  accession: string,
  length: number | undefined,
  facts: UniprotSequenceFacts,
): string[] {
  if (length === undefined) return [];
  const warnings: string[] = [];
  const others = (facts.isoforms ?? []).filter((i) => i.id !== facts.sequenceIsoform);
  if (facts.sequenceIsoform && others.length > 0) {
    warnings.push(
      `The sequence (${length} aa) is isoform ${facts.sequenceIsoform}, UniProt's canonical one; ` +
        `UniProt describes ${others.length} other isoform(s) (${others.map((i) => i.id).join(", ")}) with ` +
        "other sequences. Say which isoform a length or position refers to.",
    );
  }
  const removed = [
    facts.signalPeptide && `signal peptide ${span(facts.signalPeptide)}`,
    facts.transitPeptide && `transit peptide ${span(facts.transitPeptide)}`,
    ...(facts.propeptides ?? []).map((p) => `propeptide ${span(p)}`),
  ].filter((part): part is string => Boolean(part));
  if (facts.precursor || removed.length > 0) {
    const chains = (facts.matureChains ?? [])
      .filter((c) => c.length !== undefined)
      .map((c) => `${c.type} ${span(c)} (${c.length} aa)`);
    const parts = removed.length > 0 ? `: it includes the ${removed.join(", ")}` : "";
    const mature = chains.length > 0 ? `; the mature ${chains.join(", ")}` : "";
    warnings.push(`The sequence length ${length} is that of the precursor${parts}${mature}.`);
  }
  if (facts.fragment) {
    warnings.push(`UniProt flags the sequence as a fragment: ${length} aa is not the full protein's length.`);
  }
  return warnings.map((warning) => `${accession}: ${warning}`);
}

function span(segment: UniprotSegment): string {
  return `${segment.start ?? "?"}-${segment.end ?? "?"}`;
}

function lower(type: string): "chain" | "peptide" {
  return type === "Peptide" ? "peptide" : "chain";
}

function isoformOf(value: unknown): UniprotIsoform[] {
  if (!isObject(value)) return [];
  const id = Array.isArray(value.isoformIds)
    ? value.isoformIds.find((x) => typeof x === "string")
    : undefined;
  if (typeof id !== "string") return [];
  const isoform: UniprotIsoform = { id };
  const name = textValue(value.name);
  const synonyms = Array.isArray(value.synonyms) ? value.synonyms.flatMap((s) => textValue(s) ?? []) : [];
  if (name) isoform.name = name;
  if (synonyms.length > 0) isoform.synonyms = synonyms;
  if (typeof value.isoformSequenceStatus === "string") isoform.status = value.isoformSequenceStatus;
  return [isoform];
}

function featureOf(value: unknown): { type: string; segment: UniprotSegment }[] {
  if (!isObject(value) || typeof value.type !== "string") return [];
  const location = isObject(value.location) ? value.location : {};
  const segment: UniprotSegment = {};
  const start = position(location.start);
  const end = position(location.end);
  if (start !== undefined) segment.start = start;
  if (end !== undefined) segment.end = end;
  if (typeof value.description === "string" && value.description.trim()) {
    segment.description = value.description.trim();
  }
  return [{ type: value.type, segment }];
}

function position(value: unknown): number | undefined {
  const number = isObject(value) ? value.value : undefined;
  return typeof number === "number" && Number.isInteger(number) && number > 0 ? number : undefined;
}

function textValue(value: unknown): string | undefined {
  return isObject(value) && typeof value.value === "string" && value.value.trim()
    ? value.value.trim()
    : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
