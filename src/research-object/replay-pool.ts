/**
 * The seams a replay puts under the broker: a `ToolServerPool` that answers each call with the raw
 * result the crate recorded for the same server, tool and validated arguments (the same bytes), and a
 * download fetch and DNS lookup that serve only the files the crate holds. Everything else is refused
 * with `NOT_RECORDED`; nothing reaches a network. The broker above still validates, authorizes,
 * normalizes and records every call.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { DownloadFetch, DownloadLookup } from "../artifacts/index.js";
import { GovernanceError, type GovernanceErrorCode, hashCanonical } from "../core/index.js";
import {
  type PoolCallOptions,
  type ServerState,
  serverUnavailable,
  type ToolServerPool,
} from "../mcp/index.js";
import { callKey, type ReplayRecording } from "./replay-recording.js";

/** A call the replay answered or refused. */
export interface ReplayEvent {
  serverId: string;
  tool: string;
  inputHash: string;
  /** The recorded invocation whose answer was served; absent for a refusal. */
  recordedInvocationId?: string | undefined;
  /** Why it was refused (`not_recorded`, `withheld`, `changed`); absent when served. */
  refused?: string | undefined;
}

/** The pool, plus what it served. */
export interface ReplayPool extends ToolServerPool {
  /** Every call, in order, with the recorded invocation it was answered from or why it was refused. */
  readonly events: readonly ReplayEvent[];
}

/**
 * A tool server pool that answers from a crate.
 * @param recording the crate's recorded answers and tool catalog
 * @returns the pool (its `events` list each call)
 */
export function createReplayPool(recording: ReplayRecording): ReplayPool {
  const events: ReplayEvent[] = [];
  const served = new Map<string, number>();
  const servers = new Map(recording.catalog.servers.map((server) => [server.id, server]));
  let closed = false;
  const serverOf = (id: string) => {
    const server = servers.get(id);
    if (server === undefined) {
      throw new GovernanceError("UNKNOWN_ID", `The research object records no MCP server '${id}'.`);
    }
    return server;
  };
  return {
    events,
    serverIds: () => [...servers.keys()],
    state(id): ServerState {
      const server = serverOf(id);
      return {
        id,
        transport: server.transport,
        status: !server.enabled ? "disabled" : closed ? "closed" : "connected",
        starts: 1,
      };
    },
    async listTools(id): Promise<Tool[]> {
      serverOf(id);
      if (closed) throw serverUnavailable(id, "the replay pool is closed");
      return recording.catalog.tools.filter((t) => t.serverId === id).map((t) => structuredClone(t.tool));
    },
    async callTool(id, name, args, _options?: PoolCallOptions): Promise<CallToolResult> {
      serverOf(id);
      if (closed) throw serverUnavailable(id, "the replay pool is closed");
      const inputHash = hashCanonical(args);
      const key = callKey(id, name, inputHash);
      const answers = recording.calls.get(key) ?? [];
      const at = served.get(key) ?? 0;
      // The recorded answers of a repeated call in their order; past the last, the last again.
      const answer = answers[Math.min(at, answers.length - 1)];
      const event: ReplayEvent = { serverId: id, tool: name, inputHash };
      events.push(event);
      if (answer === undefined) {
        event.refused = "not_recorded";
        throw notRecorded(
          `Replay: the research object recorded no call of '${name}' on '${id}' with these arguments (input hash ${inputHash.slice(0, 12)}…); nothing was sent anywhere.`,
          { reason: "not_recorded", serverId: id, tool: name, inputHash },
        );
      }
      served.set(key, at + 1);
      if (answer.kind === "unavailable") {
        event.refused = answer.reason;
        throw notRecorded(
          `Replay: the research object holds the answer of '${name}' (invocation ${answer.invocationId}) only by its hash: ${answer.message}.`,
          { reason: answer.reason, serverId: id, tool: name, recordedInvocationId: answer.invocationId },
        );
      }
      event.recordedInvocationId = answer.invocationId;
      if (answer.kind === "error") {
        // Not retryable here: the recorded call's retries are over, and replaying them would only wait.
        throw new GovernanceError(answer.code as GovernanceErrorCode, answer.message, {
          data: { replayed: true, recordedInvocationId: answer.invocationId },
        });
      }
      return JSON.parse(new TextDecoder().decode(answer.raw)) as CallToolResult;
    },
    onToolsChanged: () => () => undefined,
    async close() {
      closed = true;
    },
  };
}

/**
 * The download seams of a replay: the fetch serves the crate's copy of a recorded URL (whole or from a
 * `Range` offset), the lookup resolves only the hosts of recorded URLs, to a documentation address
 * (the fetch answers without connecting anywhere).
 * @param recording the crate's files by URL
 * @returns `fetch` and `lookup` for `createGovernance`
 */
export function createReplayDownloads(recording: ReplayRecording): {
  fetch: DownloadFetch;
  lookup: DownloadLookup;
} {
  const hosts = new Set([...recording.files.keys()].flatMap((url) => hostOf(url) ?? []));
  const fetch: DownloadFetch = async (url, init) => {
    const file = recording.files.get(url);
    if (file === undefined) {
      throw notRecorded(`Replay: the research object holds no download of ${url}; nothing was fetched.`, {
        reason: "not_recorded",
        url,
      });
    }
    if (!("bytes" in file)) {
      throw notRecorded(`Replay: the research object holds ${url} only by its hash: ${file.message}.`, {
        reason: file.reason,
        url,
      });
    }
    const range = /^bytes=(\d+)-$/.exec(new Headers(init.headers).get("range") ?? "");
    const offset = range ? Math.min(Number(range[1]), file.bytes.byteLength) : 0;
    const body = file.bytes.slice(offset);
    return new Response(body, {
      status: range ? 206 : 200,
      headers: { "content-length": String(body.byteLength) },
    });
  };
  const lookup: DownloadLookup = async (hostname) => {
    if (!hosts.has(hostname.toLowerCase())) {
      throw notRecorded(`Replay: no download from ${hostname} is recorded in the research object.`, {
        reason: "not_recorded",
        host: hostname,
      });
    }
    return [{ address: "203.0.113.10", family: 4 }];
  };
  return { fetch, lookup };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function notRecorded(message: string, data: Record<string, unknown>): GovernanceError {
  return new GovernanceError("NOT_RECORDED", message, { data: { replay: true, ...data } });
}
