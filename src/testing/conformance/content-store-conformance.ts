/**
 * The behaviour every `ContentStore` must show. Another backend (S3, Postgres large objects, ...) runs
 * this suite with its own factory to prove it can replace the file store.
 */
import { describe, expect, test } from "vitest";
import { sha256Hex } from "../../core/index.js";
import type { ContentStore } from "../../governance/audit/index.js";

const ABC_SHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const MISSING = `sha256:${"0".repeat(64)}`;
const MALFORMED = [
  ["empty", ""],
  ["no algorithm", ABC_SHA256],
  ["other algorithm", `md5:${ABC_SHA256}`],
  ["upper-case hex", `sha256:${ABC_SHA256.toUpperCase()}`],
  ["63 digits", `sha256:${ABC_SHA256.slice(1)}`],
  ["65 digits", `sha256:${ABC_SHA256}0`],
  ["path traversal", "sha256:../../../../etc/passwd"],
  ["trailing newline", `sha256:${ABC_SHA256}\n`],
] as const;

/**
 * Registers a vitest suite that checks a `ContentStore` implementation.
 * @param name suite title, e.g. `"FileContentStore"`
 * @param factory returns a fresh, empty store for each test
 * @example
 * describeContentStoreConformance("MemoryContentStore", () => new MemoryContentStore());
 */
export function describeContentStoreConformance(
  name: string,
  factory: () => Promise<ContentStore> | ContentStore,
): void {
  describe(`${name} (ContentStore conformance)`, () => {
    test("put addresses content by the SHA-256 of its UTF-8 bytes", async () => {
      const store = await factory();
      expect(await store.put("abc")).toEqual({ ref: `sha256:${ABC_SHA256}`, sha256: ABC_SHA256, size: 3 });
      // "é" is two bytes in UTF-8: size counts bytes, not characters.
      expect((await store.put("é")).size).toBe(2);
    });

    test("bytes round-trip exactly, including NUL and 0xff", async () => {
      const store = await factory();
      const bytes = new Uint8Array([0, 1, 2, 255, 0, 128]);
      const { ref, size } = await store.put(bytes);
      expect(size).toBe(6);
      expect(Array.from(await store.get(ref))).toEqual([0, 1, 2, 255, 0, 128]);
    });

    test("empty content is storable", async () => {
      const store = await factory();
      const { ref, size } = await store.put("");
      expect(size).toBe(0);
      expect((await store.get(ref)).byteLength).toBe(0);
      expect(await store.verify(ref)).toBe(true);
    });

    test("a string and its UTF-8 bytes share one address", async () => {
      const store = await factory();
      const fromText = await store.put("grüße");
      const fromBytes = await store.put(new TextEncoder().encode("grüße"));
      expect(fromBytes).toEqual(fromText);
    });

    test("putJson stores canonical JSON, so key order does not matter", async () => {
      const store = await factory();
      const a = await store.putJson({ b: 1, a: { d: [1, 2], c: null } });
      const b = await store.putJson({ a: { c: null, d: [1, 2] }, b: 1 });
      expect(b.ref).toBe(a.ref);
      expect(a.sha256).toBe(sha256Hex('{"a":{"c":null,"d":[1,2]},"b":1}'));
      expect(await store.getJson(a.ref)).toEqual({ a: { c: null, d: [1, 2] }, b: 1 });
    });

    test.each([
      ["undefined", undefined],
      ["a function", () => 1],
      ["a bigint", 1n],
      [
        "a cycle",
        (() => {
          const cycle: Record<string, unknown> = {};
          cycle.self = cycle;
          return cycle;
        })(),
      ],
    ])("putJson of %s fails with INVALID_INPUT", async (_label, value) => {
      const store = await factory();
      await expect(store.putJson(value)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });

    test("put of something that is neither text nor bytes fails with INVALID_INPUT", async () => {
      const store = await factory();
      await expect(store.put(42 as unknown as string)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });

    test("getJson of non-JSON content fails with INVALID_INPUT", async () => {
      const store = await factory();
      const { ref } = await store.put("not json {");
      await expect(store.getJson(ref)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });

    test("has tells stored from unknown refs", async () => {
      const store = await factory();
      const { ref } = await store.put("abc");
      expect(await store.has(ref)).toBe(true);
      expect(await store.has(MISSING)).toBe(false);
    });

    test("verify confirms an intact object", async () => {
      const store = await factory();
      const { ref } = await store.putJson({ query: "crispr" });
      expect(await store.verify(ref)).toBe(true);
    });

    test.each(["get", "getJson", "verify"] as const)(
      "%s of an unknown ref fails with NOT_FOUND",
      async (method) => {
        const store = await factory();
        await expect(store[method](MISSING)).rejects.toMatchObject({
          code: "NOT_FOUND",
          data: { ref: MISSING },
        });
      },
    );

    test.each(
      MALFORMED.flatMap(([label, ref]) =>
        (["get", "getJson", "has", "verify"] as const).map((m) => [m, label, ref]),
      ),
    )("%s of a malformed ref (%s) fails with INVALID_INPUT", async (method, _label, ref) => {
      const store = await factory();
      await store.put("abc");
      await expect(store[method as "get"](ref)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });

    test("returned bytes are a copy: changing them does not change the stored object", async () => {
      const store = await factory();
      const { ref } = await store.put("abc");
      const first = await store.get(ref);
      first[0] = 0x7a;
      expect(new TextDecoder().decode(await store.get(ref))).toBe("abc");
      expect(await store.verify(ref)).toBe(true);
    });

    test("concurrent puts of the same content agree and leave a readable object", async () => {
      const store = await factory();
      const refs = await Promise.all(Array.from({ length: 20 }, () => store.put("same payload")));
      expect(new Set(refs.map((r) => r.ref)).size).toBe(1);
      const ref = refs[0]!.ref;
      expect(new TextDecoder().decode(await store.get(ref))).toBe("same payload");
    });

    test("many different objects stay individually addressable", async () => {
      const store = await factory();
      const refs = await Promise.all(Array.from({ length: 50 }, (_, i) => store.putJson({ i })));
      expect(new Set(refs.map((r) => r.ref)).size).toBe(50);
      const values = await Promise.all(refs.map((r) => store.getJson<{ i: number }>(r.ref)));
      expect(values.map((v) => v.i)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    });
  });
}
