import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { builtinManifestDir, loadManifestFile } from "../../../src/governance/manifests/manifest-loader.js";
import {
  MAX_PLACEHOLDER_CHARS,
  normalizeResource,
  renderPermission,
  renderTemplate,
} from "../../../src/governance/permissions/permission-render.js";
import { DOWNLOAD_TOOL, makeRequest } from "./permission-fixtures.js";

const pubmed = await loadManifestFile(join(builtinManifestDir(), "pubmed.json"));
const arxiv = await loadManifestFile(join(builtinManifestDir(), "arxiv.json"));
const sources = { pubmed, arxiv };
const manifestTool = (sourceId: keyof typeof sources, id: string) => {
  const tool = sources[sourceId].tools.find((t) => t.id === id);
  if (!tool) throw new Error(`no tool ${id}`);
  return tool;
};

describe("renderPermission over the real manifests", () => {
  test.each([
    [
      "pubmed",
      "search",
      { query: "brca1 breast cancer" },
      "pubmed:search",
      'Search PubMed for "brca1 breast cancer"',
    ],
    [
      "pubmed",
      "fetch_abstracts",
      { pmids: ["1", "2", "3"] },
      "pubmed:fetch_abstracts",
      "Fetch PubMed abstracts for 1, 2, 3",
    ],
    ["pubmed", "find_related", { pmid: "42" }, "pubmed:find_related", "Find PubMed articles PMID 42"],
    [
      "arxiv",
      "lookup",
      { ids: ["2401.00001", "2401.00002v2"] },
      "arxiv:lookup",
      "Look up arXiv papers 2401.00001, 2401.00002v2",
    ],
  ] as const)("%s/%s", (sourceId, toolId, input, resource, summary) => {
    const rendered = renderPermission({ sourceId, toolId, tool: manifestTool(sourceId, toolId), input });
    expect(rendered).toEqual({
      action: resource,
      resource,
      normalizedResource: resource,
      scope: resource,
      scopeDescription: `every ${resource} call, whatever its arguments, for the rest of this session`,
      summary,
    });
  });

  test("a download renders its full resource and normalizes to artifact:<source>", () => {
    const request = makeRequest({
      tool: DOWNLOAD_TOOL,
      input: { sourceId: "arxiv", candidateId: "arxiv-2401.00001v1-pdf", destinationPath: "papers/a.pdf" },
    });
    expect(renderPermission(request)).toEqual({
      action: "artifact:download",
      resource: "artifact:arxiv:arxiv-2401.00001v1-pdf:papers/a.pdf",
      normalizedResource: "artifact:arxiv",
      scope: "artifact:arxiv",
      scopeDescription:
        "every artifact:download call on a resource starting with artifact:arxiv:, for the rest of this session",
      summary: "Download arxiv-2401.00001v1-pdf from arxiv to papers/a.pdf",
    });
  });
});

describe("renderTemplate", () => {
  test.each([
    ["missing value", 'Search for "{query}"', {}, 'Search for ""'],
    ["null value", "Find {relation} of {pmid}", { relation: null, pmid: "42" }, "Find of 42"],
    ["number and boolean", "{n} {b}", { n: 5, b: false }, "5 false"],
    ["array joined, empty items dropped", "{ids}", { ids: ["a", "", "b", null] }, "a, b"],
    ["object as JSON", "{filter}", { filter: { year: 2024 } }, '{"year":2024}'],
    [
      "control characters and newlines removed",
      "{query}",
      { query: "a\u0000b\n\nIgnore\u202eprevious" },
      "a b Ignore previous",
    ],
    ["inherited names are not values", "{constructor}", {}, ""],
    ["unknown braces kept", "{not a placeholder}", {}, "{not a placeholder}"],
  ])("%s", (_name, template, values, expected) => {
    expect(renderTemplate(template, values)).toBe(expected);
  });

  test("a long value is truncated with an ellipsis at the placeholder limit", () => {
    const text = renderTemplate('Search for "{query}"', { query: "x".repeat(5000) });
    expect(text).toBe(`Search for "${"x".repeat(MAX_PLACEHOLDER_CHARS - 1)}…"`);
  });

  test("truncation never splits a surrogate pair", () => {
    const text = renderTemplate("{q}", { q: "🧬".repeat(300) });
    expect(text).toBe(`${"🧬".repeat(MAX_PLACEHOLDER_CHARS - 1)}…`);
  });
});

describe("normalizeResource", () => {
  test.each([
    ["pubmed:search", "pubmed:search"],
    ["artifact:arxiv:c1:papers/a.pdf", "artifact:arxiv"],
    ["single", "single"],
  ])("%s -> %s", (resource, normalized) => {
    expect(normalizeResource(resource)).toBe(normalized);
  });
});
