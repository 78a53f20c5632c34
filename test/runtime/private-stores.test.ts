/**
 * The data directory is private to the user that runs Sciencegate: a runtime makes its folders 0700
 * and its files 0600 (a downloaded paper 0400), and tightens a data directory an earlier version left
 * readable by other users (0755 folders, 0644 files) when it opens it. Checked with real stat modes.
 */

import { chmod, lstat, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { downloadArtifact } from "../../src/artifacts/artifact-download-tool.js";
import type { DownloadFetch } from "../../src/artifacts/download-fetch.js";
import { extractDownloadedPaper } from "../../src/artifacts/paper-extraction.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { makeCandidate, publicLookup, recordCandidateInvocation } from "../artifacts/download-harness.js";
import { makePdf } from "../fixtures/pdf/make-pdf.js";

const isPosix = process.platform !== "win32";
const scratch = await mkdtemp(join(tmpdir(), "sciencegate-private-stores-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));
let governance: Governance | undefined;
afterEach(async () => {
  await governance?.close();
  governance = undefined;
});

const PAPER = makePdf([["A private paper"]]);
/** Larger than the ledger keeps inline: a CAS file. */
const LARGE = "x".repeat(128 * 1024);

async function open(dataDir: string): Promise<Governance> {
  const fetch: DownloadFetch = async () =>
    new Response(PAPER, { headers: { "content-length": String(PAPER.length) } });
  governance = await createGovernance({
    config: { servers: [] },
    manifests: { builtin: true },
    storage: { dataDir },
    permissions: { enforce: false },
    downloads: { lookup: publicLookup, fetch },
  });
  return governance;
}

/** Every path below `root` (the root included) with its permission bits, links not followed. */
async function modes(root: string): Promise<Map<string, { mode: number; kind: "dir" | "file" | "link" }>> {
  const found = new Map<string, { mode: number; kind: "dir" | "file" | "link" }>();
  const visit = async (path: string): Promise<void> => {
    const info = await lstat(path);
    const kind = info.isSymbolicLink() ? "link" : info.isDirectory() ? "dir" : "file";
    found.set(relative(root, path) || ".", { mode: info.mode & 0o777, kind });
    if (kind === "dir") for (const name of await readdir(path)) await visit(join(path, name));
  };
  await visit(root);
  return found;
}

/** Fails unless no group or other bit is set anywhere below `root`; returns the modes. */
async function expectPrivate(root: string) {
  const all = await modes(root);
  const open = [...all].filter(([, { mode, kind }]) => kind !== "link" && (mode & 0o077) !== 0);
  expect(open.map(([path, { mode }]) => `${path} ${mode.toString(8)}`)).toEqual([]);
  return all;
}

/** A governed download of one arXiv PDF and its extraction, made in session s1. */
async function downloadAndExtract(g: Governance) {
  await recordCandidateInvocation(
    { ledgerWriter: g.ledgerWriter, store: g.store },
    {
      invocationId: "inv-1",
      sessionId: "s1",
      toolId: "prepare_paper_download",
      candidates: [makeCandidate()],
    },
  );
  const download = await downloadArtifact({
    governance: g,
    mcpInvocationId: "inv-1",
    candidateId: "c1",
    sessionId: "s1",
  });
  expect(download.status).toBe("completed");
  const extraction = await extractDownloadedPaper(g, { artifactJobId: download.jobId, sessionId: "s1" });
  return { download, extraction };
}

describe.runIf(isPosix)("the data directory is private to its user", () => {
  test("a fresh data directory: folders 0700, the SQLite files with -wal and -shm 0600, CAS objects, downloads and extractions for this user alone", async () => {
    const dataDir = join(scratch, "fresh", "nested", "data");
    const g = await open(dataDir);
    const large = await g.store.put(LARGE);
    const { download, extraction } = await downloadAndExtract(g);

    // While the runtime is open, SQLite's -wal and -shm exist beside each database.
    const all = await expectPrivate(dataDir);
    for (const db of ["ledger.sqlite", "grants.sqlite", "jobs.sqlite"]) {
      expect(all.get(db)?.mode).toBe(0o600);
      expect(all.get(`${db}-wal`)?.mode).toBe(0o600);
      expect(all.get(`${db}-shm`)?.mode).toBe(0o600);
    }
    for (const [path, { mode, kind }] of all) if (kind === "dir") expect([path, mode]).toEqual([path, 0o700]);
    // Parents the runtime made on the way are private too.
    expect((await lstat(join(scratch, "fresh", "nested"))).mode & 0o777).toBe(0o700);
    expect(all.get(`cas/sha256/${large.sha256.slice(0, 2)}/${large.sha256}`)?.mode).toBe(0o600);
    expect(all.get(relative(dataDir, download.finalPath))?.mode).toBe(0o400);
    expect(all.get(relative(dataDir, extraction.textPath))?.mode).toBe(0o600);
    expect(all.get(relative(dataDir, extraction.manifestPath))?.mode).toBe(0o600);
  });

  test("a data directory an earlier version left 0755/0644 is tightened when a runtime opens it; links are not followed", async () => {
    const dataDir = join(scratch, "upgrade");
    // Made by a runtime, then loosened as an earlier version and a 022 umask left it.
    const first = await open(dataDir);
    const large = await first.store.put(LARGE);
    const { download, extraction } = await downloadAndExtract(first);
    await first.close();
    governance = undefined;
    const outside = join(scratch, "outside.txt");
    await writeFile(outside, "not Sciencegate's");
    await chmod(outside, 0o644);
    await symlink(outside, join(dataDir, "workspace", "link-to-outside"));
    const stray = join(dataDir, "workspace", "notes");
    await mkdir(stray);
    await writeFile(join(stray, "todo.md"), "a user's file in the workspace");
    for (const [path, { kind }] of await modes(dataDir)) {
      if (kind === "link") continue;
      const full = join(dataDir, path);
      await chmod(full, kind === "dir" ? 0o755 : full === download.finalPath ? 0o444 : 0o644);
    }
    for (const db of ["ledger.sqlite", "grants.sqlite", "jobs.sqlite"]) {
      // A -wal and -shm left by a crash, readable by everyone.
      for (const suffix of ["-wal", "-shm"]) {
        await writeFile(join(dataDir, `${db}${suffix}`), "", { flag: "a" });
        await chmod(join(dataDir, `${db}${suffix}`), 0o644);
      }
    }
    const before = await modes(dataDir);
    expect(before.get(".")?.mode).toBe(0o755);
    expect(before.get("ledger.sqlite")?.mode).toBe(0o644);
    expect(before.get(`cas/sha256/${large.sha256.slice(0, 2)}/${large.sha256}`)?.mode).toBe(0o644);

    await open(dataDir);
    const after = await expectPrivate(dataDir);
    expect(after.get(".")?.mode).toBe(0o700);
    for (const db of ["ledger.sqlite", "grants.sqlite", "jobs.sqlite"]) {
      for (const suffix of ["", "-wal", "-shm"]) expect(after.get(`${db}${suffix}`)?.mode).toBe(0o600);
    }
    expect(after.get("cas/sha256")?.mode).toBe(0o700);
    expect(after.get(`cas/sha256/${large.sha256.slice(0, 2)}/${large.sha256}`)?.mode).toBe(0o600);
    expect(after.get(relative(dataDir, download.finalPath))?.mode).toBe(0o400);
    expect(after.get(relative(dataDir, extraction.textPath))?.mode).toBe(0o600);
    expect(after.get("workspace/notes/todo.md")?.mode).toBe(0o600);
    // The link's target is outside the data directory: untouched.
    expect(after.get("workspace/link-to-outside")?.kind).toBe("link");
    expect((await lstat(outside)).mode & 0o777).toBe(0o644);
  });
});
