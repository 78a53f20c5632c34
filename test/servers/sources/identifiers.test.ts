import { describe, expect, test } from "vitest";
import { normalizeArxivId } from "../../../src/servers/sources/arxiv/arxiv-ids.js";
import { isBlank, normalizeDoi } from "../../../src/servers/sources/identifiers.js";
import { normalizePmcid, normalizePmid } from "../../../src/servers/sources/pubmed/pubmed-ids.js";

describe("normalizePmid", () => {
  test.each([
    ["22663011", "22663011"],
    [" PMID:22663011 ", "22663011"],
    ["pmid 22663011", "22663011"],
    ["https://pubmed.ncbi.nlm.nih.gov/22663011/", "22663011"],
    ["pubmed.ncbi.nlm.nih.gov/22663011", "22663011"],
    ["https://www.ncbi.nlm.nih.gov/pubmed/22663011", "22663011"],
    ["https://pubmed.ncbi.nlm.nih.gov/22663011/?from=x", "22663011"],
    ["0", undefined],
    ["PMC123", undefined],
    ["1234567890", undefined],
    ["https://example.org/22663011", undefined],
    ["", undefined],
  ])("%j → %j", (input, expected) => {
    expect(normalizePmid(input)).toBe(expected);
  });
});

describe("normalizePmcid", () => {
  test.each([
    ["PMC3040717", "PMC3040717"],
    ["pmc3040717", "PMC3040717"],
    ["PMCID: PMC3040717", "PMC3040717"],
    ["PMC9984800.1", "PMC9984800"],
    ["https://pmc.ncbi.nlm.nih.gov/articles/PMC3040717/", "PMC3040717"],
    ["https://www.ncbi.nlm.nih.gov/pmc/articles/PMC3040717/", "PMC3040717"],
    ["3040717", undefined],
    ["PMC", undefined],
  ])("%j → %j", (input, expected) => {
    expect(normalizePmcid(input)).toBe(expected);
  });
});

describe("normalizeArxivId", () => {
  test.each([
    ["1605.08386", { id: "1605.08386" }],
    ["1605.08386v2", { id: "1605.08386", version: 2 }],
    ["arXiv:1605.08386v1", { id: "1605.08386", version: 1 }],
    ["https://arxiv.org/abs/1605.08386v1", { id: "1605.08386", version: 1 }],
    ["http://export.arxiv.org/abs/1605.08386", { id: "1605.08386" }],
    ["https://arxiv.org/pdf/1605.08386v3.pdf", { id: "1605.08386", version: 3 }],
    ["arxiv.org/abs/2403.01234", { id: "2403.01234" }],
    ["https://doi.org/10.48550/arXiv.1605.08386", { id: "1605.08386" }],
    ["10.48550/arXiv.2403.01234", { id: "2403.01234" }],
    ["0704.0001", { id: "0704.0001" }],
    ["astro-ph/0601001", { id: "astro-ph/0601001" }],
    ["astro-ph/0601001v1", { id: "astro-ph/0601001", version: 1 }],
    ["math.GT/0309136", { id: "math/0309136" }],
    ["https://arxiv.org/abs/hep-th/9901001v3", { id: "hep-th/9901001", version: 3 }],
    ["1613.00001", undefined],
    ["1605.083", undefined],
    ["1412.12345", undefined],
    ["1501.1234", undefined],
    ["1605.08386v0", undefined],
    ["abc", undefined],
    ["https://example.org/abs/1605.08386", undefined],
    ["astro-ph/060100", undefined],
  ])("%j → %j", (input, expected) => {
    expect(normalizeArxivId(input)).toEqual(expected);
  });
});

describe("normalizeDoi", () => {
  test.each([
    ["10.1056/NEJMoa1203421", "10.1056/NEJMoa1203421"],
    ["doi:10.1056/NEJMoa1203421", "10.1056/NEJMoa1203421"],
    ["https://doi.org/10.1056/NEJMoa1203421", "10.1056/NEJMoa1203421"],
    ["http://dx.doi.org/10.1101/2020.01.01.123456", "10.1101/2020.01.01.123456"],
    ["10.64898/2025.01.01.000001", "10.64898/2025.01.01.000001"],
    ["11.1056/x", undefined],
    ["https://example.org/10.1056/x", undefined],
  ])("%j → %j", (input, expected) => {
    expect(normalizeDoi(input)).toBe(expected);
  });
});

test.each([
  [undefined, true],
  [null, true],
  ["", true],
  ["  ", true],
  ["x", false],
  [0, false],
])("isBlank(%j) is %j", (value, expected) => {
  expect(isBlank(value)).toBe(expected);
});
