/**
 * What a Reactome record claims about how trustworthy it is: curated versus computationally inferred events,
 * and which species a hit is about. Over the real ContentService answers in ../shared/fixtures/providers/reactome
 * (reduced by their origin; skipped, visibly, when that folder is absent) and, for an inferred event, the real
 * R-HSA-5673001 answer edited the way Reactome writes the mouse event it infers from it (see the test).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import {
  parseReactomeEvent,
  parseReactomeSearch,
} from "../../../src/servers/sources/reactome/reactome-content-parser.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "reactome");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;

const read = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path.join(SAMPLES, file), "utf8")) as Record<string, unknown>;
const answer = (body: unknown): ProviderAnswer => ({
  text: JSON.stringify(body),
  host: "sample",
  status: 200,
});

describe.skipIf(!hasSamples)(`Reactome fidelity over real samples${suffix}`, () => {
  test("search hits name their species (from the stable id when the hit leaves it out), never []", () => {
    const page = parseReactomeSearch(answer(read("search_query_REDUCED.json")));
    expect(page.records).toHaveLength(10);
    for (const record of page.records) {
      expect(record.identifier).toMatch(/^R-HSA-/);
      expect(record.structuredData?.species, record.identifier).toEqual(["Homo sapiens"]);
    }
    // A hit that states its species keeps exactly what Reactome said (edited: species added to one hit as the
    // unreduced search/query answer writes it; the other hit is made a mouse one with no species field).
    const edited = read("search_query_REDUCED.json") as { results: { entries: Record<string, unknown>[] }[] };
    const [first, second] = edited.results[0]?.entries ?? [];
    if (!first || !second) throw new Error("sample changed");
    first.species = ["Homo sapiens", "Mus musculus"];
    second.stId = "R-MMU-6802957";
    second.id = "R-MMU-6802957";
    const [a, b] = parseReactomeSearch(answer(edited)).records;
    expect(a?.structuredData?.species).toEqual(["Homo sapiens", "Mus musculus"]);
    expect(b?.structuredData?.species).toEqual(["Mus musculus"]);
  });

  test("an unknown species code leaves species out instead of claiming none", () => {
    const edited = read("search_query_REDUCED.json") as { results: { entries: Record<string, unknown>[] }[] };
    const entry = edited.results[0]?.entries[0];
    if (!entry) throw new Error("sample changed");
    entry.stId = "R-ALL-9652817";
    const [record] = parseReactomeSearch(answer(edited)).records;
    expect(record?.structuredData).not.toHaveProperty("species");
  });

  test("a curated human pathway (isInferred false) is peer-reviewed, without an INFERRED warning", () => {
    // Edited: the origin reduced the answer to four fields; isInferred is added as Reactome sends it.
    const body = { ...read("data_query_R-HSA-5673001_REDUCED.json"), isInferred: false };
    const record = parseReactomeEvent(answer(body));
    expect(record.peerReviewStatus).toBe("peer-reviewed");
    expect(record.warnings).toEqual([]);
  });

  test("the answer as reduced (no isInferred) makes no peer-review claim", () => {
    const record = parseReactomeEvent(answer(read("data_query_R-HSA-5673001_REDUCED.json")));
    expect(record.peerReviewStatus).toBe("unknown");
    expect(record.structuredData?.species).toBe("Homo sapiens");
  });

  test("a mouse pathway inferred from the human one: unknown review status, INFERRED warning, link to source", () => {
    // Edited from the real R-HSA-5673001 answer the way Reactome writes the orthologous mouse event: its stable
    // id takes the MMU code with the same number, speciesName becomes Mus musculus, isInferred is true and
    // inferredFrom holds the human event (Reactome's Event.inferredFrom), with the summary Reactome gives
    // inferred events.
    const human = read("data_query_R-HSA-5673001_REDUCED.json");
    const mouse = {
      ...human,
      stId: "R-MMU-5673001",
      stIdVersion: "R-MMU-5673001.2",
      speciesName: "Mus musculus",
      schemaClass: "Pathway",
      isInferred: true,
      inferredFrom: [
        {
          dbId: 5673001,
          displayName: "RAF/MAP kinase cascade",
          stId: "R-HSA-5673001",
          speciesName: "Homo sapiens",
          schemaClass: "Pathway",
          className: "Pathway",
        },
      ],
      summation: [
        {
          text: "This event has been computationally inferred from an event that has been demonstrated in another species.",
        },
      ],
    };
    const record = parseReactomeEvent(answer(mouse));
    expect(record.identifier).toBe("R-MMU-5673001");
    expect(record.peerReviewStatus).toBe("unknown");
    expect(record.warnings).toEqual([
      "INFERRED: R-MMU-5673001 (Mus musculus) was computationally inferred from Homo sapiens by orthology, " +
        "not curated or peer-reviewed for this species. The curated source is R-HSA-5673001; cite that for " +
        "curated evidence.",
    ]);
    expect(record.structuredData).toMatchObject({
      species: "Mus musculus",
      isInferred: true,
      inferredFrom: [{ stId: "R-HSA-5673001", name: "RAF/MAP kinase cascade", species: "Homo sapiens" }],
    });
    expect(record.crossReferences).toContainEqual({
      identifier: "R-HSA-5673001",
      identifierType: "reactome",
      url: "https://reactome.org/content/detail/R-HSA-5673001",
    });
  });

  test("an inferred event whose source Reactome wrote only as a back-reference still gets the warning", () => {
    // Edited as above, but inferredFrom as the numeric database id Reactome writes for an already-written object.
    const mouse = {
      ...read("data_query_R-HSA-5673001_REDUCED.json"),
      stId: "R-MMU-5673001",
      speciesName: "Mus musculus",
      isInferred: true,
      inferredFrom: [5673001],
    };
    const record = parseReactomeEvent(answer(mouse));
    expect(record.peerReviewStatus).toBe("unknown");
    expect(record.warnings).toEqual([
      "INFERRED: R-MMU-5673001 (Mus musculus) was computationally inferred from another species by orthology, " +
        "not curated or peer-reviewed for this species.",
    ]);
  });
});
