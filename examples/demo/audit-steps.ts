/** The closing steps of the demo: the evidence check of the final answer, and the audit ledger. */

import type { Governance } from "sciencegate";
import { reviewAnswer } from "sciencegate/artifacts";
import { shortId } from "./print.js";

/**
 * Checks and prints that every fact of the answer cites a record a governed invocation returned.
 * @param governance the runtime (ledger and CAS)
 * @param answer the final answer
 * @param sessionId the agent's session: only its invocations count
 * @returns whether every fact is backed
 */
export async function showEvidence(
  governance: Governance,
  answer: string,
  sessionId: string,
): Promise<boolean> {
  const report = await reviewAnswer({ governance, answer, sessionId });
  for (const fact of report.facts) {
    console.log(`  ${fact.accepted ? "✓" : "✗"} ${fact.text.slice(0, 90)}`);
    for (const c of fact.citations) {
      if (c.invocationId)
        console.log(`      ${c.label} ← ${c.sourceId}/${c.toolId} invocation ${shortId(c.invocationId)}`);
    }
    if (fact.extractionInvocationId) {
      console.log(`      full text ← paper_extract_pdf invocation ${shortId(fact.extractionInvocationId)}`);
    }
    for (const problem of fact.problems) console.log(`      problem: ${problem}`);
  }
  const cited = report.facts.reduce((n, fact) => n + fact.citations.length, 0);
  console.log(
    report.accepted
      ? `  citations checked: ${report.facts.length} facts, ${cited} citations, each from a governed invocation in the ledger (reviewEvidence)`
      : "  citations checked: some facts are not backed by a governed invocation (see above)",
  );
  return report.accepted;
}

/**
 * Prints the ledger totals and one line per invocation.
 * @param governance the runtime
 */
export async function showLedger(governance: Governance): Promise<void> {
  const summary = await governance.ledger.summary();
  const auths = await governance.ledger.listAuthorizations();
  console.log(
    `  ${summary.calls} calls: ${summary.ok} ok, ${summary.errors} errors, ${summary.cacheHits} cache hits, queue wait ${summary.totalQueueWaitMs} ms, ${auths.length} authorizations`,
  );
  for (const row of await governance.ledger.query()) {
    const status = row.status === "ok" ? (row.cacheHit ? "ok (cache)" : "ok") : (row.error?.code ?? "error");
    console.log(
      `  ${row.sourceId}/${row.toolId}`.padEnd(34) +
        status.padEnd(16) +
        `request ${row.requestRef?.slice(7, 19) ?? "-"}… normalized ${row.normalizedRef?.slice(7, 19) ?? "-"}`,
    );
  }
}
