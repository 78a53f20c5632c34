/** The measurements of the stdio comparison (`memory-server-fixture.ts`), side by side in one run. */
import type { InvokeOutcome } from "../../src/governance/broker/broker-types.js";
import { type LatencySummary, measureBatch, measureInterleaved, summarizeLatencies } from "./latency.js";
import {
  MEMORY_CACHED_SOURCE,
  MEMORY_SOURCE,
  type MemoryServerFixture,
  READ_GRAPH,
  type StdioBroker,
} from "./memory-server-fixture.js";

const SESSION = "bench-stdio";

function invoke(target: StdioBroker, sourceId = MEMORY_SOURCE): Promise<InvokeOutcome> {
  return target.broker.invoke({ sourceId, toolId: READ_GRAPH, input: {}, sessionId: SESSION });
}

/** Sequential latencies of each client of the same server program. */
export interface StdioLatencies {
  sdk: LatencySummary;
  adapters: LatencySummary;
  brokerTmp: LatencySummary;
  brokerWork: LatencySummary;
  cacheHit: LatencySummary;
}

/**
 * `read_graph` through the SDK client, the adapters' tool, the broker with its data in `/tmp` and
 * under the working folder (cache off), and cache hits, interleaved in blocks.
 * @param fixture the clients
 * @param warmup untimed calls per case
 * @param iterations timed sequential calls per case
 * @returns a latency summary per case
 * @throws Error when a cached call misses the cache (the measurement would be meaningless)
 */
export async function measureStdioLatencies(
  fixture: MemoryServerFixture,
  warmup: number,
  iterations: number,
): Promise<StdioLatencies> {
  if ((await invoke(fixture.tmp, MEMORY_CACHED_SOURCE)).cacheHit)
    throw new Error("The first call was a cache hit.");
  const samples = await measureInterleaved(
    [
      { name: "sdk", call: () => fixture.sdk.callTool({ name: READ_GRAPH, arguments: {} }) },
      { name: "adapters", call: () => fixture.adapterTool.invoke({}) },
      { name: "brokerTmp", call: () => invoke(fixture.tmp) },
      { name: "brokerWork", call: () => invoke(fixture.work) },
      {
        name: "cacheHit",
        call: async () => {
          if (!(await invoke(fixture.tmp, MEMORY_CACHED_SOURCE)).cacheHit) throw new Error("Cache missed.");
        },
      },
    ],
    { warmup, iterations },
  );
  const summary = (name: string) => summarizeLatencies(samples.get(name) ?? []);
  return {
    sdk: summary("sdk"),
    adapters: summary("adapters"),
    brokerTmp: summary("brokerTmp"),
    brokerWork: summary("brokerWork"),
    cacheHit: summary("cacheHit"),
  };
}

/**
 * `count` calls started at once through the SDK client, then through the broker (data in `/tmp`, a
 * rate-limit group without limits), `rounds` times alternately.
 * @param fixture the clients
 * @param count calls per batch
 * @param rounds batches per side; the median wall time is reported
 * @returns median wall times in ms
 */
export async function measureStdioThroughput(
  fixture: MemoryServerFixture,
  count: number,
  rounds: number,
): Promise<{ directWallMs: number; brokerWallMs: number }> {
  const direct: number[] = [];
  const broker: number[] = [];
  for (let round = 0; round < rounds; round++) {
    direct.push(
      (await measureBatch(count, () => fixture.sdk.callTool({ name: READ_GRAPH, arguments: {} }))).wallMs,
    );
    broker.push((await measureBatch(count, () => invoke(fixture.tmp))).wallMs);
  }
  return { directWallMs: summarizeLatencies(direct).p50, brokerWallMs: summarizeLatencies(broker).p50 };
}
