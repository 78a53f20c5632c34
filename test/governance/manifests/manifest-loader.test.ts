import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { GovernanceError } from "../../../src/core/errors.js";
import {
  builtinManifestDir,
  formatJsonPath,
  loadManifestDir,
  loadManifestFile,
} from "../../../src/governance/manifests/manifest-loader.js";
import { makeSource } from "./manifest-factory.js";

const fixtures = resolve(import.meta.dirname, "../../fixtures/manifests");

async function rejection(promise: Promise<unknown>): Promise<GovernanceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GovernanceError);
  return error as GovernanceError;
}

describe("loadManifestFile", () => {
  test("reads a valid manifest file", async () => {
    const manifest = await loadManifestFile(join(fixtures, "valid/alpha.json"));
    expect(manifest.id).toBe("alpha");
    expect(manifest.tools.map((t) => t.mcpToolName)).toEqual(["alpha_search"]);
    expect(manifest.governance.rateLimitGroup).toBe("shared");
  });

  test("an invalid manifest names the file and every issue with its JSON path", async () => {
    const file = join(fixtures, "invalid/broken-fields.json");
    const error = await rejection(loadManifestFile(file));
    expect(error.code).toBe("INVALID_MANIFEST");
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/tools\[1\]\.permission\.action: required field is missing/);
    expect(error.message).toMatch(/governance\.dataClassification: .*"public"/);
    expect(error.message).toMatch(/^ {2}- id: /m);
    expect(error.data?.issues).toHaveLength(3);
  });

  describe("with a scratch folder", () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), "sciencegate-manifests-"));
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    test("a file that is not JSON reports the parse error and the file", async () => {
      const file = join(dir, "broken.json");
      await writeFile(file, '{ "id": "x", ');
      const error = await rejection(loadManifestFile(file));
      expect(error.code).toBe("INVALID_MANIFEST");
      expect(error.message).toContain(file);
      expect(error.message).toMatch(/not valid JSON: .+/);
    });

    test("a missing file is an INVALID_MANIFEST naming it", async () => {
      const error = await rejection(loadManifestFile(join(dir, "nope.json")));
      expect(error.code).toBe("INVALID_MANIFEST");
      expect(error.message).toContain("nope.json");
    });

    test("loadManifestDir reads every *.json in name order and ignores other files", async () => {
      await writeFile(join(dir, "b.json"), JSON.stringify(makeSource({ id: "bravo" })));
      await writeFile(join(dir, "a.json"), JSON.stringify(makeSource({ id: "alpha" })));
      await writeFile(join(dir, "notes.txt"), "not a manifest");
      const manifests = await loadManifestDir(dir);
      expect(manifests.map((m) => m.id)).toEqual(["alpha", "bravo"]);
    });

    test("loadManifestDir fails on a broken file and names it", async () => {
      await writeFile(join(dir, "a.json"), JSON.stringify(makeSource({ id: "alpha" })));
      await writeFile(join(dir, "b.json"), "[1, 2");
      const error = await rejection(loadManifestDir(dir));
      expect(error.code).toBe("INVALID_MANIFEST");
      expect(error.message).toContain(join(dir, "b.json"));
    });

    test("a missing folder is an INVALID_CONFIG naming it", async () => {
      const error = await rejection(loadManifestDir(join(dir, "missing")));
      expect(error.code).toBe("INVALID_CONFIG");
      expect(error.message).toContain(join(dir, "missing"));
    });
  });
});

describe("builtinManifestDir", () => {
  test("is the package's top-level manifests folder", () => {
    expect(resolve(builtinManifestDir())).toBe(resolve(import.meta.dirname, "../../../manifests"));
  });
});

describe("formatJsonPath", () => {
  test.each([
    [[], ""],
    [["id"], "id"],
    [["tools", 2, "permission", "action"], "tools[2].permission.action"],
    [["governance", "networkHosts", 0], "governance.networkHosts[0]"],
  ] as const)("%j -> %s", (path, expected) => {
    expect(formatJsonPath(path)).toBe(expected);
  });
});
