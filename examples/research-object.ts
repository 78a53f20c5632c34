/**
 * `npx tsx examples/research-object.ts`: a session's governed record as an RO-Crate research object,
 * offline. One governed PubMed search (against the loopback stand-in of ./offline/providers.ts) and an
 * answer citing what it found are exported as a zip; `verifyResearchObject` checks the crate alone
 * (every file re-hashed, every call read back, the answer's claims reviewed again), and finds a file
 * changed afterwards. Then, with the providers stopped, `createReplayGovernance` answers the same call
 * from the crate and refuses one the crate did not record. Every outcome is asserted: the process exits
 * non-zero when one is wrong.
 */
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGovernance, isGovernanceError } from "sciencegate";
import {
  createReplayGovernance,
  exportResearchObject,
  verifyResearchObject,
  writeResearchObject,
} from "sciencegate/research-object";
import { startOfflineProviders } from "./offline/providers.js";

const dir = mkdtempSync(join(tmpdir(), "sciencegate-research-object-"));
const providers = await startOfflineProviders();
const governance = await createGovernance({
  env: { ...process.env, ...providers.env },
  storage: { dataDir: join(dir, "data") },
});
const call = {
  sourceId: "pubmed",
  toolId: "search",
  input: { query: "crispr base editing", max_results: 2 },
  sessionId: "ro-thread",
  threadId: "ro-thread",
};

let answer = "";
try {
  const { result } = await governance.broker.invoke({ ...call, toolCallId: "call_1" });
  const [first] = result.records;
  assert.ok(first, "the search found a paper");
  // The agent's final answer: one fact, with the citation label of the record that backs it.
  answer = `- ${first.title} ${first.primaryCitation.label}`;
  const crate = await exportResearchObject({ governance, sessionId: "ro-thread", answer });
  assert.equal(crate.summary.invocations, 1);
  await writeResearchObject(crate, join(dir, "ro-thread.zip"));
  await writeResearchObject(crate, join(dir, "ro-thread")); // the same crate as a folder
  console.log(`exported: ${crate.summary.invocations} call, ${crate.summary.facts} fact`);
} finally {
  await governance.close();
  await providers.server.close(); // from here on, nothing answers PubMed
}

const report = await verifyResearchObject(join(dir, "ro-thread.zip"));
assert.ok(report.ok, `the crate verifies: ${JSON.stringify(report.problems)}`);
assert.deepEqual(report.review, { facts: 1, accepted: 1, sameAsExport: true });
console.log(
  `verified: ${report.checkedFiles} files, ${report.invocations} call, review ${report.review?.accepted}/1`,
);

// A stored result changed after the export is found, with what rests on it.
const objects = join(dir, "ro-thread", "objects");
const [stored] = readdirSync(objects);
appendFileSync(join(objects, stored ?? ""), " ");
const tampered = await verifyResearchObject(join(dir, "ro-thread"));
assert.equal(tampered.ok, false);
assert.ok(tampered.problems.some((p) => p.code === "hash_mismatch"));
console.log(`tampered: ${[...new Set(tampered.problems.map((p) => p.code))].join(", ")}`);

// Replay: the same call is answered from the crate, offline; a call it did not record is refused.
const replay = await createReplayGovernance({ crate: join(dir, "ro-thread.zip") });
try {
  const again = await replay.broker.invoke({ ...call, toolCallId: "replay_1" });
  assert.equal(
    `- ${again.result.records[0]?.title} ${again.result.records[0]?.primaryCitation.label}`,
    answer,
  );
  console.log(
    `replayed: ${again.result.records.map((r) => r.primaryCitation.label.replace(/\(.*\)$/, "")).join(", ")}`,
  );
  const other = await replay.broker
    .invoke({ ...call, input: { query: "prime editing" }, toolCallId: "replay_2" })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  assert.ok(isGovernanceError(other) && other.code === "NOT_RECORDED", `not recorded: ${String(other)}`);
  console.log(`not in the crate: ${other.code}`);
} finally {
  await replay.close();
}
