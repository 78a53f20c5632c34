/** A download test bench: a ledger row whose CAS result offers candidates, and a scripted `fetch`. */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { downloadArtifact } from "../../src/artifacts/artifact-download-tool.js";
import { createArtifactSource } from "../../src/artifacts/artifact-source.js";
import type { DownloadFetch } from "../../src/artifacts/download-fetch.js";
import type { DownloadLookup } from "../../src/artifacts/download-host-check.js";
import type { DownloadJob } from "../../src/artifacts/download-job-store.js";
import { DownloadManager } from "../../src/artifacts/download-manager.js";
import type { DownloadManagerOptions, DownloadRequest } from "../../src/artifacts/download-types.js";
import type { PdfExtractor } from "../../src/artifacts/extract-pdf.js";
import type { PdfLimits } from "../../src/artifacts/pdf-limits.js";
import type { ArtifactCandidate, McpToolResult } from "../../src/contract/result-types.js";
import { type ContentStore, MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { LedgerWriter } from "../../src/governance/audit/ledger-writer.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { Broker } from "../../src/governance/broker/broker.js";
import { SourceCatalog } from "../../src/governance/catalog/source-catalog.js";
import type { SourceManifest } from "../../src/governance/manifests/manifest-schema.js";
import { SourceRegistry } from "../../src/governance/manifests/source-registry.js";
import type { Authorize } from "../../src/governance/permissions/authorization.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { makeSource } from "../governance/manifests/manifest-factory.js";

/** The bytes an arXiv PDF candidate serves in tests. */
export const PDF = new TextEncoder().encode(`%PDF-1.4\n${"x".repeat(4000)}\n%%EOF\n`);

/** A resolver that answers a public documentation address (203.0.113.7) for every host, without DNS. */
export const publicLookup: DownloadLookup = async () => [{ address: "203.0.113.7", family: 4 }];

/** A candidate on arxiv.org. */
export function makeCandidate(overrides: Partial<ArtifactCandidate> = {}): ArtifactCandidate {
  return {
    candidateId: "c1",
    sourceId: "arxiv",
    sourceRecordId: "2401.00001v1",
    url: "https://arxiv.org/pdf/2401.00001v1",
    format: "pdf",
    kind: "paper",
    license: "CC-BY-4.0",
    ...overrides,
  };
}

/** One request the fake server saw. */
export interface SeenRequest {
  url: string;
  range: string | undefined;
}

/** A route of the fake server: answers one request. */
export type Route = (request: SeenRequest, signal: AbortSignal | undefined) => Response | Promise<Response>;

/**
 * A body that sends `bytes` and then fails like a dropped connection.
 * @param bytes what arrives before the drop
 */
export function droppingBody(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream({
    pull(controller) {
      if (!sent) {
        sent = true;
        controller.enqueue(bytes);
      } else controller.error(new Error("socket hang up"));
    },
  });
}

/**
 * A body that sends `first`, then waits until `release` resolves (or the signal aborts).
 */
export function stalledBody(first: Uint8Array, release: Promise<Uint8Array>, signal?: AbortSignal) {
  let step = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      step++;
      if (step === 1) return controller.enqueue(first);
      if (step > 2) return controller.close();
      signal?.addEventListener("abort", () => controller.error(new Error("aborted")), { once: true });
      controller.enqueue(await release);
    },
  });
}

/** The bench: manager, ledger, store, clock, temp workspace and the routes the fake `fetch` serves. */
export async function createBench(
  candidates: ArtifactCandidate[] = [makeCandidate()],
  options: Partial<DownloadManagerOptions> & {
    hosts?: string[];
    invocationSessionId?: string;
    /** The broker's permission hook (downloads are its calls). @default every call allowed */
    authorize?: Authorize;
  } = {},
) {
  const dataDir = await mkdtemp(join(tmpdir(), "sciencegate-download-"));
  const workspaceDir = join(dataDir, "workspace");
  const ledger = new MemoryLedger();
  const ledgerWriter = new LedgerWriter(ledger, { retryWithinMs: 0 });
  const store = new MemoryContentStore();
  const clock = new ManualClock(Date.parse("2026-01-01T00:00:00Z"));
  const routes = new Map<string, Route>();
  const seen: SeenRequest[] = [];
  const fetch: DownloadFetch = async (url, init) => {
    const headers = (init.headers ?? {}) as Record<string, string>;
    const request = { url, range: headers.range };
    seen.push(request);
    const route = routes.get(url);
    if (!route) return new Response("not found", { status: 404 });
    return route(request, init.signal ?? undefined);
  };
  const manifest = makeSource({
    id: "arxiv",
    governance: {
      ...makeSource().governance,
      networkHosts: options.hosts ?? ["arxiv.org", "export.arxiv.org"],
    },
  }) as unknown as SourceManifest;
  const catalog = { source: (id: string) => (id === "arxiv" ? { manifest } : undefined) };
  await recordCandidateInvocation(
    { ledgerWriter, store },
    {
      invocationId: "inv-1",
      sessionId: options.invocationSessionId ?? "s1",
      toolId: "prepare_download",
      candidates,
      license: "arXiv non-exclusive license",
    },
  );
  const { hosts: _hosts, invocationSessionId: _session, authorize: _authorize, ...managerOptions } = options;
  const manager = new DownloadManager({
    ledgerWriter,
    store,
    catalog,
    workspaceDir,
    fetch,
    clock,
    lookup: publicLookup,
    // `settle` jumps the manual clock a minute at a time to fire backoffs, which would fire these
    // deadlines too; the deadline tests set their own. The progress ticks would keep a timer pending
    // all along; the live-progress tests set their own.
    headersTimeoutMs: Number.POSITIVE_INFINITY,
    idleTimeoutMs: Number.POSITIVE_INFINITY,
    jobTimeoutMs: Number.POSITIVE_INFINITY,
    progressPersistMs: Number.POSITIVE_INFINITY,
    ...managerOptions,
  });
  /** Serves `bytes` at `url` (honouring Range with a 206). */
  const serve = (url: string, bytes: Uint8Array) =>
    routes.set(url, ({ range }) => {
      const start = range === undefined ? 0 : Number(/bytes=(\d+)-/.exec(range)?.[1] ?? 0);
      return new Response(bytes.slice(start), {
        status: start > 0 ? 206 : 200,
        headers: { "content-length": String(bytes.length - start) },
      });
    });
  /** Awaits a promise while firing the manual clock's timers (retry backoff). */
  const settle = async <T>(promise: Promise<T>): Promise<T> => {
    let done = false;
    const tracked = promise.finally(() => {
      done = true;
    });
    while (!done) {
      await new Promise((resolve) => setImmediate(resolve));
      if (clock.pendingTimers > 0) await clock.advance(60_000);
    }
    return tracked;
  };
  /**
   * A broker over the bench's ledger that serves the built-ins in process (no MCP source), as
   * `createGovernance` does: extractions of the manager's jobs into the bench's data directory.
   */
  const extractionBroker = (extraction: { limits?: Partial<PdfLimits>; extractor?: PdfExtractor } = {}) => {
    const pool = createInMemoryPool({});
    return new Broker({
      catalog: new SourceCatalog({ registry: new SourceRegistry(), pool }),
      pool,
      ledgerWriter,
      store,
      clock,
      ...(options.authorize ? { authorize: options.authorize } : {}),
      inProcess: [createArtifactSource({ downloads: manager, catalog, dataDir, clock, ...extraction })],
    });
  };
  /** The broker that serves `artifact_download` (and records retries), as `createGovernance` makes it. */
  const broker = extractionBroker();
  /** One `artifact_download` call through the broker. */
  const download = (request: DownloadRequest) =>
    downloadArtifact({ governance: { broker, downloads: manager }, ...request });
  return {
    manager,
    broker,
    download,
    ledger,
    ledgerWriter,
    store,
    clock,
    routes,
    seen,
    serve,
    settle,
    dataDir,
    workspaceDir,
    extractionBroker,
  };
}

/** A stored job with the given id and status. */
export function makeJob(jobId: string, status: DownloadJob["status"] = "queued"): DownloadJob {
  return {
    jobId,
    planId: `plan-${jobId}`,
    mcpInvocationId: "inv-1",
    candidateId: "c1",
    sourceId: "arxiv",
    sourceRecordId: "2401.00001v1",
    url: "https://arxiv.org/pdf/2401.00001v1",
    finalPath: `/w/${jobId}.pdf`,
    destinationPath: `${jobId}.pdf`,
    sessionId: "s1",
    status,
    bytesDownloaded: 0,
    attempts: 0,
    warnings: [],
    createdAt: 1,
    updatedAt: 1,
  };
}

/**
 * Records, as the broker would, a successful arXiv invocation that offered `candidates`: its
 * normalized result in the CAS and its ledger row.
 * @param runtime the ledger and CAS the download manager reads
 * @param call invocation id, session, tool id and the candidates
 * @returns the stored result
 */
export async function recordCandidateInvocation(
  runtime: { ledgerWriter: Pick<LedgerWriter, "append">; store: Pick<ContentStore, "putJson"> },
  call: {
    invocationId: string;
    sessionId: string;
    toolId: string;
    candidates: ArtifactCandidate[];
    license?: string;
  },
): Promise<McpToolResult> {
  const result: McpToolResult = {
    records: [],
    artifacts: call.candidates,
    warnings: [],
    attribution: "arXiv",
    license: call.license ?? "arXiv license",
    retrievedAt: "2026-01-01T00:00:00Z",
    sourceId: "arxiv",
    toolId: call.toolId,
    untrusted: true,
  };
  await runtime.ledgerWriter.append({
    invocationId: call.invocationId,
    sessionId: call.sessionId,
    sourceId: "arxiv",
    toolId: call.toolId,
    status: "ok",
    startedAt: "2026-01-01T00:00:00Z",
    finishedAt: "2026-01-01T00:00:01Z",
    durationMs: 1000,
    attempts: 1,
    cacheHit: false,
    queueWaitMs: 0,
    normalizedRef: (await runtime.store.putJson(result)).ref,
  });
  return result;
}
