import { describe, expect, test } from "vitest";
import { normalizeTerm, singular } from "../../src/visibility/search-terms.js";

describe("normalizeTerm", () => {
  test.each([
    ["Proteins", "protein"],
    ["STUDIES", "study"],
    ["variants", "variant"],
    ["the", null],
    ["About", null],
    ["find", "find"],
    ["brca1", "brca1"],
  ])("%s -> %s", (term, expected) => {
    expect(normalizeTerm(term)).toBe(expected);
  });
});

describe("singular", () => {
  test.each([
    ["analysis", "analysis"],
    ["status", "status"],
    ["class", "class"],
    ["classes", "class"],
    ["matches", "match"],
    ["sequences", "sequence"],
    ["ids", "ids"],
    ["gses", "gse"],
    ["chr7s", "chr7s"],
  ])("%s -> %s", (word, expected) => {
    expect(singular(word)).toBe(expected);
  });
});
