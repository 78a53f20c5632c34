/**
 * Parses Reactome ContentService answers: `search/query` (grouped search hits) and `data/query/<id>` (one
 * database object, here a pathway or reaction) into normalized records.
 */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { ProviderError } from "../provider-error.js";
import { parseJsonBody } from "../provider-http.js";
import { buildRecord, doiReference } from "../record-builder.js";
import type { ProviderAnswer } from "../source-module.js";
import { isReactomeStableId, plainText, reactomeSpeciesOfStableId, reactomeUrl } from "./reactome-ids.js";

/** One page of a search. */
export interface ReactomeSearchPage {
  /** Matches of the query, when Reactome reports the count. */
  total: number | undefined;
  records: McpRecord[];
  /** Hits left out because they had no stable id. */
  skipped: number;
}

/** Reactome's event classes: what `lookup_pathway` accepts. */
const EVENT_CLASSES = new Set([
  "Pathway",
  "TopLevelPathway",
  "Reaction",
  "ReactionLikeEvent",
  "BlackBoxEvent",
  "Polymerisation",
  "Depolymerisation",
  "FailedReaction",
  "CellLineagePath",
  "CellDevelopmentStep",
]);

/**
 * Parses a `search/query` answer.
 * @param answer the provider answer
 * @returns the hits as `metadata` records and the total when known
 * @throws ProviderError `upstream_unavailable` when the JSON is malformed or has no `results` list
 */
export function parseReactomeSearch(answer: ProviderAnswer): ReactomeSearchPage {
  const body = parseJsonBody(answer);
  if (!isObject(body) || !Array.isArray(body.results)) throw malformed(answer, "search answer");
  const groups = body.results.filter(isObject);
  const entries = groups.flatMap((group) =>
    Array.isArray(group.entries) ? group.entries.filter(isObject) : [],
  );
  const counts = groups.map((group) => group.entriesCount);
  const total = counts.length > 0 && counts.every(isCount) ? counts.reduce((a, b) => a + b, 0) : undefined;
  const records = entries.flatMap((entry) => searchRecord(entry) ?? []);
  return {
    total: total ?? (isCount(body.numberOfMatches) ? body.numberOfMatches : undefined),
    records,
    skipped: entries.length - records.length,
  };
}

function searchRecord(entry: Record<string, unknown>): McpRecord | undefined {
  const stId = str(entry.stId) ?? str(entry.id);
  if (!stId || !isReactomeStableId(stId)) return undefined;
  const named = Array.isArray(entry.species) ? entry.species.flatMap((s) => str(s) ?? []) : [];
  // A hit without its species still names it in the stable id (R-HSA- is human, R-MMU- mouse, ...).
  const fromId = reactomeSpeciesOfStableId(stId);
  const species = named.length > 0 ? named : fromId ? [fromId] : undefined;
  const structuredData: Record<string, unknown> = species ? { species } : {};
  const type = str(entry.exactType) ?? str(entry.type);
  if (type) structuredData.type = type;
  const disease = entry.isDisease ?? entry.disease;
  if (typeof disease === "boolean") structuredData.isDisease = disease;
  const summary = plainText(str(entry.summation));
  if (summary) structuredData.summary = summary;
  if (Array.isArray(entry.compartmentNames)) structuredData.compartments = entry.compartmentNames;
  return buildRecord({
    source: "reactome",
    identifier: stId,
    identifierType: "reactome",
    label: `Reactome:${stId}`,
    url: reactomeUrl(stId),
    title: plainText(str(entry.name)),
    structuredData,
    // A hit carries a name and a snippet, not the curated entry itself.
    contentScope: "metadata",
  });
}

/**
 * Parses a `data/query/<id>` answer of an event (pathway or reaction).
 * @param answer the provider answer
 * @returns the event as a `structured-record` with summary, literature, GO process and sub-events
 * @throws ProviderError `invalid_id` when the object is not an event (a protein, a complex, ...);
 *   `upstream_unavailable` when the JSON is malformed
 */
export function parseReactomeEvent(answer: ProviderAnswer): McpRecord {
  const body = parseJsonBody(answer);
  if (!isObject(body) || typeof body.stId !== "string") throw malformed(answer, "database object");
  const stId = body.stId;
  const schemaClass = str(body.schemaClass) ?? str(body.className);
  if (schemaClass !== undefined && !EVENT_CLASSES.has(schemaClass)) {
    throw new ProviderError("invalid_id", `${stId} is a Reactome ${schemaClass}, not a pathway or reaction.`);
  }
  const version = /\.(\d+)$/.exec(str(body.stIdVersion) ?? "")?.[1];
  const summaries = objects(body.summation).flatMap((s) => plainText(str(s.text)) ?? []);
  const subEvents = objects(body.hasEvent).flatMap((e) =>
    str(e.stId) ? [{ stId: str(e.stId), name: plainText(str(e.displayName)), type: str(e.schemaClass) }] : [],
  );
  const structuredData: Record<string, unknown> = {};
  const facts: Record<string, unknown> = {
    type: schemaClass,
    version,
    species: str(body.speciesName) ?? str(objects(body.species)[0]?.displayName),
    summary: summaries.length > 0 ? summaries.join("\n\n") : undefined,
    releaseDate: str(body.releaseDate),
    isInDisease: typeof body.isInDisease === "boolean" ? body.isInDisease : undefined,
    isInferred: typeof body.isInferred === "boolean" ? body.isInferred : undefined,
    hasDiagram: typeof body.hasDiagram === "boolean" ? body.hasDiagram : undefined,
    compartments: namesOf(body.compartment),
    diseases: namesOf(body.disease),
    subEvents: subEvents.length > 0 ? subEvents : undefined,
    reviewers: authorsOf(body.reviewed),
  };
  const inferredFrom = objects(body.inferredFrom).flatMap(inferredSource);
  if (inferredFrom.length > 0) facts.inferredFrom = inferredFrom;
  for (const [key, value] of Object.entries(facts)) if (value !== undefined) structuredData[key] = value;
  const authors = authorsOf(body.authored);
  const crossReferences = eventReferences(body);
  for (const source of inferredFrom) {
    crossReferences.push({
      identifier: source.stId,
      identifierType: "reactome",
      url: reactomeUrl(source.stId),
    });
  }
  const releaseYear = Number(str(body.releaseDate)?.slice(0, 4));
  return buildRecord({
    source: "reactome",
    identifier: stId,
    identifierType: "reactome",
    // The link shows the current release, so the label names no version; the version read is kept beside it.
    label: `Reactome:${stId}`,
    url: reactomeUrl(stId),
    ...(version ? { citationVersion: version } : {}),
    title: plainText(str(body.displayName)),
    ...(authors ? { authors } : {}),
    year: Number.isInteger(releaseYear) && releaseYear > 1900 ? releaseYear : undefined,
    crossReferences,
    structuredData,
    // Reactome's curated events are expert-authored and peer-reviewed before release; events it infers by
    // orthology from another species' curated event are not reviewed at all, and an answer that does not say
    // which of the two it is gets no claim either way.
    peerReviewStatus: body.isInferred === false ? "peer-reviewed" : "unknown",
    warnings: body.isInferred === true ? [inferredWarning(stId, structuredData.species, inferredFrom)] : [],
    contentScope: "structured-record",
  });
}

/** The warning of a computationally inferred event, naming the curated event(s) it came from when known. */
function inferredWarning(stId: string, species: unknown, sources: InferredSource[]): string {
  const subject = typeof species === "string" ? `${stId} (${species})` : stId;
  const fromSpecies = [...new Set(sources.flatMap((s) => s.species ?? []))];
  const origin = fromSpecies.length > 0 ? fromSpecies.join(", ") : "another species";
  const cite =
    sources.length > 0
      ? ` The curated source is ${sources.map((s) => s.stId).join(", ")}; cite that for curated evidence.`
      : "";
  return (
    `INFERRED: ${subject} was computationally inferred from ${origin} by orthology, not curated or ` +
    `peer-reviewed for this species.${cite}`
  );
}

/** One curated event an inferred event was computed from (`inferredFrom`), when written as an object. */
interface InferredSource {
  stId: string;
  name?: string;
  species?: string;
}

function inferredSource(event: Record<string, unknown>): InferredSource[] {
  const stId = str(event.stId);
  if (!stId || !isReactomeStableId(stId)) return [];
  const source: InferredSource = { stId };
  const name = plainText(str(event.displayName));
  const species = str(event.speciesName) ?? reactomeSpeciesOfStableId(stId);
  if (name) source.name = name;
  if (species) source.species = species;
  return [source];
}
function eventReferences(body: Record<string, unknown>): CrossReference[] {
  const references: CrossReference[] = [];
  const doi = str(body.doi);
  if (doi && /^10\.\d{4,9}\/\S+$/.test(doi)) references.push(doiReference(doi));
  const go = isObject(body.goBiologicalProcess) ? body.goBiologicalProcess : undefined;
  const accession = go ? str(go.accession) : undefined;
  if (accession && /^\d{7}$/.test(accession)) {
    references.push({
      identifier: `GO:${accession}`,
      identifierType: "go",
      url: `https://www.ebi.ac.uk/QuickGO/term/GO:${accession}`,
    });
  }
  for (const reference of objects(body.literatureReference)) {
    const pmid = reference.pubMedIdentifier;
    if (typeof pmid === "number" && Number.isInteger(pmid) && pmid > 0) {
      references.push({
        identifier: String(pmid),
        identifierType: "pmid",
        url: `https://pubmed.ncbi.nlm.nih.gov/${pmid}/`,
      });
    }
  }
  return references;
}

/** Author names of `authored`/`reviewed` instance edits (skipping the numeric back-references). */
function authorsOf(edits: unknown): string[] | undefined {
  const names = objects(edits).flatMap((edit) =>
    objects(edit.author).flatMap((a) => str(a.displayName) ?? []),
  );
  const unique = [...new Set(names)];
  return unique.length > 0 ? unique : undefined;
}

function namesOf(value: unknown): string[] | undefined {
  const names = objects(value).flatMap((item) => str(item.displayName) ?? []);
  return names.length > 0 ? names : undefined;
}

/**
 * The object items of a Reactome list. Reactome writes an object it has already written as its numeric
 * database id, so lists mix objects and numbers.
 */
function objects(value: unknown): Record<string, unknown>[] {
  if (isObject(value)) return [value];
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function malformed(answer: ProviderAnswer, what: string): ProviderError {
  return new ProviderError("upstream_unavailable", `${answer.host} sent a malformed ${what}.`, {
    status: answer.status,
  });
}
