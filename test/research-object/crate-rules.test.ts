/**
 * The rules a research object rests on, each on its own: the test validator refuses every kind of
 * broken metadata (so that its empty verdict on a real crate means something), the licence rule, the
 * crate's own entities (a minimal crate is valid), and the preview escapes what third parties wrote.
 */
import { describe, expect, test } from "vitest";
import { CrateBuilder } from "../../src/research-object/crate-builder.js";
import type { CrateEntity, CrateMetadata } from "../../src/research-object/crate-graph.js";
import { renderCratePreview } from "../../src/research-object/crate-preview.js";
import { redistribution } from "../../src/research-object/redistribution.js";
import { validateRoCrate } from "./ro-crate-validator.js";

/** A small crate: one copied object, one referenced one, a licence. */
function smallCrate(): { metadata: CrateMetadata; files: string[] } {
  const builder = new CrateBuilder({
    name: "n",
    description: "d",
    datePublished: "2026-12-03T12:00:00.000Z",
  });
  builder.content(
    { sha256: "a".repeat(64), size: 2, bytes: new Uint8Array([123, 125]), redistribution: { allowed: true } },
    {
      path: `objects/${"a".repeat(64)}.json`,
      name: "Raw result",
      encodingFormat: "application/json",
      licence: "CC0-1.0",
    },
  );
  builder.content(
    {
      sha256: "b".repeat(64),
      size: 5,
      bytes: undefined,
      redistribution: { allowed: false, reason: "private" },
    },
    { path: `objects/${"b".repeat(64)}.json`, name: "Raw result", encodingFormat: "application/json" },
  );
  return {
    metadata: builder.graph.toMetadata(),
    files: ["ro-crate-metadata.json", ...builder.files().map((f) => f.path)],
  };
}

const byId = (metadata: CrateMetadata, id: string) =>
  metadata["@graph"].find((e) => e["@id"] === id) as CrateEntity;

describe("the RO-Crate 1.1 validator of the tests", () => {
  test("accepts a minimal crate built by CrateBuilder", () => {
    const { metadata, files } = smallCrate();
    expect(validateRoCrate(metadata, files)).toEqual([]);
  });

  test.each<[string, (m: CrateMetadata, files: string[]) => void, string]>([
    ["an entity without @type", (m) => m["@graph"].push({ "@id": "#x" } as CrateEntity), "typed"],
    ["a type outside the context", (m) => m["@graph"].push({ "@id": "#x", "@type": "Gadget" }), "type-term"],
    [
      "a property outside the context",
      (m) => Object.assign(byId(m, "./"), { colour: "red" }),
      "property-term",
    ],
    [
      "a reference to nothing",
      (m) => Object.assign(byId(m, "./"), { about: { "@id": "#nothing" } }),
      "reference",
    ],
    ["a nested object", (m) => Object.assign(byId(m, "./"), { author: { name: "x" } }), "flattened"],
    ["an @id used twice", (m) => m["@graph"].push({ "@id": "./", "@type": "Dataset" }), "unique-id"],
    ["a root without a licence", (m) => delete byId(m, "./").license, "root"],
    [
      "a descriptor that conforms to nothing",
      (m) => delete byId(m, "ro-crate-metadata.json").conformsTo,
      "descriptor",
    ],
    ["a File that is not in the crate", (_m, files) => files.pop(), "data-entity"],
    ["a file nobody describes", (_m, files) => files.push("extra.bin"), "described"],
    [
      "another context",
      (m) => Object.assign(m, { "@context": "https://w3id.org/ro/crate/1.0/context" }),
      "context",
    ],
  ])("refuses %s", (_name, breakIt, rule) => {
    const { metadata, files } = smallCrate();
    breakIt(metadata, files);
    expect(validateRoCrate(metadata, files).map((issue) => issue.rule)).toContain(rule);
  });
});

describe("redistribution", () => {
  test.each([
    ["public, open licence", "public", ["CC-BY-4.0"], false, true],
    [
      "public, licence in words that allows reuse",
      "public",
      ["Ensembl data: free to use without restriction"],
      false,
      true,
    ],
    ["private source", "private", ["CC0-1.0"], false, false],
    ["controlled source", "controlled", [], false, false],
    ["unknown source", undefined, ["CC0-1.0"], false, false],
    [
      "all rights reserved (a bioRxiv record)",
      "public",
      ["All rights reserved (no reuse without permission)"],
      false,
      false,
    ],
    [
      "arXiv's distribution-only licence",
      "public",
      ["http://arxiv.org/licenses/nonexclusive-distrib/1.0/"],
      false,
      false,
    ],
    ["a file that states no licence", "public", [undefined], true, false],
    ["a file with an open licence", "public", ["http://creativecommons.org/licenses/by/4.0/"], true, true],
  ] as const)("%s", (_name, dataClassification, licences, requireLicence, allowed) => {
    const verdict = redistribution({ sourceId: "s", dataClassification, licences, requireLicence });
    expect(verdict.allowed).toBe(allowed);
    if (!allowed) expect(verdict.reason).toMatch(/\w/);
  });
});

describe("the preview", () => {
  test("escapes third-party text, runs no script, and says what is only referenced", () => {
    const { metadata } = smallCrate();
    metadata["@graph"].push({
      "@id": "#record-x",
      "@type": "CreativeWork",
      name: '<img src=x onerror="alert(1)">',
      citationLabel: "[x:1]",
      url: "javascript:alert(1)",
    });
    const html = renderCratePreview(metadata);
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain("default-src 'none'");
    expect(html).toContain("Referenced, not copied: private.");
  });
});
