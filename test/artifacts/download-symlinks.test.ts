/**
 * Downloads never write, truncate or chmod anything outside the workspace, whatever symbolic or hard
 * links are planted in the staging folder or on the destination path, before or during a transfer.
 */
import { createHash } from "node:crypto";
import {
  chmod,
  link,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { callJobId } from "../../src/artifacts/download-manager.js";
import type { DownloadRequest } from "../../src/artifacts/download-types.js";
import { createBench, makeJob, PDF, stalledBody } from "./download-harness.js";

const URL_1 = "https://arxiv.org/pdf/2401.00001v1";
const DESTINATION = "downloads/arxiv/2401.00001v1.pdf";
const sha = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const call: DownloadRequest = {
  mcpInvocationId: "inv-1",
  candidateId: "c1",
  sessionId: "s1",
  threadId: "t1",
  toolCallId: "call-1",
};
/** The staging file name the download code used before staging names were random. */
const OLD_STAGING_NAME = `${callJobId("t1", "call-1")}.part`;
/** A staging name a crashed run recorded and someone learned. */
const LEAKED = "0123456789abcdef0123456789abcdef.part";

type Bench = Awaited<ReturnType<typeof createBench>>;

/** A folder outside the workspace holding a file the download must never touch. */
async function outsideWithVictim() {
  const dir = await mkdtemp(join(tmpdir(), "sciencegate-outside-"));
  const victim = join(dir, "victim.txt");
  await writeFile(victim, "precious");
  await chmod(victim, 0o644);
  return { dir, victim };
}

async function expectVictimUntouched(dir: string, victim: string) {
  expect(await readdir(dir)).toEqual(["victim.txt"]);
  expect(await readFile(victim, "utf8")).toBe("precious");
  expect((await stat(victim)).mode & 0o777).toBe(0o644);
}

/**
 * Serves URL_1 as 10 bytes, then holds the rest until `release()`. `firstBytes` resolves once those
 * 10 bytes are staged; the download's own promise settling first wins the race too.
 */
function pausedTransfer(bench: Bench, request: DownloadRequest) {
  let release: () => void = () => {};
  const rest = new Promise<Uint8Array>((resolve) => {
    release = () => resolve(PDF.slice(10));
  });
  bench.routes.set(URL_1, () => new Response(stalledBody(PDF.slice(0, 10), rest)));
  let staged: () => void = () => {};
  const firstBytes = new Promise<void>((resolve) => {
    staged = resolve;
  });
  const done = bench.download({
    ...request,
    onProgress: (p) => p.bytesDownloaded > 0 && staged(),
  });
  const paused = Promise.race([
    firstBytes.then(() => "paused" as const),
    done.then(() => "settled" as const),
  ]);
  return { done, paused, release };
}

describe("download staging and placement are symlink-safe", () => {
  test("a .staging folder that is a symbolic link out of the workspace is refused before any byte", async () => {
    const bench = await createBench();
    const { dir, victim } = await outsideWithVictim();
    await mkdir(bench.workspaceDir, { recursive: true });
    await symlink(dir, join(bench.workspaceDir, ".staging"));
    const transfer = pausedTransfer(bench, call);
    await transfer.paused;
    const during = await readdir(dir);
    transfer.release();
    const result = await transfer.done;
    expect(during).toEqual(["victim.txt"]);
    expect(result).toMatchObject({ status: "failed", error: { code: "INVALID_INPUT" } });
    expect(result.error?.message).toMatch(/'\.staging' is a symbolic link/);
    expect(bench.seen).toEqual([]);
    await expectVictimUntouched(dir, victim);
    await expect(lstat(join(bench.workspaceDir, DESTINATION))).rejects.toThrow();
  });

  test("a symbolic link planted at the predictable staging path is never followed", async () => {
    const bench = await createBench();
    const { dir, victim } = await outsideWithVictim();
    const staging = join(bench.workspaceDir, ".staging");
    await mkdir(staging, { recursive: true });
    const jobId = callJobId("t1", "call-1");
    for (const name of [OLD_STAGING_NAME, jobId, `${jobId}.tmp`, `${jobId}.partial`]) {
      await symlink(victim, join(staging, name));
    }
    bench.serve(URL_1, PDF);
    const result = await bench.download(call);
    await expectVictimUntouched(dir, victim);
    expect(result).toMatchObject({ jobId, status: "completed", actualChecksum: sha(PDF) });
    const final = await lstat(join(bench.workspaceDir, DESTINATION));
    expect(final.isFile() && final.nlink === 1 && (final.mode & 0o777) === 0o400).toBe(true);
    expect(new Uint8Array(await readFile(join(bench.workspaceDir, DESTINATION)))).toEqual(PDF);
  });

  test("the staging file name cannot be guessed from the job id", async () => {
    const names: string[] = [];
    for (let run = 0; run < 2; run++) {
      const bench = await createBench();
      const transfer = pausedTransfer(bench, call);
      expect(await transfer.paused).toBe("paused");
      names.push(...(await readdir(join(bench.workspaceDir, ".staging"))));
      transfer.release();
      expect(await transfer.done).toMatchObject({ status: "completed" });
      expect(await readdir(join(bench.workspaceDir, ".staging"))).toEqual([]);
    }
    expect(names).toHaveLength(2);
    expect(names[0]).not.toBe(names[1]);
    expect(names).not.toContain(OLD_STAGING_NAME);
  });

  test.each(["symbolic link", "hard link"])(
    "resuming a crashed job whose staging file became a %s to an outside file is refused",
    async (kind) => {
      const bench = await createBench();
      const { dir, victim } = await outsideWithVictim();
      const staging = join(bench.workspaceDir, ".staging");
      await mkdir(staging, { recursive: true });
      const jobId = callJobId("t1", "call-1");
      // A crashed run left this job row; its staging name leaked, and both names were replaced.
      await bench.manager.jobs.create({
        ...makeJob(jobId, "running"),
        threadId: "t1",
        toolCallId: "call-1",
        destinationPath: DESTINATION,
        finalPath: join(bench.workspaceDir, DESTINATION),
        stagingName: LEAKED,
        bytesDownloaded: 8,
        attempts: 1,
      });
      for (const name of [LEAKED, OLD_STAGING_NAME]) {
        if (kind === "symbolic link") await symlink(victim, join(staging, name));
        else await link(victim, join(staging, name));
      }
      bench.serve(URL_1, PDF);
      const result = await bench.download(call);
      await expectVictimUntouched(dir, victim);
      expect(result).toMatchObject({ status: "failed", error: { code: "INVALID_INPUT" } });
      expect(result.error?.message).toMatch(
        kind === "symbolic link" ? /is a symbolic link/ : /has \d+ hard links/,
      );
      expect(bench.seen).toEqual([]);
      await expect(lstat(join(bench.workspaceDir, DESTINATION))).rejects.toThrow();
    },
  );

  test("a destination folder swapped for a symbolic link during the transfer is refused", async () => {
    const bench = await createBench();
    const { dir, victim } = await outsideWithVictim();
    const papers = join(bench.workspaceDir, "papers");
    await mkdir(papers, { recursive: true });
    const transfer = pausedTransfer(bench, { ...call, destinationPath: "papers/x.pdf" });
    expect(await transfer.paused).toBe("paused");
    await rename(papers, join(bench.workspaceDir, "papers-moved"));
    await symlink(dir, papers);
    transfer.release();
    const result = await transfer.done;
    expect(result).toMatchObject({ status: "failed", error: { code: "INVALID_INPUT" } });
    expect(result.error?.message).toMatch(/'papers' is a symbolic link/);
    await expectVictimUntouched(dir, victim);
    expect(await readdir(join(bench.workspaceDir, "papers-moved"))).toEqual([]);
    expect(await readdir(join(bench.workspaceDir, ".staging"))).toEqual([]);
  });

  test("a .staging folder swapped mid-transfer for a link to a folder holding a file of the staging name is refused", async () => {
    const bench = await createBench();
    const outside = await mkdtemp(join(tmpdir(), "sciencegate-outside-"));
    const staging = join(bench.workspaceDir, ".staging");
    const transfer = pausedTransfer(bench, call);
    expect(await transfer.paused).toBe("paused");
    const [name] = await readdir(staging);
    await rename(staging, join(bench.workspaceDir, "staging-moved"));
    const victim = join(outside, name as string);
    await writeFile(victim, "precious");
    await chmod(victim, 0o644);
    await symlink(outside, staging);
    transfer.release();
    const result = await transfer.done;
    expect(result).toMatchObject({ status: "failed", error: { code: "INVALID_INPUT" } });
    expect(result.error?.message).toMatch(/its folder moved/);
    expect(await readdir(outside)).toEqual([name]);
    expect(await readFile(victim, "utf8")).toBe("precious");
    expect((await stat(victim)).mode & 0o777).toBe(0o644);
    await expect(lstat(join(bench.workspaceDir, DESTINATION))).rejects.toThrow();
  });

  test("a crashed job resumes from its recorded staging file with a Range request", async () => {
    const bench = await createBench();
    const jobId = callJobId("t1", "call-1");
    await bench.manager.jobs.create({
      ...makeJob(jobId, "running"),
      threadId: "t1",
      toolCallId: "call-1",
      destinationPath: DESTINATION,
      finalPath: join(bench.workspaceDir, DESTINATION),
      stagingName: "3f9c1d2e8a7b6c5d3f9c1d2e8a7b6c5d.part",
      bytesDownloaded: 1000,
      attempts: 1,
    });
    await mkdir(join(bench.workspaceDir, ".staging"), { recursive: true });
    await writeFile(
      join(bench.workspaceDir, ".staging", "3f9c1d2e8a7b6c5d3f9c1d2e8a7b6c5d.part"),
      PDF.slice(0, 1000),
    );
    bench.serve(URL_1, PDF);
    const result = await bench.download(call);
    expect(result).toMatchObject({ jobId, status: "completed", actualChecksum: sha(PDF) });
    expect(bench.seen.map((r) => r.range)).toEqual(["bytes=1000-"]);
    expect(new Uint8Array(await readFile(result.finalPath))).toEqual(PDF);
    expect(await readdir(join(bench.workspaceDir, ".staging"))).toEqual([]);
  });
});
