/**
 * A whole governance runtime for an app's own tests, with any test runner: the real
 * `createGovernance` over in-process MCP servers (a real SDK client and server per server, linked in
 * memory), in-memory stores in a throwaway data directory, an optional manual clock, and a scripted
 * human who answers the approval cards a governed graph raises.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command, INTERRUPT, type Interrupt, isInterrupted } from "@langchain/langgraph";
import { MemoryDownloadJobStore } from "../artifacts/index.js";
import { type Clock, systemClock } from "../core/index.js";
import { MemoryContentStore, MemoryLedger } from "../governance/audit/index.js";
import type { SourceManifestInput } from "../governance/manifests/index.js";
import {
  MemoryGrantStore,
  type PermissionCard,
  type PermissionDecision,
  type PermissionDecisionKind,
} from "../governance/permissions/index.js";
import {
  createGovernance,
  type Governance,
  type GovernanceMcpOptions,
  type GovernanceOptions,
  type GovernanceStorage,
} from "../runtime/index.js";
import { createSourcesServer, SOURCES_SERVER_ID } from "../servers/index.js";
import { type FakeProviderServer, providerEnvFor } from "./fake-provider-server.js";
import { createInMemoryPool, type InMemoryServerSource } from "./in-memory-pool.js";

/**
 * How the scripted human answers approval cards: one answer for every card (`"allow_once"`), answers
 * used in the order the cards come (one each; running out fails the run), or a function of the card.
 * An answer is a decision kind or a full decision (`{ decision: "deny", message }`).
 */
export type ApprovalScript =
  | PermissionDecisionKind
  | PermissionDecision
  | readonly (PermissionDecisionKind | PermissionDecision)[]
  | ((card: PermissionCard) => PermissionDecisionKind | PermissionDecision);

/** Options of `createTestGovernance`: those of `createGovernance`, minus the pool and config it builds. */
export interface TestGovernanceOptions<C extends Clock = Clock>
  extends Omit<GovernanceOptions, "config" | "mcp" | "manifests" | "clock" | "storage"> {
  /** Stores that win over those of `stores` (the data directory is the test's own). */
  storage?: Omit<GovernanceStorage, "dataDir"> | undefined;
  /** Start failures, OAuth tokens and sampling, as for `createGovernance` (the pool is the test's). */
  mcp?: Omit<GovernanceMcpOptions, "pool" | "createTransport"> | undefined;
  /**
   * The MCP servers, run in this process: server id → an `McpServer`, or a factory of one (called on
   * every connect, so a server that closed can be reached again). A server without a manifest is
   * governed by its derived, fail-closed one (its tools ask for approval unless `readOnlyHint`).
   * @default none
   */
  servers?: Record<string, InMemoryServerSource> | undefined;
  /** Manifests of these servers' sources, as they would be written in a manifest file. @default none */
  manifests?: readonly SourceManifestInput[] | undefined;
  /**
   * The bundled science sources, run in this process with every provider's base URL pointed at this
   * fake provider server (`startFakeProviderServer`; the caller closes it). Their built-in manifests load.
   * `only` limits the sources served. @default not run
   */
  sources?: { provider: FakeProviderServer; only?: readonly string[] | undefined } | undefined;
  /**
   * The time source of the broker, rate limits, deadlines and downloads: pass a `ManualClock` to move
   * time by hand (`clock.advance(ms)`). @default systemClock
   */
  clock?: C | undefined;
  /**
   * Where rows, objects, grants and download jobs live: `memory` (nothing written but downloads) or
   * `files`, the stores an app gets by default (SQLite and the file CAS) in the data directory. A store
   * passed in `storage` (`ledger`, `contentStore`, `grants`, `jobStore`) wins either way. @default "memory"
   */
  stores?: "memory" | "files" | undefined;
  /** How `answerApprovals` and `run` answer cards. @default none: a card fails the run */
  approvals?: ApprovalScript | undefined;
}

/** What `createTestGovernance` returns; `close()` (or `await using`) ends it. */
export interface TestGovernance<C extends Clock = Clock> extends AsyncDisposable {
  /** The runtime, as `createGovernance` builds it. */
  governance: Governance;
  /** The clock it runs on. */
  clock: C;
  /** A fresh temporary data directory (downloads, and the stores with `stores: "files"`), removed by `close()`. */
  dataDir: string;
  /** Every card the scripted human answered, and the answer, in order. */
  answered: { card: PermissionCard; decision: PermissionDecision }[];
  /**
   * The resume command that answers every approval card of a paused graph result by the script.
   * @param result what a graph's `invoke` returned
   * @returns the command to invoke the graph with, or undefined when the result holds no interrupt
   * @throws Error when an interrupt is not an approval card, no script was given, or a list ran out
   */
  answerApprovals(result: unknown): Command | undefined;
  /**
   * Runs a governed graph to its end: invokes it, then answers each round of approval cards by the
   * script and resumes it on the same thread, until it finishes.
   * @param graph a compiled graph or agent (anything with `invoke(input, config)`)
   * @param input the first input
   * @param config the run's config; it needs a `thread_id` (a checkpointer keeps the paused run)
   * @param maxRounds how many rounds of cards at most @default 20
   * @returns the final result
   * @throws Error when the graph still asks after `maxRounds` rounds, and as `answerApprovals`
   */
  run<I, O>(
    graph: { invoke(input: I | Command, config: { configurable: { thread_id: string } }): Promise<O> },
    input: I,
    config: { configurable: { thread_id: string } },
    maxRounds?: number,
  ): Promise<O>;
  /** Closes the runtime, its servers and stores, and removes the data directory. Idempotent. */
  close(): Promise<void>;
}

/**
 * Builds a governance runtime for tests: the real `createGovernance`, over MCP servers linked in
 * memory, in-memory stores (unless `stores: "files"`) in a temporary data directory, no bundled
 * manifests and no environment (`SCIENCEGATE_*` variables of the machine do not reach it) unless
 * given, and the clock you pass.
 * @param options the servers, their manifests, the clock, the approval script, and any
 *   `createGovernance` option (they win over these defaults)
 * @returns the runtime and its helpers
 * @throws GovernanceError as `createGovernance` (`INVALID_MANIFEST` for a bad manifest)
 * @example
 * const clock = new ManualClock(0);
 * await using t = await createTestGovernance({ servers: { lab: makeLabServer() }, clock, approvals: ["allow_once"] });
 * const agent = createGovernedAgent({ model, governance: t.governance, checkpointer: new MemorySaver() });
 * const result = await t.run(agent, { messages: [new HumanMessage("go")] }, { configurable: { thread_id: "t1" } });
 */
export async function createTestGovernance<C extends Clock = Clock>(
  options: TestGovernanceOptions<C> = {},
): Promise<TestGovernance<C>> {
  const { servers = {}, manifests = [], sources, clock, stores = "memory", approvals, ...rest } = options;
  const dataDir = await mkdtemp(join(tmpdir(), "sciencegate-test-governance-"));
  const removeDataDir = () => rm(dataDir, { recursive: true, force: true });
  let governance: Governance;
  try {
    const manifestDir = join(dataDir, "manifests");
    if (manifests.length > 0) {
      await mkdir(manifestDir);
      for (const [i, manifest] of manifests.entries()) {
        await writeFile(join(manifestDir, `${i}-${manifest.id}.json`), JSON.stringify(manifest));
      }
    }
    const pool: Record<string, InMemoryServerSource> = { ...servers };
    if (sources) {
      const env = providerEnvFor(sources.provider.url);
      const only = sources.only;
      pool[SOURCES_SERVER_ID] = () => createSourcesServer({ env, ...(only ? { only } : {}) });
    }
    const memory = stores === "memory";
    governance = await createGovernance({
      env: {},
      ...definedOnly(rest),
      storage: {
        ...rest.storage,
        dataDir,
        // A store left undefined gets the default of `stores`, not createGovernance's.
        ...(memory
          ? {
              ledger: rest.storage?.ledger ?? new MemoryLedger(),
              contentStore: rest.storage?.contentStore ?? new MemoryContentStore(),
              grants: rest.storage?.grants ?? new MemoryGrantStore(),
              jobStore: rest.storage?.jobStore ?? new MemoryDownloadJobStore(),
            }
          : {}),
      },
      config: { servers: [] },
      mcp: { ...rest.mcp, pool: createInMemoryPool(pool) },
      // With `sources`, createGovernance's default loads the manifests of the servers that run.
      manifests: {
        dirs: manifests.length > 0 ? [manifestDir] : [],
        ...(sources ? {} : { builtin: false }),
      },
      clock: clock ?? systemClock,
    });
  } catch (error) {
    await removeDataDir();
    throw error;
  }
  const answered: TestGovernance["answered"] = [];
  const next = scriptedAnswers(approvals);
  const answerApprovals = (result: unknown): Command | undefined => {
    if (!isInterrupted(result)) return undefined;
    const resume: Record<string, PermissionDecision> = {};
    for (const raised of result[INTERRUPT] as Interrupt[]) {
      const card = cardOf(raised.value);
      if (!card || raised.id === undefined) {
        throw new Error(
          `createTestGovernance: an interrupt that is not an approval card: ${JSON.stringify(raised.value)}`,
        );
      }
      const decision = next(card);
      answered.push({ card, decision });
      resume[raised.id] = decision;
    }
    return new Command({ resume });
  };
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= governance.close().finally(removeDataDir);
    return closed;
  };
  return {
    governance,
    clock: (clock ?? systemClock) as C,
    dataDir,
    answered,
    answerApprovals,
    async run(graph, input, config, maxRounds = 20) {
      let result = await graph.invoke(input, config);
      for (let round = 0; round < maxRounds; round++) {
        const resume = answerApprovals(result);
        if (!resume) return result;
        result = await graph.invoke(resume, config);
      }
      if (!isInterrupted(result)) return result;
      throw new Error(`createTestGovernance: the graph still asks for approval after ${maxRounds} rounds`);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The options without their `undefined` fields, so that an option left undefined keeps its default. */
function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** The native card of an interrupt value: a `PermissionCard`, or the one an `hitl` request carries. */
function cardOf(value: unknown): PermissionCard | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const card = "sciencegate" in value ? (value as { sciencegate: unknown }).sciencegate : value;
  return typeof card === "object" && card !== null && (card as { type?: unknown }).type === "permission"
    ? (card as PermissionCard)
    : undefined;
}

/** The script as a function from a card to its answer. */
function scriptedAnswers(script: ApprovalScript | undefined): (card: PermissionCard) => PermissionDecision {
  const asDecision = (answer: PermissionDecisionKind | PermissionDecision): PermissionDecision =>
    typeof answer === "string" ? { decision: answer } : answer;
  if (script === undefined) {
    return (card) => {
      throw new Error(`createTestGovernance: no approvals script, and a card asks: ${card.summary}`);
    };
  }
  if (typeof script === "function") return (card) => asDecision(script(card));
  if (Array.isArray(script)) {
    const queue = [...(script as readonly (PermissionDecisionKind | PermissionDecision)[])];
    return (card) => {
      const answer = queue.shift();
      if (answer === undefined) {
        throw new Error(`createTestGovernance: the approvals script ran out at the card: ${card.summary}`);
      }
      return asDecision(answer);
    };
  }
  const every = asDecision(script as PermissionDecisionKind | PermissionDecision);
  return () => every;
}
