import { createGovernance } from "sciencegate";

/**
 * The README's programmatic quick start, kept compiling by `npm test` (typecheck). Run it with
 * `npx tsx examples/quick-start.ts`; it calls the real PubMed unless SCIENCEGATE_PUBMED_BASE_URL points
 * elsewhere, as `npx tsx examples/offline/run.ts examples/quick-start.ts` does (offline stand-ins).
 */

// extensions_config.json if there is one, else the bundled science sources; ledger and CAS in ./.sciencegate
const governance = await createGovernance({ permissions: { authorize: async () => ({ allowed: true }) } });
try {
  const { invocationId, result } = await governance.broker.invoke({
    sourceId: "pubmed",
    toolId: "search",
    input: { query: "BRAF V600E melanoma" },
    sessionId: "thread-42",
    threadId: "thread-42",
    toolCallId: "call_1",
  });
  console.log(
    invocationId,
    result.records.map((r) => r.primaryCitation.label),
  );
} finally {
  await governance.close();
}
