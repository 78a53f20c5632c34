/**
 * `exportResearchObject`: one session of the governed runtime as an RO-Crate 1.1 (Process Run Crate):
 * a `CreateAction` per governed call, an `AuthorizeAction` per authorization, the objects named by
 * their SHA-256, downloads and extractions, the answer with its claims and the review's verdicts, and
 * what a replay needs (tool definitions, manifests). Content no licence lets the crate pass on is
 * referenced by hash, and the crate says why.
 */
import type { ExtensionsConfig } from "../config/index.js";
import { type Clock, GovernanceError, requireGovernanceOption, systemClock } from "../core/index.js";
import type { ContentStore } from "../governance/audit/index.js";
import type { CatalogSnapshot } from "../governance/catalog/index.js";
import type { SourceManifest } from "../governance/manifests/index.js";
import { addAnswer } from "./answer-entities.js";
import { addArtifacts } from "./artifact-entities.js";
import { type ContentDescription, CrateBuilder, type CrateContent } from "./crate-builder.js";
import { reviewCrateAnswer } from "./crate-evidence.js";
import type { ResearchObjectFiles } from "./crate-files.js";
import { ref } from "./crate-graph.js";
import { renderCratePreview } from "./crate-preview.js";
import { entityIds } from "./crate-vocabulary.js";
import { authorizationAction, invocationAction } from "./ledger-entities.js";
import { type Redistribution, redistribution } from "./redistribution.js";
import { replayCatalogOf } from "./replay-catalog.js";
import {
  DOWNLOAD_TOOL_ID,
  EXTRACTION_TOOL_ID,
  type ReadObject,
  type ResearchObjectLedger,
  readSessionContents,
  recordLicences,
} from "./session-contents.js";

/** What an export reads: a `Governance` fits. */
export interface ResearchObjectSource {
  /** Only the read methods are used. */
  ledger: ResearchObjectLedger;
  store: ContentStore;
  /** Where downloaded files and extractions are. */
  dataDir: string;
  /** The live catalog: tool definitions and manifests, for the crate and a later replay. */
  catalog: {
    /** The catalog as it is now, or `undefined` before its first refresh. */
    snapshot(): CatalogSnapshot | undefined;
  };
  /** The configured servers (only ids, transports, descriptions and routing go into the crate). */
  config: Pick<ExtensionsConfig, "servers">;
}

/** Options of {@link exportResearchObject}. */
export interface ExportResearchObjectOptions {
  /** The ledger, store, data directory, catalog and config (a `Governance` fits). */
  governance: ResearchObjectSource;
  /** The session to export. */
  sessionId: string;
  /** Only the calls of this thread. @default every call of the session */
  threadId?: string | undefined;
  /** The final answer, whose claims are reviewed and linked to the calls that back them. */
  answer?: string | undefined;
  /** For `datePublished`. @default systemClock */
  clock?: Clock | undefined;
}

/** A crate in memory, with its counts. */
export interface ResearchObject extends ResearchObjectFiles {
  summary: ResearchObjectSummary;
}

/** What a crate holds, counted. */
export interface ResearchObjectSummary {
  sessionId: string;
  threadId?: string | undefined;
  /** Entities per `@type`. */
  entities: Record<string, number>;
  invocations: number;
  authorizations: number;
  /** Objects and files copied into the crate. */
  copied: number;
  /** Objects and files only referenced by hash. */
  referencedOnly: number;
  /** Facts of the answer, and how many the review accepted. */
  facts: number;
  acceptedFacts: number;
  /** Bytes of the payload files (metadata and preview not included). */
  payloadBytes: number;
}

/**
 * Exports one session (or thread) as a research object.
 * @param options `governance` (the ledger, store, data directory, catalog and config (a `Governance` fits)), the session, the thread, the answer and the clock
 * @returns the crate in memory; write it with `writeResearchObject`
 * @throws GovernanceError `NOT_FOUND` when the session has no recorded call; `INVALID_INPUT` for an
 *   empty session id
 * @example
 * const crate = await exportResearchObject({ governance, sessionId: "agent-demo", answer });
 * await writeResearchObject(crate, "agent-demo.zip");
 */
export async function exportResearchObject(options: ExportResearchObjectOptions): Promise<ResearchObject> {
  requireGovernanceOption(options, "exportResearchObject");
  const { governance: source } = options;
  const sessionId = options.sessionId.trim();
  const threadId = options.threadId?.trim() || undefined;
  if (sessionId === "") throw new GovernanceError("INVALID_INPUT", "Name the session to export (sessionId).");
  const contents = await readSessionContents(source, { sessionId, threadId });
  const snapshot = source.catalog.snapshot();
  const manifests = new Map(snapshot?.sources.map((s) => [s.id, s.manifest]) ?? []);
  const clock = options.clock ?? systemClock;
  const builder = new CrateBuilder({
    name: `Sciencegate research object: session ${sessionId}${threadId ? `, thread ${threadId}` : ""}`,
    description:
      `Every governed tool call of session ${sessionId} (${contents.rows.length} calls), who or what authorized ` +
      "each, the objects they stored (named by SHA-256), downloads and extractions" +
      (options.answer === undefined
        ? "."
        : ", and the final answer with each claim linked to the calls that back it."),
    datePublished: new Date(clock.now()).toISOString(),
  });

  // What each object is, and whether it may be copied: content goes in only if every use allows it.
  const usages = new Map<string, { content: CrateContent; description: ContentDescription }>();
  const use = (
    contentRef: string,
    verdict: Redistribution,
    description: Omit<ContentDescription, "path">,
  ) => {
    const object = contents.objects.get(contentRef) as ReadObject;
    const held = usages.get(contentRef);
    if (held) {
      if (!verdict.allowed && held.content.redistribution.allowed) held.content.redistribution = verdict;
      return;
    }
    usages.set(contentRef, {
      content: { ...object, redistribution: verdict },
      description: { ...description, path: entityIds.object(object.sha256) },
    });
  };
  const withheldCalls = new Map<string, string>();
  for (const row of contents.rows) {
    const builtin = row.toolId === DOWNLOAD_TOOL_ID || row.toolId === EXTRACTION_TOOL_ID;
    const normalized = row.normalizedRef ? contents.objects.get(row.normalizedRef)?.json : undefined;
    // A built-in call of the in-process source (an extraction) carries the record's source in its entry:
    // that source's classification governs the content, as for a row that names it.
    const recordSource = builtin ? (normalized as { sourceId?: unknown } | undefined)?.sourceId : undefined;
    const subjectSource =
      builtin && !manifests.has(row.sourceId) && typeof recordSource === "string"
        ? recordSource
        : row.sourceId;
    const manifest = manifests.get(subjectSource);
    const classification = manifest?.governance.dataClassification;
    const licence = manifest?.governance.license ?? row.license;
    const results = redistribution({
      sourceId: subjectSource,
      dataClassification: classification,
      licences: builtin ? [] : [licence, ...recordLicences(normalized)],
    });
    if (!results.allowed) withheldCalls.set(row.invocationId, results.reason ?? "");
    const call = `${row.sourceId}/${row.toolId}`;
    if (row.requestRef) {
      const request = redistribution({
        sourceId: row.sourceId,
        dataClassification: classification,
        licences: [],
      });
      use(row.requestRef, request, { name: `Request of ${call}`, encodingFormat: "application/json" });
    }
    const resultLicence = builtin ? undefined : licence;
    if (row.rawRef) {
      use(row.rawRef, results, {
        name: `Raw result of ${call}`,
        encodingFormat: "application/json",
        licence: resultLicence,
      });
    }
    const origin = contents.cacheOrigins.get(row.invocationId);
    if (origin) {
      use(origin, results, {
        name: `Raw result of ${call} (the earlier call whose result the cache returned)`,
        encodingFormat: "application/json",
        licence: resultLicence,
      });
    }
    if (row.normalizedRef) {
      use(row.normalizedRef, results, {
        name: `${builtin ? "Ledger entry" : "Normalized result"} of ${call}`,
        encodingFormat: "application/json",
        licence: resultLicence,
      });
    }
  }
  const objectIds = new Map<string, string>();
  for (const [contentRef, { content, description }] of usages) {
    objectIds.set(contentRef, builder.content(content, description));
  }
  const objectIdOf = (contentRef: string) =>
    objectIds.get(contentRef) ?? entityIds.withheld(contentRef.slice(7));

  // The calls, their instruments and sources, in ledger order.
  const session = builder.graph.add({
    "@id": entityIds.session,
    "@type": "OrganizeAction",
    name: `Governed session ${sessionId}`,
    instrument: ref(entityIds.software),
    agent: ref(entityIds.software),
    sessionId,
    startTime: contents.rows[0]?.startedAt,
    endTime: contents.rows
      .map((row) => row.finishedAt)
      .sort()
      .at(-1),
    object: [],
  });
  if (threadId) session.threadId = threadId;
  builder.graph.link(entityIds.root, "mentions", entityIds.session);
  const authorized = new Map<string, string[]>();
  for (const row of contents.rows) {
    const tool = snapshot?.tools.find((t) => t.sourceId === row.sourceId && t.toolId === row.toolId);
    builder.source(row.sourceId, manifests.get(row.sourceId));
    builder.tool(row.sourceId, row.toolId, {
      mcpToolName: tool?.manifest.mcpToolName ?? row.mcpToolName,
      serverId: tool?.serverId,
      description: tool?.manifest.description,
      version: manifests.get(row.sourceId)?.version,
    });
    if (row.license) builder.licence(row.license);
    const origin = contents.cacheOrigins.get(row.invocationId);
    const action = invocationAction(row, objectIdOf, origin ? { rawRef: origin } : undefined);
    builder.graph.add(action);
    builder.graph.link(entityIds.session, "object", action["@id"]);
    builder.graph.link(entityIds.root, "mentions", action["@id"]);
    if (row.authorizationId)
      authorized.set(row.authorizationId, [...(authorized.get(row.authorizationId) ?? []), row.invocationId]);
  }
  for (const auth of contents.authorizations) {
    const action = authorizationAction(auth, authorized.get(auth.id) ?? []);
    builder.graph.add(action);
    builder.graph.link(entityIds.root, "mentions", action["@id"]);
  }

  // Downloaded files and their extractions.
  addArtifacts(builder, contents, (sourceId) => manifests.get(sourceId));

  // The answer: its claims, reviewed against exactly what this crate holds.
  let facts = 0;
  let acceptedFacts = 0;
  if (options.answer !== undefined) {
    const copied = [...usages.values()].flatMap(({ content }) =>
      content.redistribution.allowed && content.bytes ? [content.bytes] : [],
    );
    const { review } = await reviewCrateAnswer(
      { rows: contents.rows, objects: copied },
      options.answer,
      sessionId,
    );
    const answerId = addAnswer(builder, options.answer, review, {
      resultOf: (id) => {
        const row = contents.rows.find((r) => r.invocationId === id);
        return row?.normalizedRef
          ? (contents.objects.get(row.normalizedRef)?.json as { records?: [] })
          : undefined;
      },
      withheldReason: (id) => withheldCalls.get(id),
      sourceLicence: (id) => manifests.get(id)?.governance.license,
    });
    builder.graph.add({ "@id": entityIds.session, "@type": "OrganizeAction", result: [ref(answerId)] });
    builder.graph.add({ "@id": entityIds.root, "@type": "Dataset", mainEntity: ref(answerId) });
    facts = review.facts.length;
    acceptedFacts = review.facts.filter((fact) => fact.accepted).length;
  }

  // What a replay needs: the servers, their tool definitions and the manifests that governed the calls.
  const replay = replayCatalogOf(snapshot, source.config.servers);
  builder.ownFile(
    entityIds.catalogFile,
    new TextEncoder().encode(`${JSON.stringify(replay.catalog, null, 2)}\n`),
    {
      name: "Tool catalog for replay",
      description:
        "The configured servers (ids, transports, routing) and the live MCP tool definitions at export.",
      encodingFormat: "application/json",
    },
  );
  for (const manifest of replay.manifests) {
    builder.ownFile(
      entityIds.manifest(manifest.id),
      new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`),
      {
        name: `Source manifest: ${manifest.id}`,
        encodingFormat: "application/json",
        about: ref(builder.source(manifest.id, manifest as SourceManifest)),
      },
    );
  }

  const metadata = builder.graph.toMetadata();
  const files = builder.files();
  const entities: Record<string, number> = {};
  for (const entity of metadata["@graph"]) {
    for (const type of [entity["@type"]].flat()) entities[type] = (entities[type] ?? 0) + 1;
  }
  const summary: ResearchObjectSummary = {
    sessionId,
    threadId,
    entities,
    invocations: contents.rows.length,
    authorizations: contents.authorizations.length,
    copied: metadata["@graph"].filter((e) => e.redistributed === true).length,
    referencedOnly: metadata["@graph"].filter((e) => e.redistributed === false).length,
    facts,
    acceptedFacts,
    payloadBytes: files.reduce((sum, file) => sum + file.bytes.byteLength, 0),
  };
  return { metadata, files, preview: renderCratePreview(metadata), summary };
}
