import { mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { FileContentStore, MemoryContentStore } from "../../../src/governance/audit/content-store.js";
import { resolveDataDir } from "../../../src/runtime/data-dir.js";
import { describeContentStoreConformance } from "../../../src/testing/conformance/content-store-conformance.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-cas-"));
let stores = 0;
const freshRoot = () => join(scratch, `store-${++stores}`);
afterAll(() => rm(scratch, { recursive: true, force: true }));

describeContentStoreConformance("MemoryContentStore", () => new MemoryContentStore());
describeContentStoreConformance("FileContentStore", () => new FileContentStore(freshRoot()));

/** Every file under `dir`, as paths relative to it. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

describe("FileContentStore on disk", () => {
  test("stores objects at sha256/<2 hex>/<64 hex> with the exact bytes", async () => {
    const root = freshRoot();
    const { sha256 } = await new FileContentStore(root).put("abc");
    expect(await listFiles(root)).toEqual([join("sha256", sha256.slice(0, 2), sha256)]);
    expect(await readFile(join(root, "sha256", sha256.slice(0, 2), sha256), "utf8")).toBe("abc");
  });

  test("atomic writes leave no temp files, even under concurrency", async () => {
    const root = freshRoot();
    const store = new FileContentStore(root);
    const refs = await Promise.all(
      Array.from({ length: 60 }, (_, i) => store.putJson({ i: i % 30, payload: "x".repeat(1000) })),
    );
    const files = await listFiles(root);
    expect(files).toHaveLength(30);
    expect(files.every((f) => /^sha256\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(f))).toBe(true);
    expect(await store.verifyAll()).toEqual([]);
    expect(new Set(refs.map((r) => r.ref)).size).toBe(30);
  });

  test("a failed write removes its temp file and reports the error", async () => {
    const root = freshRoot();
    const store = new FileContentStore(root);
    const { sha256 } = await new MemoryContentStore().put("blocked");
    // A directory squatting on the object's path makes the final rename fail.
    const target = join(root, "sha256", sha256.slice(0, 2), sha256);
    await mkdir(join(target, "inside"), { recursive: true });
    await expect(store.put("blocked")).rejects.toThrow();
    expect(await listFiles(root)).toEqual([]);
  });

  test("dedup keeps one file and does not rewrite it", async () => {
    const root = freshRoot();
    const store = new FileContentStore(root);
    const first = await store.put("same");
    const path = join(root, "sha256", first.sha256.slice(0, 2), first.sha256);
    const past = new Date("2020-01-01T00:00:00Z");
    await utimes(path, past, past);
    const second = await store.put(new TextEncoder().encode("same"));
    expect(second).toEqual(first);
    expect(await listFiles(root)).toHaveLength(1);
    expect((await stat(path)).mtime.toISOString()).toBe(past.toISOString());
  });

  test("verify and verifyAll detect a corrupted object (one flipped byte)", async () => {
    const root = freshRoot();
    const store = new FileContentStore(root);
    const good = await store.putJson({ keep: true });
    const bad = await store.putJson({ title: "CRISPR screens", year: 2024 });
    const path = join(root, "sha256", bad.sha256.slice(0, 2), bad.sha256);
    const bytes = await readFile(path);
    bytes[5] = (bytes[5] ?? 0) ^ 0x01;
    await writeFile(path, bytes);
    expect(await store.verify(bad.ref)).toBe(false);
    expect(await store.verify(good.ref)).toBe(true);
    expect(await store.verifyAll()).toEqual([bad.ref]);
  });

  test("verifyAll reports an object filed under the wrong shard, and ignores temp files", async () => {
    const root = freshRoot();
    const store = new FileContentStore(root);
    const { sha256 } = await store.put("abc");
    const wrongShard = sha256.startsWith("00") ? "01" : "00";
    await mkdir(join(root, "sha256", wrongShard), { recursive: true });
    await writeFile(join(root, "sha256", wrongShard, sha256), "abc");
    await writeFile(join(root, "sha256", sha256.slice(0, 2), `.${sha256}.1.x.tmp`), "partial");
    expect(await store.verifyAll()).toEqual([`sha256:${sha256}`]);
  });

  test("verifyAll of a store that was never written is empty", async () => {
    expect(await new FileContentStore(freshRoot()).verifyAll()).toEqual([]);
  });

  test("putting the same content again repairs a truncated object", async () => {
    const root = freshRoot();
    const store = new FileContentStore(root);
    const { ref, sha256 } = await store.put("complete payload");
    await truncate(join(root, "sha256", sha256.slice(0, 2), sha256), 4);
    expect(await store.verify(ref)).toBe(false);
    await store.put("complete payload");
    expect(await store.verify(ref)).toBe(true);
  });

  test("a new store on the same root reads earlier objects (persistence across restart)", async () => {
    const root = freshRoot();
    const { ref } = await new FileContentStore(root).putJson({ persisted: 1 });
    expect(await new FileContentStore(root).getJson(ref)).toEqual({ persisted: 1 });
  });
});

describe("resolveDataDir", () => {
  test.each<[string, Parameters<typeof resolveDataDir>[0], string]>([
    [
      "the explicit option first",
      { dataDir: "/data/sg", env: { SCIENCEGATE_HOME: "/env/sg" }, cwd: "/w" },
      "/data/sg",
    ],
    ["a relative option against cwd", { dataDir: "state", env: {}, cwd: "/w" }, "/w/state"],
    ["SCIENCEGATE_HOME next", { env: { SCIENCEGATE_HOME: "/env/sg" }, cwd: "/w" }, "/env/sg"],
    ["a relative SCIENCEGATE_HOME against cwd", { env: { SCIENCEGATE_HOME: "sg" }, cwd: "/w" }, "/w/sg"],
    ["<cwd>/.sciencegate by default", { env: {}, cwd: "/w" }, "/w/.sciencegate"],
    ["empty values as absent", { dataDir: "", env: { SCIENCEGATE_HOME: " " }, cwd: "/w" }, "/w/.sciencegate"],
  ])("takes %s", (_label, options, expected) => {
    expect(resolveDataDir(options)).toBe(expected);
  });

  test("defaults to the process environment and working directory", () => {
    const expected = resolve(process.cwd(), process.env.SCIENCEGATE_HOME || ".sciencegate");
    expect(resolveDataDir()).toBe(expected);
  });
});
