/**
 * Parses Reactome AnalysisService answers: the over-representation result of an identifier list
 * (`identifiers/…`) and the list of identifiers it did not recognise (`token/<token>/notFound`).
 */
import type { McpRecord } from "../../../contract/index.js";
import { ProviderError } from "../provider-error.js";
import { parseJsonBody } from "../provider-http.js";
import { buildRecord } from "../record-builder.js";
import type { ProviderAnswer } from "../source-module.js";
import { isReactomeStableId, plainText, reactomeUrl } from "./reactome-ids.js";

/** An over-representation analysis result page. */
export interface ReactomeAnalysis {
  /** The token of the stored result (Reactome keeps it for 7 days); URL-encoded as Reactome sends it. */
  token: string | undefined;
  /** Pathways with at least one hit (all pages). */
  pathwaysFound: number;
  identifiersNotFound: number;
  /** Whether the result was projected to human. */
  projection: boolean | undefined;
  /** This page's pathways, as `analysis-result` records. */
  records: McpRecord[];
  /** Reactome's own warnings (header handling, identifier parsing). */
  warnings: string[];
}

/**
 * Parses an analysis result.
 * @param answer the provider answer
 * @returns the result
 * @throws ProviderError `upstream_unavailable` when the JSON is malformed or not an analysis result
 */
export function parseReactomeAnalysis(answer: ProviderAnswer): ReactomeAnalysis {
  const body = parseJsonBody(answer);
  if (!isObject(body) || !Array.isArray(body.pathways)) {
    throw new ProviderError("upstream_unavailable", `${answer.host} sent a malformed analysis result.`, {
      status: answer.status,
    });
  }
  const summary = isObject(body.summary) ? body.summary : {};
  const records = body.pathways.filter(isObject).flatMap((pathway) => pathwayRecord(pathway) ?? []);
  return {
    token: typeof summary.token === "string" && summary.token !== "" ? summary.token : undefined,
    pathwaysFound: count(body.pathwaysFound) ?? records.length,
    identifiersNotFound: count(body.identifiersNotFound) ?? 0,
    projection: typeof summary.projection === "boolean" ? summary.projection : undefined,
    records,
    warnings: Array.isArray(body.warnings) ? body.warnings.filter((w) => typeof w === "string") : [],
  };
}

/**
 * Parses a `token/<token>/notFound` answer.
 * @param answer the provider answer
 * @returns the identifiers Reactome did not recognise, as it echoes them
 * @throws ProviderError `upstream_unavailable` when the JSON is not a list
 */
export function parseReactomeNotFound(answer: ProviderAnswer): string[] {
  const body = parseJsonBody(answer);
  if (!Array.isArray(body)) {
    throw new ProviderError("upstream_unavailable", `${answer.host} sent a malformed identifier list.`, {
      status: answer.status,
    });
  }
  return body.flatMap((item) => (isObject(item) && typeof item.id === "string" ? [item.id] : []));
}

function pathwayRecord(pathway: Record<string, unknown>): McpRecord | undefined {
  const stId = typeof pathway.stId === "string" ? pathway.stId : undefined;
  if (!stId || !isReactomeStableId(stId)) return undefined;
  const entities = isObject(pathway.entities) ? pathway.entities : {};
  const reactions = isObject(pathway.reactions) ? pathway.reactions : {};
  const species = isObject(pathway.species) ? pathway.species.name : undefined;
  const structuredData: Record<string, unknown> = {
    entities: statistics(entities, ["found", "total", "ratio", "pValue", "fdr"]),
    reactions: statistics(reactions, ["found", "total", "ratio"]),
  };
  if (typeof species === "string") structuredData.species = species;
  if (typeof pathway.inDisease === "boolean") structuredData.isInDisease = pathway.inDisease;
  if (typeof pathway.llp === "boolean") structuredData.isLowestLevel = pathway.llp;
  return buildRecord({
    source: "reactome",
    identifier: stId,
    identifierType: "reactome",
    label: `Reactome:${stId}`,
    url: reactomeUrl(stId),
    title: plainText(typeof pathway.name === "string" ? pathway.name : undefined),
    structuredData,
    // Statistics of this submission, not the curated pathway entry.
    contentScope: "analysis-result",
  });
}

function statistics(source: Record<string, unknown>, keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of keys) {
    const value = source[key];
    if (typeof value === "number" && Number.isFinite(value)) out[key] = value;
  }
  return out;
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
