/**
 * The offline demo's session as a research object: a valid RO-Crate 1.1, every hash and the claim
 * review verified from the crate alone (4 of 4, as the live ledger says), each way of tampering with it
 * reported precisely, private content referenced and never copied, and the two CLI commands.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { reviewAnswer } from "../../src/artifacts/review-answer.js";
import { main } from "../../src/cli/main.js";
import { sha256Hex } from "../../src/core/canonical-json.js";
import type { CrateEntity, CrateMetadata } from "../../src/research-object/crate-graph.js";
import {
  exportResearchObject,
  openResearchObject,
  type ResearchObject,
  researchObjectZip,
  verifyResearchObject,
  writeResearchObject,
} from "../../src/research-object/index.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { DEMO_SESSION, openDemoData, runOfflineDemo } from "./demo-session.js";
import { validateRoCrate } from "./ro-crate-validator.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-ro-demo-"));
const clock = new ManualClock(Date.parse("2026-12-03T12:00:00Z"));
let governance: Governance;
let answer: string;
let dataDir: string;
let crate: ResearchObject;
const crateDir = join(scratch, "crate");

beforeAll(async () => {
  ({ dataDir, answer } = await runOfflineDemo(scratch));
  governance = await openDemoData(dataDir);
  crate = await exportResearchObject({ governance, sessionId: DEMO_SESSION, answer, clock });
  await writeResearchObject(crate, crateDir);
}, 240_000);
afterAll(async () => {
  await governance?.close();
  await rm(scratch, { recursive: true, force: true });
}, 60_000);

const graphOf = (metadata: CrateMetadata) => metadata["@graph"];
const entity = (metadata: CrateMetadata, id: string) =>
  graphOf(metadata).find((e) => e["@id"] === id) as CrateEntity;
const action = (metadata: CrateMetadata, name: string) =>
  graphOf(metadata).find((e) => e["@type"] === "CreateAction" && e.name === name) as CrateEntity;
const idOf = (value: unknown) => (value as { "@id": string })["@id"];

describe("the demo session's research object", () => {
  test("is valid RO-Crate 1.1: every entity typed, every term in the context, every @id resolvable", async () => {
    const opened = await openResearchObject(crateDir);
    expect(validateRoCrate(opened.metadata, opened.paths)).toEqual([]);
    const types = crate.summary.entities;
    // six governed calls (two searches, an arXiv lookup and paper plan from the cache, the download, the
    // extraction), six authorizations (the extraction, a broker call, has its safe-call decision too),
    // four facts, each reviewed
    expect(types).toMatchObject({ CreateAction: 6, AuthorizeAction: 6, Claim: 4, ClaimReview: 4, Review: 1 });
    expect(crate.summary).toMatchObject({ invocations: 6, authorizations: 6, facts: 4, acceptedFacts: 4 });
    const root = entity(opened.metadata, "./");
    expect(idOf(root.conformsTo)).toBe("https://w3id.org/ro/wfrun/process/0.5");
  });

  test("names each object by its SHA-256 and records each call's tool, times, outcome, attempts and cache hit", async () => {
    const { metadata } = crate;
    for (const file of crate.files.filter((f) => f.path.startsWith("objects/"))) {
      expect(file.path).toBe(`objects/${sha256Hex(file.bytes)}.json`);
    }
    const search = action(metadata, "pubmed/search");
    expect(search).toMatchObject({
      attempts: 1,
      cacheHit: false,
      actionStatus: { "@id": "http://schema.org/CompletedActionStatus" },
    });
    expect(entity(metadata, idOf(search.instrument))["@type"]).toBe("SoftwareApplication");
    expect(Date.parse(String(search.endTime))).toBeGreaterThanOrEqual(Date.parse(String(search.startTime)));
    // the arXiv lookup was answered from the cache the broker tour filled: the raw answer behind it is kept
    const lookup = action(metadata, "arxiv/lookup");
    expect(lookup.cacheHit).toBe(true);
    expect(lookup.rawResult).toBeUndefined();
    expect(entity(metadata, idOf(lookup.cachedRawResult))["@type"]).toBe("File");
    // who decided: the policy for the PubMed search, a person for the Europe PMC search and the download
    const decider = (name: string) => {
      const auth = entity(metadata, idOf(action(metadata, name).authorization));
      return [auth.decisionSource, entity(metadata, idOf(auth.agent))["@type"]];
    };
    expect(decider("pubmed/search")).toEqual(["policy_not_dangerous", "SoftwareApplication"]);
    expect(decider("europe-pmc/search")).toEqual(["user_grant", "Person"]);
    expect(decider("sciencegate/artifact_download")).toEqual(["user_grant", "Person"]);
  });

  test("holds the downloaded paper and its extraction, with its licence and the page that needs vision", () => {
    const { metadata } = crate;
    const download = action(metadata, "sciencegate/artifact_download");
    const pdf = [download.result]
      .flat()
      .map((r) => entity(metadata, idOf(r)))
      .find((e) => e.encodingFormat === "application/pdf") as CrateEntity;
    expect(pdf).toMatchObject({
      "@type": "File",
      contentUrl: "https://arxiv.org/pdf/2403.01234v2",
      redistributed: true,
    });
    expect(idOf(pdf.license)).toBe("http://creativecommons.org/licenses/by/4.0/");
    const extraction = action(metadata, "sciencegate/paper_extract_pdf");
    expect([extraction.object].flat().map(idOf)).toContain(pdf["@id"]);
    const text = [extraction.result]
      .flat()
      .map((r) => entity(metadata, idOf(r)))
      .find((e) => e.encodingFormat === "text/markdown") as CrateEntity;
    expect(text).toMatchObject({ numberOfPages: 4, needsVisionPages: [4] });
  });

  test("links each claim to the calls that back it and records the review: 4 of 4, as the live ledger says", async () => {
    const live = await reviewAnswer({ governance, answer, sessionId: DEMO_SESSION });
    expect(live.facts.map((f) => f.accepted)).toEqual([true, true, true, true]);
    for (const fact of live.facts) {
      const claim = entity(crate.metadata, `#${fact.id}`);
      expect(claim.text).toBe(fact.text);
      const traced = [
        ...fact.citations.map((c) => `#invocation-${c.invocationId}`),
        ...(fact.extractionInvocationId ? [`#invocation-${fact.extractionInvocationId}`] : []),
      ];
      expect([claim.isBasedOn].flat().map(idOf).sort()).toEqual([...new Set(traced)].sort());
      const review = graphOf(crate.metadata).find(
        (e) => e["@type"] === "ClaimReview" && idOf(e.itemReviewed) === claim["@id"],
      );
      expect(idOf(review?.reviewRating)).toBe("#rating-accepted");
    }
    const record = entity(crate.metadata, "#record-arxiv-2403.01234");
    expect(record).toMatchObject({
      identifier: "2403.01234",
      version: "v2",
      citationLabel: "[arXiv:2403.01234v2]",
    });
    expect(record.license).toBeDefined();
  });

  test("verifies from the crate alone, as a folder and as a zip (the same bytes on every export)", async () => {
    const report = await verifyResearchObject(crateDir);
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({
      ok: true,
      invocations: 6,
      review: { facts: 4, accepted: 4, sameAsExport: true },
    });
    expect(report.checkedFiles).toBe(crate.files.length);
    const zip = join(scratch, "crate.zip");
    await writeResearchObject(crate, zip);
    expect((await verifyResearchObject(zip)).ok).toBe(true);
    const again = await exportResearchObject({ governance, sessionId: DEMO_SESSION, answer, clock });
    expect(sha256Hex(researchObjectZip(again))).toBe(sha256Hex(await readFile(zip)));
  });
});

describe("which calls go in", () => {
  test("a thread keeps only its calls; a session or thread without calls is NOT_FOUND", async () => {
    const thread = await exportResearchObject({
      governance,
      sessionId: DEMO_SESSION,
      threadId: DEMO_SESSION,
      clock,
    });
    expect(thread.summary.invocations).toBe(6);
    await expect(
      exportResearchObject({ governance, sessionId: DEMO_SESSION, threadId: "other", clock }),
    ).rejects.toThrow("No governed call is recorded for session 'agent-demo' and thread 'other'.");
    await expect(exportResearchObject({ governance, sessionId: "nobody", clock })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});

describe("a tampered crate is reported precisely", () => {
  const tamper = async (name: string, change: (dir: string, metadata: CrateMetadata) => Promise<void>) => {
    const dir = join(scratch, `tampered-${name}`);
    await cp(crateDir, dir, { recursive: true });
    const metadata = JSON.parse(await readFile(join(dir, "ro-crate-metadata.json"), "utf8")) as CrateMetadata;
    await change(dir, metadata);
    return verifyResearchObject(dir);
  };
  const summary = (report: Awaited<ReturnType<typeof verifyResearchObject>>) =>
    report.problems.map((p) => [p.code, p.subject]);

  test("one byte of a raw result changed: its hash, the call and the fact that rest on it", async () => {
    const search = action(crate.metadata, "pubmed/search");
    const raw = idOf(search.rawResult);
    const report = await tamper("byte", async (dir) => {
      const bytes = await readFile(join(dir, raw));
      const at = bytes.indexOf("Base editing");
      bytes[at] = "b".charCodeAt(0);
      await writeFile(join(dir, raw), bytes);
    });
    expect(report.ok).toBe(false);
    expect(summary(report)).toEqual([
      ["hash_mismatch", raw],
      ["verdict_changed", "#fact-1"],
    ]);
    expect(report.problems[0]?.message).toContain("Raw result of pubmed/search");
    expect(report.problems[0]?.breaks).toEqual([search["@id"], "#fact-1"]);
    expect(report.problems[1]?.message).toMatch(
      /fact-1 was accepted at export; from this crate it is not backed: cas_corrupt/,
    );
    expect(report.review).toMatchObject({ facts: 4, accepted: 3, sameAsExport: false });
  });

  test("a file removed: the missing file, what rests on it, and the verdict it changes", async () => {
    const europe = action(crate.metadata, "europe-pmc/search");
    const normalized = idOf(europe.normalizedResult);
    const report = await tamper("removed", (dir) => rm(join(dir, normalized)));
    expect(summary(report)).toEqual([
      ["file_missing", normalized],
      ["verdict_changed", "#fact-2"],
    ]);
    expect(report.problems[0]?.breaks).toEqual([europe["@id"], "#fact-2"]);
  });

  test("a claim edited in the answer: the answer's hash and the claim whose text changed", async () => {
    const report = await tamper("claim", async (dir) => {
      const text = await readFile(join(dir, "answer.md"), "utf8");
      await writeFile(join(dir, "answer.md"), text.replace("(2024)", "(2019)"));
    });
    expect(summary(report)).toEqual([
      ["hash_mismatch", "answer.md"],
      ["claim_changed", "#fact-1"],
    ]);
    expect(report.problems[0]?.breaks).toEqual([
      "#fact-1",
      "#fact-2",
      "#fact-3",
      "#fact-4",
      "#answer-review",
    ]);
    expect(report.problems[1]?.message).toMatch(
      /fact-1 reads ".*\(2019\).*" in answer.md, but the crate's claim says ".*\(2024\)/,
    );
  });

  test("a claim edited in the metadata only", async () => {
    const report = await tamper("claim-metadata", async (dir, metadata) => {
      entity(metadata, "#fact-3").text = "arXiv: this preprint was peer-reviewed [arXiv:2403.01234v2].";
      await writeFile(join(dir, "ro-crate-metadata.json"), JSON.stringify(metadata));
    });
    expect(summary(report)).toEqual([["claim_changed", "#fact-3"]]);
  });

  test("a citation pointed elsewhere: the claim's record and the calls it claims to rest on", async () => {
    const europe = action(crate.metadata, "europe-pmc/search");
    const pubmed = action(crate.metadata, "pubmed/search");
    const report = await tamper("citation", async (dir, metadata) => {
      const claim = entity(metadata, "#fact-1");
      claim.citation = [{ "@id": "#record-europe-pmc-39000101" }];
      claim.isBasedOn = [{ "@id": europe["@id"] }];
      await writeFile(join(dir, "ro-crate-metadata.json"), JSON.stringify(metadata));
    });
    expect(summary(report)).toEqual([
      ["citation_changed", "#fact-1"],
      ["citation_changed", "#fact-1"],
    ]);
    expect(report.problems[0]?.message).toBe(
      `fact-1 rests on ${europe["@id"]} (europe-pmc/search) in the crate, but its citations trace to ${pubmed["@id"]} (pubmed/search).`,
    );
    expect(report.problems[1]?.message).toContain(
      "cites #record-europe-pmc-39000101 in the crate, but its labels (PMID:39000001) name #record-pubmed-39000001",
    );
  });

  test("a changed entry inside the zip form, and a reference to nothing", async () => {
    const opened = await openResearchObject(crateDir);
    const entries: Record<string, Uint8Array> = {};
    for (const path of opened.paths) entries[path] = (await opened.read(path)) as Uint8Array;
    const metadata = structuredClone(opened.metadata);
    entity(metadata, "#fact-2").citation = [{ "@id": "#record-nowhere" }];
    entries["ro-crate-metadata.json"] = new TextEncoder().encode(JSON.stringify(metadata));
    const manifest = Object.keys(entries).find((p) => p.endsWith("/manifest.json")) as string;
    entries[manifest] = new TextEncoder().encode("{}");
    const zip = join(scratch, "tampered.zip");
    await writeFile(zip, zipSync(entries));
    const report = await verifyResearchObject(zip);
    expect(report.problems.map((p) => p.code).sort()).toEqual([
      "citation_changed",
      "hash_mismatch",
      "unresolved_reference",
    ]);
    expect(report.problems.find((p) => p.code === "unresolved_reference")?.message).toBe(
      "#fact-2 citation names #record-nowhere, which is not in the crate.",
    );
  });
});

describe("licences", () => {
  test("the broker tour's LLM Wiki calls (a private source) are referenced by hash, never copied", async () => {
    const tour = await exportResearchObject({ governance, sessionId: "demo", clock });
    const wikiCalls = graphOf(tour.metadata).filter(
      (e) =>
        e["@type"] === "CreateAction" &&
        String(e.name).startsWith("llm-wiki/") &&
        e.actionStatus &&
        idOf(e.actionStatus).endsWith("CompletedActionStatus"),
    );
    expect(wikiCalls.length).toBe(2);
    for (const call of wikiCalls) {
      for (const key of ["request", "rawResult", "normalizedResult"]) {
        const object = entity(tour.metadata, idOf(call[key]));
        expect(object).toMatchObject({ "@type": "CreativeWork", redistributed: false });
        expect(object.conditionsOfAccess).toMatch(
          /source 'llm-wiki' is private: its content is never copied/,
        );
        expect(tour.files.some((file) => file.path.includes(String(object.sha256)))).toBe(false);
      }
    }
    // the page the tour read is nowhere in the crate's files (its text is, in the wiki's answer)
    const phrase = "couples a Cas9 nickase with a reverse transcriptase";
    const wikiAnswer = await governance.store.get(
      (
        await governance.ledger.query({
          sessionId: "demo",
          sourceId: "llm-wiki",
          toolId: "get_page",
          status: "ok",
        })
      )[0]?.normalizedRef as string,
    );
    expect(Buffer.from(wikiAnswer).includes(phrase)).toBe(true);
    for (const file of tour.files) expect(Buffer.from(file.bytes).includes(phrase)).toBe(false);
    const dir = join(scratch, "tour");
    await writeResearchObject(tour, dir);
    const opened = await openResearchObject(dir);
    expect(validateRoCrate(opened.metadata, opened.paths)).toEqual([]);
    expect((await verifyResearchObject(dir)).ok).toBe(true);
  });
});

describe("sciencegate export and verify-crate", () => {
  const io = (out: string[]) => ({
    stdout: (text: string) => out.push(text),
    stderr: (text: string) => out.push(text),
    env: { ...process.env, SCIENCEGATE_HOME: dataDir },
    cwd: scratch,
    isTty: false,
  });

  test("export writes a zip that verify-crate accepts (0), a tampered one is 1, no crate is 2", {
    timeout: 120_000,
  }, async () => {
    await writeFile(join(scratch, "answer.md"), answer);
    const out: string[] = [];
    const code = await main(
      ["export", "--session", DEMO_SESSION, "--answer", "answer.md", "--out", "cli.zip"],
      io(out),
    );
    expect(code, out.join("")).toBe(0);
    expect(out.join("")).toMatch(/6 call\(s\), 6 authorization\(s\), .* 4 of 4 fact\(s\) accepted/);
    const verified: string[] = [];
    expect(await main(["verify-crate", "cli.zip"], io(verified))).toBe(0);
    expect(verified.join("")).toMatch(
      /^verified: \d+ file\(s\) re-hashed, .* 4 of 4 fact\(s\) accepted, as at export/m,
    );
    const tampered = join(scratch, "cli-tampered");
    await cp(crateDir, tampered, { recursive: true });
    const raw = idOf(action(crate.metadata, "pubmed/search").rawResult);
    await writeFile(join(tampered, raw), `${await readFile(join(tampered, raw), "utf8")} `);
    const broken: string[] = [];
    expect(await main(["verify-crate", tampered], io(broken))).toBe(1);
    expect(broken.join("")).toMatch(/hash_mismatch: .*\n {2}breaks: #invocation-.*, #fact-1\n/);
    // a crate's text cannot drive the terminal: an escape sequence in an id is printed as text
    const hostile = join(scratch, "tampered-escape");
    await cp(crateDir, hostile, { recursive: true });
    const metadata = JSON.parse(
      await readFile(join(hostile, "ro-crate-metadata.json"), "utf8"),
    ) as CrateMetadata;
    entity(metadata, "#fact-1").citation = [{ "@id": "#\u001b[2J\u001b[31mfake" }];
    await writeFile(join(hostile, "ro-crate-metadata.json"), JSON.stringify(metadata));
    const escaped: string[] = [];
    expect(await main(["verify-crate", hostile], io(escaped))).toBe(1);
    expect(escaped.join("")).toContain("#\\u001b[2J\\u001b[31mfake");
    expect(escaped.join("")).not.toContain("\u001b");
    const none: string[] = [];
    expect(await main(["verify-crate", "nowhere.zip"], io(none))).toBe(2);
    expect(none.join("")).toMatch(/No research object at/);
    const usage: string[] = [];
    expect(await main(["export", "--session", DEMO_SESSION], io(usage))).toBe(2);
  });
});
