/**
 * What a crate recorded, indexed for replay: each upstream answer by server, MCP tool and input hash
 * (the broker hashes the validated arguments the same way before it calls the pool), in the order the
 * calls ran, and each downloaded file by its URL. A file is served only when its bytes still hash to
 * the SHA-256 the metadata gives.
 */
import { GovernanceError, sha256Hex } from "../core/index.js";
import type { OpenedResearchObject } from "./crate-files.js";
import { type CrateEntity, hasType, indexGraph, refIds, textOf } from "./crate-graph.js";
import { entityIds } from "./crate-vocabulary.js";
import { parseReplayCatalog, type ReplayCatalog } from "./replay-catalog.js";
import { DOWNLOAD_TOOL_ID, EXTRACTION_TOOL_ID } from "./session-contents.js";

/** A source id as manifests spell it; anything else (a path) is not a manifest of the crate. */
const SOURCE_ID = /^[a-z0-9][a-z0-9-]{0,99}$/;

/** One recorded answer of a call, or why the crate cannot give it. */
export type RecordedAnswer =
  | { kind: "result"; raw: Uint8Array; invocationId: string }
  | { kind: "error"; code: string; message: string; invocationId: string }
  | { kind: "unavailable"; reason: "withheld" | "changed"; message: string; invocationId: string };

/** A downloaded file as the crate holds it. */
export type RecordedFile = { bytes: Uint8Array } | { reason: "withheld" | "changed"; message: string };

/** A crate's recorded answers, catalog and manifests, for replay. */
export interface ReplayRecording {
  catalog: ReplayCatalog;
  /** Each manifest file's text (hash checked), by source id. */
  manifests: Map<string, string>;
  /** Recorded answers by {@link callKey}, in the order the calls ran. */
  calls: Map<string, RecordedAnswer[]>;
  /** Downloaded files by the URL they came from. */
  files: Map<string, RecordedFile>;
}

/**
 * The key of a call: server, MCP tool name and input hash.
 * @param serverId the MCP server
 * @param mcpToolName the tool's name on it
 * @param inputHash `hashCanonical` of the validated arguments
 */
export function callKey(serverId: string, mcpToolName: string, inputHash: string): string {
  return JSON.stringify([serverId, mcpToolName, inputHash]);
}

/**
 * Reads the replay index of a crate.
 * @param crate the opened crate
 * @returns the recording
 * @throws GovernanceError `INVALID_INPUT` when the tool catalog is missing, changed or malformed
 */
export async function readReplayRecording(crate: OpenedResearchObject): Promise<ReplayRecording> {
  const byId = indexGraph(crate.metadata);
  const fileOf = async (id: string): Promise<RecordedFile> => {
    const entity = byId.get(id);
    if (entity === undefined) return { reason: "changed", message: `${id} is not described in the crate` };
    if (entity.redistributed === false) {
      return {
        reason: "withheld",
        message: textOf(entity, "conditionsOfAccess") ?? "referenced, not copied",
      };
    }
    const bytes = await crate.read(id);
    if (bytes === undefined) return { reason: "changed", message: `${id} is missing from the crate` };
    if (sha256Hex(bytes) !== textOf(entity, "sha256")) {
      return { reason: "changed", message: `${id} no longer matches its SHA-256` };
    }
    return { bytes };
  };
  const catalogFile = await fileOf(entityIds.catalogFile);
  if (!("bytes" in catalogFile)) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `The crate at ${crate.location} cannot be replayed: its ${entityIds.catalogFile} ${catalogFile.message}.`,
    );
  }
  const catalog = parseReplayCatalog(JSON.parse(new TextDecoder().decode(catalogFile.bytes)));
  const manifests = new Map<string, string>();
  for (const entity of crate.metadata["@graph"]) {
    if (!entity["@id"].startsWith("manifests/")) continue;
    const file = await fileOf(entity["@id"]);
    if (!("bytes" in file)) continue;
    const text = new TextDecoder().decode(file.bytes);
    const id = (JSON.parse(text) as { id?: unknown }).id;
    // The id names the file the replay writes: only a manifest's own id shape (no path) is taken.
    if (typeof id === "string" && SOURCE_ID.test(id)) manifests.set(id, text);
  }
  const calls = new Map<string, RecordedAnswer[]>();
  const actions = crate.metadata["@graph"]
    .filter((entity) => hasType(entity, "CreateAction"))
    .sort((a, b) => String(a.startTime).localeCompare(String(b.startTime)));
  for (const action of actions) {
    const key = keyOf(action, byId, catalog);
    if (key === undefined) continue;
    const answer = await answerOf(action, fileOf);
    if (answer) calls.set(key, [...(calls.get(key) ?? []), answer]);
  }
  const files = new Map<string, RecordedFile>();
  for (const entity of crate.metadata["@graph"]) {
    const url = textOf(entity, "contentUrl");
    if (url !== undefined && !files.has(url)) files.set(url, await fileOf(entity["@id"]));
  }
  return { catalog, manifests, calls, files };
}

function keyOf(
  action: CrateEntity,
  byId: Map<string, CrateEntity>,
  catalog: ReplayCatalog,
): string | undefined {
  const toolId = textOf(action, "toolId");
  const name = textOf(action, "mcpToolName");
  const inputHash = textOf(action, "inputHash");
  if (toolId === DOWNLOAD_TOOL_ID || toolId === EXTRACTION_TOOL_ID || !name || !inputHash) return undefined;
  const tool = byId.get(refIds(action.instrument)[0] ?? "");
  const serverId = textOf(tool, "serverId") ?? catalog.tools.find((t) => t.tool.name === name)?.serverId;
  return serverId === undefined ? undefined : callKey(serverId, name, inputHash);
}

async function answerOf(
  action: CrateEntity,
  fileOf: (id: string) => Promise<RecordedFile>,
): Promise<RecordedAnswer | undefined> {
  const invocationId = textOf(action, "identifier") ?? action["@id"];
  if (refIds(action.actionStatus)[0]?.endsWith("FailedActionStatus")) {
    // Only a failure that came from upstream is an answer; a refusal before the call is the broker's own.
    if (typeof action.attempts !== "number" || action.attempts === 0) return undefined;
    return {
      kind: "error",
      code: textOf(action, "errorCode") ?? "UPSTREAM_UNAVAILABLE",
      message: textOf(action, "error") ?? "The recorded call failed.",
      invocationId,
    };
  }
  const rawId = refIds(action.rawResult)[0] ?? refIds(action.cachedRawResult)[0];
  if (rawId === undefined) return undefined;
  const file = await fileOf(rawId);
  if ("bytes" in file) return { kind: "result", raw: file.bytes, invocationId };
  return { kind: "unavailable", reason: file.reason, message: file.message, invocationId };
}
