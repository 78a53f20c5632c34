/**
 * The Downloads page over HTTP, over a real runtime: the bundled arXiv source (in memory, over the fake
 * providers) offers a PDF candidate through a governed call, and a loopback publisher serves the PDF in
 * parts the test releases. The page lists the job, its event stream follows it, and Cancel and Retry
 * change it only with the form's CSRF token on a writable console, each with its audit row.
 */

import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { downloadArtifact } from "../../src/artifacts/artifact-download-tool.js";
import type { DownloadResult } from "../../src/artifacts/index.js";
import { type ConsoleServer, createConsoleHandler, serveConsole } from "../../src/console/index.js";
import { JOB_POLL_MS } from "../../src/console/job-feed.js";
import { HEARTBEAT_MS } from "../../src/console/jobs-stream.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import type { AuthorizationRecord } from "../../src/governance/audit/index.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { MemoryGrantStore } from "../../src/governance/permissions/grant-store.js";
import { createGovernance } from "../../src/runtime/create-governance.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { CHUNKS, createDownloadLab, type DownloadLab, PDF } from "../gateway/gateway-downloads-harness.js";
import {
  BROWSER_FORM_HEADERS,
  csrfOf,
  eventReader,
  offerPaper,
  post,
  rowOf,
  type SseEvent,
} from "./console-client.js";

const SESSION = "console-s1";
const THREAD = "console-thread-1";

let lab: DownloadLab;
let writable: ConsoleServer;
let readOnly: ConsoleServer;
const gates: Gate[] = [];

beforeEach(async () => {
  lab = await createDownloadLab();
  await lab.governance.permissions.setApprovalMode(SESSION, "always_allow");
  writable = await serveConsole({ governance: lab.governance, port: 0, writable: true });
  readOnly = await serveConsole({ governance: lab.governance, port: 0 });
});

afterEach(async () => {
  for (const gate of gates.splice(0)) gate.open();
  await writable.close();
  await readOnly.close();
  await lab.close();
});

interface Gate {
  promise: Promise<void>;
  open: () => void;
}

function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  const made = { promise, open };
  gates.push(made);
  return made;
}

/**
 * Starts a download of the offered PDF whose transfer holds after its first part until `release` opens.
 * @returns the job id, the invocation that offered it and the download's outcome
 */
async function startHeldDownload(release: Gate) {
  const offered = await offerPaper(lab.governance, SESSION);
  const firstPart = gate();
  lab.publisher.pace = () => {
    firstPart.open();
    return release.promise;
  };
  const outcome: Promise<DownloadResult> = downloadArtifact({
    governance: lab.governance,
    ...offered,
    sessionId: SESSION,
    threadId: THREAD,
  });
  await firstPart.promise;
  const [job] = await lab.governance.downloads.list();
  if (job === undefined) throw new Error("no job");
  expect(job.status).toBe("running");
  return { jobId: job.jobId, offered, outcome };
}

async function page(server: ConsoleServer, path = "/jobs"): Promise<string> {
  const response = await fetch(`${server.url}${path}`);
  expect(response.status).toBe(200);
  return response.text();
}

async function consoleRows(): Promise<AuthorizationRecord[]> {
  return (await lab.governance.ledger.listAuthorizations({ sessionId: SESSION })).filter(
    (row) => row.decisionSource === "operator_console",
  );
}

const jobOf = (event: SseEvent) => JSON.parse(event.data) as Record<string, unknown>;

describe("the Downloads page", () => {
  test("lists a running job with its source, destination, progress, offering invocation and session, and only Cancel", async () => {
    const { jobId, offered } = await startHeldDownload(gate());
    const html = await page(writable);
    expect(html).toContain('<table id="jobs" data-job-events="/jobs/events">');
    const row = rowOf(html, jobId);
    expect(row).toContain('data-status="running"');
    expect(row).toMatch(/<span class="badge badge-neutral" data-job-status>running<\/span>/);
    expect(row).toContain("arxiv");
    expect(row).toContain("2403.01234v2");
    expect(row).toContain(
      `<code>${(await lab.governance.downloads.jobs.get(jobId))?.destinationPath}</code>`,
    );
    expect(row).toMatch(/<progress data-job-progress/);
    expect(row).toContain(`href="/invocations/${offered.mcpInvocationId}"`);
    expect(row).toContain(`<code>${SESSION}</code>`);
    expect(row).toContain(`thread <code>${THREAD}</code>`);
    expect(row).toContain(
      `<span data-job-action="cancel"><form method="post" action="/jobs/${jobId}/cancel"`,
    );
    expect(row).toContain(
      `<span data-job-action="retry" hidden><form method="post" action="/jobs/${jobId}/retry"`,
    );
  });

  test("the event stream sends a snapshot, then each saved change of the job (bytes, then its end)", async () => {
    const release = gate();
    const { jobId, outcome } = await startHeldDownload(release);
    const events = eventReader(await fetch(`${writable.url}/jobs/events`));
    const snapshot = await events.next();
    expect(snapshot.event).toBe("snapshot");
    expect(JSON.parse(snapshot.data).jobs).toEqual([
      expect.objectContaining({ jobId, status: "running", cancellable: true, retryable: false }),
    ]);

    // The bytes of the first part, saved in the shared job store as a transfer's progress tick saves
    // them (in this process or another).
    const firstPart = Math.ceil(PDF.length / CHUNKS);
    const stored = await lab.governance.downloads.jobs.get(jobId);
    if (stored === undefined) throw new Error("no job");
    await lab.governance.downloads.jobs.update({
      ...stored,
      bytesDownloaded: firstPart,
      updatedAt: stored.updatedAt + 1,
    });
    const moved = await events.next();
    expect(moved.event).toBe("job");
    expect(jobOf(moved)).toMatchObject({ jobId, status: "running", bytesDownloaded: firstPart });

    release.open();
    const seen: SseEvent[] = [];
    const end = await events.until((event) => jobOf(event).status === "completed", seen);
    expect(jobOf(end)).toMatchObject({
      jobId,
      bytesDownloaded: PDF.length,
      tone: "ok",
      cancellable: false,
      retryable: false,
      error: null,
    });
    const bytes = seen.map((event) => jobOf(event).bytesDownloaded as number);
    expect(bytes).toEqual([...bytes].sort((a, b) => a - b));
    expect((await outcome).status).toBe("completed");

    const row = rowOf(await page(writable), jobId);
    expect(row).toContain('data-status="completed"');
    expect(row).toContain(`<span data-job-action="cancel" hidden>`);
    expect(row).toContain(`<span data-job-action="retry" hidden>`);
    expect(row).toContain(`value="${PDF.length}"`);
    await events.cancel();
  });

  test("closing the console ends its open streams (the handler mounted in an app's own server)", async () => {
    const handler = createConsoleHandler({ governance: lab.governance });
    const server = createServer((request, response) => handler(request, response));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const events = eventReader(await fetch(`http://127.0.0.1:${port}/jobs/events`));
      expect((await events.next()).event).toBe("snapshot");
      handler.close();
      await events.ended();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test("Cancel: refused without the CSRF token and on a read-only console (the job runs on); with it the job ends cancelled and the change is audited", async () => {
    const release = gate();
    const { jobId, outcome } = await startHeldDownload(release);
    const token = csrfOf(await page(writable));
    const status = async () => (await lab.governance.downloads.jobs.get(jobId))?.status;

    expect((await post(writable.url, `/jobs/${jobId}/cancel`, {})).status).toBe(403);
    expect((await post(writable.url, `/jobs/${jobId}/cancel`, { _csrf: "forged" })).status).toBe(403);
    const readOnlyPage = await page(readOnly);
    expect(rowOf(readOnlyPage, jobId)).toContain('title="Read-only console: start it with --writable"');
    const refused = await post(readOnly.url, `/jobs/${jobId}/cancel`, { _csrf: csrfOf(readOnlyPage) });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("read-only");
    expect(await status()).toBe("running");
    expect(await consoleRows()).toEqual([]);

    // An opaque origin is refused; the console's own form as Chromium posts it is not.
    const opaque = await post(writable.url, `/jobs/${jobId}/cancel`, { _csrf: token }, { origin: "null" });
    expect(opaque.status).toBe(403);
    expect(await status()).toBe("running");
    const cancelled = await post(
      writable.url,
      `/jobs/${jobId}/cancel`,
      { _csrf: token },
      BROWSER_FORM_HEADERS,
    );
    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.get("location")).toBe("/jobs?done=cancelled");
    expect(await status()).toBe("cancelled");
    expect((await outcome).status).toBe("cancelled");
    const [row, ...more] = await consoleRows();
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      sessionId: SESSION,
      sourceId: "arxiv",
      toolId: "artifact_download",
      action: "cancel_job",
      resource: `job:${jobId}`,
      decisionSource: "operator_console",
      epoch: await lab.governance.permissions.epoch(SESSION),
    });

    const after = await page(writable, "/jobs?done=cancelled");
    expect(after).toContain('<p class="notice" role="status">The job was cancelled.</p>');
    expect(rowOf(after, jobId)).toContain(`<span data-job-action="retry"><form`);
    // A job that has ended is not cancelled again, and an unknown job is not found.
    const again = await post(writable.url, `/jobs/${jobId}/cancel`, { _csrf: token });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("only a job that has not ended can be cancelled");
    expect((await post(writable.url, "/jobs/no-such-job/cancel", { _csrf: token })).status).toBe(404);
    expect(await consoleRows()).toHaveLength(1);
  });

  test("the invocation that offered the candidate lists it, with the job made from it", async () => {
    const release = gate();
    const { jobId, offered, outcome } = await startHeldDownload(release);
    release.open();
    expect((await outcome).status).toBe("completed");
    const html = await page(writable, `/invocations/${offered.mcpInvocationId}`);
    const table = /<table id="candidates">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? "";
    expect(table).toContain(`<tr data-id="${offered.candidateId}">`);
    expect(table).toMatch(/href="https:\/\/arxiv\.org\/pdf\/2403\.01234v2/);
    expect(table).toContain(`href="/jobs#job-${jobId}"`);
    expect(table).toContain('<span class="badge badge-ok">completed</span>');
  });

  test("Cancel from a console in another process marks the row; the process running the job stops it and writes its one row", async () => {
    const release = gate();
    const { jobId, outcome } = await startHeldDownload(release);
    // The console's own runtime over the same data directory (jobs.sqlite), as `sciencegate console` opens it.
    const other = await createGovernance({
      config: { servers: [] },
      mcp: { pool: createInMemoryPool({}) },
      storage: {
        dataDir: lab.dataDir,
        ledger: new MemoryLedger(),
        contentStore: new MemoryContentStore(),
        grants: new MemoryGrantStore(),
      },
    });
    const remote = await serveConsole({ governance: other, port: 0, writable: true });
    try {
      expect(other.downloads.isRunning(jobId)).toBe(false);
      const html = await page(remote);
      expect(rowOf(html, jobId)).toContain('data-status="running"');
      const response = await post(
        remote.url,
        `/jobs/${jobId}/cancel`,
        { _csrf: csrfOf(html) },
        BROWSER_FORM_HEADERS,
      );
      expect(response.status).toBe(303);
      // The running process notices at its next progress tick (1 s) and ends the job itself.
      const result = await outcome;
      expect(result.status).toBe("cancelled");
      const rows = (await lab.governance.ledger.query({ sessionId: SESSION })).filter(
        (row) => row.toolId === "artifact_download",
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]?.error?.code).toBe("CANCELLED");
      // The console's runtime wrote no download row of its own, only its audit of the change.
      expect((await other.ledger.query({})).length).toBe(0);
      const audit = (await other.ledger.listAuthorizations({ sessionId: SESSION })).map(
        (row) => row.decisionSource,
      );
      expect(audit).toEqual(["operator_console"]);
    } finally {
      await remote.close();
      await other.close();
    }
  });

  test("Retry answers at once while the transfer runs, the job completes later, and the retry is audited", async () => {
    const { jobId, outcome } = await startHeldDownload(gate());
    await lab.governance.downloads.cancel(jobId);
    expect((await outcome).status).toBe("cancelled");
    const token = csrfOf(await page(writable));

    // The read-only console refuses; the job stays cancelled.
    const readOnlyToken = csrfOf(await page(readOnly));
    expect((await post(readOnly.url, `/jobs/${jobId}/retry`, { _csrf: readOnlyToken })).status).toBe(403);
    expect((await post(writable.url, `/jobs/${jobId}/retry`, {})).status).toBe(403);
    expect((await lab.governance.downloads.jobs.get(jobId))?.status).toBe("cancelled");

    // The publisher holds the new transfer after its first part: the answer cannot have waited for it.
    const release = gate();
    const firstPart = gate();
    lab.publisher.pace = () => {
      firstPart.open();
      return release.promise;
    };
    const retried = await post(writable.url, `/jobs/${jobId}/retry`, { _csrf: token });
    expect(retried.status).toBe(303);
    expect(retried.headers.get("location")).toBe("/jobs?done=retrying");
    expect(["queued", "running"]).toContain((await lab.governance.downloads.jobs.get(jobId))?.status);
    expect((await consoleRows()).map((row) => [row.action, row.resource])).toEqual([
      ["retry_job", `job:${jobId}`],
    ]);

    await firstPart.promise;
    const events = eventReader(await fetch(`${writable.url}/jobs/events`));
    release.open();
    const end = await events.until(
      (event) =>
        (event.event === "snapshot" ? JSON.parse(event.data).jobs[0] : jobOf(event))?.status === "completed",
    );
    expect(end.data).toContain(`"bytesDownloaded":${PDF.length}`);
    await events.cancel();
    const job = await lab.governance.downloads.jobs.get(jobId);
    expect(job).toMatchObject({ status: "completed", bytesDownloaded: PDF.length });

    // Only a failed or cancelled job is retried; nothing more is recorded.
    const again = await post(writable.url, `/jobs/${jobId}/retry`, { _csrf: token });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("only a failed or cancelled job can be retried");
    expect((await post(writable.url, "/jobs/no-such-job/retry", { _csrf: token })).status).toBe(404);
    expect(await consoleRows()).toHaveLength(1);
  });

  test("one client holds at most 8 event streams: its ninth replaces its oldest, which is told `replaced` and ends", async () => {
    const port = new URL(writable.url).port;
    const open: RawStream[] = [];
    for (let i = 0; i < 9; i++) {
      const stream = await rawStream(port, "127.0.0.1");
      expect(stream.status).toBe(200);
      await vi.waitFor(() => expect(stream.events()).toContain("snapshot"));
      open.push(stream);
    }
    await open[0]?.ended;
    expect(open[0]?.events()).toEqual(["snapshot", "replaced"]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(open.slice(1).filter((stream) => stream.isEnded())).toEqual([]);
    for (const stream of open) stream.close();
  });

  test("the 32 places are shared between clients: a newcomer takes the oldest stream of the client holding most; one holding as many as any other is refused 503", async () => {
    const port = new URL(writable.url).port;
    const streams: RawStream[] = [];
    try {
      // Four loopback addresses fill the 32 places, 8 each.
      for (const address of ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"]) {
        for (let i = 0; i < 8; i++) {
          const stream = await rawStream(port, address);
          expect(stream.status).toBe(200);
          streams.push(stream);
        }
      }
      // A fifth client is not locked out: each of its streams takes a place from a largest holder.
      for (let i = 0; i < 4; i++) {
        const stream = await rawStream(port, "127.0.0.5");
        expect(stream.status).toBe(200);
        streams.push(stream);
      }
      await vi.waitFor(() =>
        expect(streams.filter((stream) => stream.events().includes("replaced"))).toHaveLength(4),
      );
      const replacedFrom = streams.filter((s) => s.events().includes("replaced")).map((s) => s.address);
      expect(new Set(replacedFrom)).toEqual(new Set(["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"]));
      // Now every client holds 7 or 4: one more from a client holding 7 finds nobody holding more.
      const refused = await rawStream(port, "127.0.0.1");
      expect(refused.status).toBe(503);
      expect(refused.body()).toContain("32 live job streams are open already");
      // Another console over the same runtime counts its own.
      const other = eventReader(await fetch(`${readOnly.url}/jobs/events`));
      expect((await other.next()).event).toBe("snapshot");
      await other.cancel();
      // A client that goes away gives its places back.
      for (const stream of streams) stream.close();
      await vi.waitFor(async () => {
        const again = await rawStream(port, "127.0.0.1");
        again.close();
        expect(again.status).toBe(200);
      });
    } finally {
      for (const stream of streams) stream.close();
    }
  });

  test("eight open streams read the job store once per interval, not eight times", async () => {
    const downloads = lab.governance.downloads;
    const list = downloads.list.bind(downloads);
    let reads = 0;
    downloads.list = () => {
      reads++;
      return list();
    };
    const open = [];
    for (let i = 0; i < 8; i++) {
      const events = eventReader(await fetch(`${writable.url}/jobs/events`));
      expect((await events.next()).event).toBe("snapshot");
      open.push(events);
    }
    const before = reads;
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const polls = reads - before;
    const intervals = Math.ceil((performance.now() - started) / 500);
    expect(polls).toBeGreaterThan(0);
    expect(polls).toBeLessThanOrEqual(intervals + 1); // one stream per read would be eight per interval
    for (const events of open) await events.cancel();
  });

  test("a stream with nothing to say for 15 s sends a heartbeat comment (proxies keep it open)", async () => {
    const clock = new ManualClock(Date.now());
    const quiet = await serveConsole({ governance: lab.governance, port: 0, clock });
    try {
      const events = eventReader(await fetch(`${quiet.url}/jobs/events`));
      expect((await events.next()).event).toBe("snapshot");
      const ended = events.next().then(
        () => "an event",
        () => "ended",
      );
      // Each step wakes the shared reader once; no job changes, so only the heartbeat is written.
      for (let i = 0; i < HEARTBEAT_MS / JOB_POLL_MS + 1; i++) {
        await clock.advance(JOB_POLL_MS);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await vi.waitFor(() => expect(events.comments).toEqual([": heartbeat"])); // it crosses the socket
      await quiet.close();
      expect(await ended).toBe("ended");
      expect(events.comments).toEqual([": heartbeat"]);
    } finally {
      await quiet.close();
    }
  });

  test("with no job the page says how one starts; a bad page number is a clear 400", async () => {
    expect(await page(writable)).toContain("No download jobs yet");
    const bad = await fetch(`${writable.url}/jobs?page=0`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("The page parameter must be a whole number from 1");
  });
});

/** A `/jobs/events` stream read raw, from a chosen loopback address (a distinct client to the console). */
interface RawStream {
  address: string;
  status: number;
  /** The event names received so far. */
  events(): string[];
  body(): string;
  isEnded(): boolean;
  ended: Promise<void>;
  close(): void;
}

function rawStream(port: string, address: string): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, path: "/jobs/events", localAddress: address, agent: false },
      (res) => {
        let text = "";
        let isEnded = false;
        const ended = new Promise<void>((done) =>
          res.once("close", () => {
            isEnded = true;
            done();
          }),
        );
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString("utf8");
        });
        res.on("error", () => undefined);
        resolve({
          address,
          status: res.statusCode ?? 0,
          events: () => [...text.matchAll(/^event: (\w+)$/gm)].map((match) => match[1] as string),
          body: () => text,
          isEnded: () => isEnded,
          ended,
          close: () => req.destroy(),
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}
