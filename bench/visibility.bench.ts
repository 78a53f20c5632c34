/**
 * Deferred tool visibility benchmark: first-turn tool payload tokens at the built-in catalog, 1,000
 * and 10,000 tools, eager (every tool's name, description and schema) against deferred
 * (`tool_search` + the `<available-deferred-tools>` section within its default token budget), with
 * the unbudgeted section (every summary) as the previous behaviour, side by side; `tool_search`
 * latency at 10,000 tools against a linear scan; and recall of the labelled query set on the
 * built-in catalog. `BENCH_QUICK=1` runs fewer latency queries (token counts and recall unchanged).
 */
import { performance } from "node:perf_hooks";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { builtinManifestDir, loadManifestDir } from "../src/governance/manifests/manifest-loader.js";
import {
  DEFAULT_DEFERRED_TOOLS_TOKEN_BUDGET,
  type DeferredToolsTier,
  renderDeferredToolsSection,
} from "../src/visibility/deferred-tools-section.js";
import { estimateTokens } from "../src/visibility/estimate-tokens.js";
import { emptyPromotionState } from "../src/visibility/promotion.js";
import { routingHintsSection } from "../src/visibility/prompt-sections.js";
import { ToolSearchIndex, toolSearchIndexFor } from "../src/visibility/tool-search.js";
import { createToolSearchTool } from "../src/visibility/tool-search-tool.js";
import { type SurfaceTool, ToolSurface } from "../src/visibility/tool-surface.js";
import { evaluableQueries, type LabelledQuery } from "../test/visibility/retrieval-queries.js";
import { random, syntheticManifests } from "../test/visibility/synthetic-catalog.js";
import { type BenchMetric, type BenchResult, metricWithTarget, ratioOf } from "./lib/bench-result.js";
import { summarizeLatencies } from "./lib/latency.js";
import { syllableManifests } from "./lib/syllable-catalog.js";

const QUICK = process.env.BENCH_QUICK === "1";
const CATALOG_SIZES = [1_000, 10_000] as const;
const GENERATED_TOOLS_LATENCY = 10_000;
const WARMUP = QUICK ? 50 : 300;
const QUERIES = QUICK ? 300 : 3_000;
/** The linear-scan baseline takes tens of milliseconds a query, so it gets fewer. */
const BASELINE_QUERIES = QUICK ? 30 : 300;
/** Every n-th generated tool is looked for by four words of its own description. */
const SELF_RECALL_STRIDE = 20;
/** Targets, printed next to the measurements, never enforced. */
const TARGET_DEFERRED_SHARE_BUILTIN = 0.1;
const TARGET_DEFERRED_SHARE_1000 = 0.03;
const TARGET_DEFERRED_TOKENS_10000 = 3_000;
const TARGET_SEARCH_P50_MS = 1;
/** Recall@3 before the section budget: 81 of 82 labelled queries (0.988 rounded). */
const TARGET_RECALL_AT_3 = 81 / 82;

const encoder = new Tiktoken(o200kBase);
const tokens = (text: string) => encoder.encode(text).length;

/** The tools array of a chat request (OpenAI function format, which most providers mirror). */
function toolsArray(specs: readonly { name: string; description: string; parameters: unknown }[]): string {
  return JSON.stringify(specs.map((s) => ({ type: "function", function: s })));
}

interface PayloadTokens {
  tools: number;
  sources: number;
  eager: number;
  /** `tool_search` + the section within the default budget. */
  deferred: number;
  /** `tool_search` + every summary (no budget): the previous behaviour. */
  unbudgeted: number;
  /** The section alone, by o200k and by the built-in estimate. */
  section: number;
  sectionEstimate: number;
  tier: DeferredToolsTier | undefined;
  hints: number;
}

function payloadTokens(tools: readonly SurfaceTool[]): PayloadTokens {
  const eager = toolsArray(
    tools.map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema })),
  );
  const search = createToolSearchTool({ getTools: () => tools });
  const searchSpec = tokens(
    toolsArray([
      { name: search.name, description: search.description, parameters: toJsonSchema(search.schema) },
    ]),
  );
  const section = renderDeferredToolsSection(tools);
  const unbudgeted = renderDeferredToolsSection(tools, { tokenBudget: Number.POSITIVE_INFINITY });
  return {
    tools: tools.length,
    sources: new Set(tools.map((t) => t.sourceId)).size,
    eager: tokens(eager),
    deferred: searchSpec + tokens(section.text),
    unbudgeted: searchSpec + tokens(unbudgeted.text),
    section: tokens(section.text),
    sectionEstimate: estimateTokens(section.text),
    tier: section.tier,
    hints: tokens(routingHintsSection(tools, emptyPromotionState())),
  };
}

function tokenMetrics(label: string, t: PayloadTokens): BenchMetric[] {
  return [
    { name: `${label}: eager first-turn tokens`, value: t.eager, unit: "tokens" },
    { name: `${label}: deferred first-turn tokens (budget)`, value: t.deferred, unit: "tokens" },
    { name: `${label}: deferred first-turn tokens (no budget, before)`, value: t.unbudgeted, unit: "tokens" },
    {
      name: `${label}: section o200k / built-in estimate`,
      value: t.section / t.sectionEstimate,
      unit: "share",
    },
  ];
}

/** A realistic mix: sentences, bare tool ids, full names, `+term` and `select:` queries. */
function queryMix(tools: readonly SurfaceTool[], count: number, seed: number): string[] {
  const rand = random(seed);
  const pick = () => tools[Math.floor(rand() * tools.length)] as SurfaceTool;
  const wordsOf = (tool: SurfaceTool, n: number) =>
    (tool.toolDescription ?? tool.description)
      .split(/\W+/)
      .filter((w) => w.length > 2)
      .slice(0, n);
  return Array.from({ length: count }, () => {
    const r = rand();
    const tool = pick();
    if (r < 0.6) return ["find", ...wordsOf(tool, 2 + Math.floor(rand() * 4)), "about the"].join(" ");
    if (r < 0.75) return tool.toolId;
    if (r < 0.85) return tool.name;
    if (r < 0.95) return `+${wordsOf(tool, 1).join("")} ${wordsOf(pick(), 2).join(" ")}`;
    return `select:${tool.name},${pick().name}`;
  });
}

/** The baseline: no index, every query scans every tool's text. */
function linearScan(tools: readonly SurfaceTool[]): (query: string) => string[] {
  const texts = tools.map((t) => `${t.name} ${t.description}`.toLowerCase());
  return (query) => {
    const terms = query.toLowerCase().split(/\W+/).filter(Boolean);
    const scored = texts.map((text, i) => [i, terms.filter((term) => text.includes(term)).length] as const);
    return scored
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([i]) => tools[i]?.name ?? "");
  };
}

function time(queries: readonly string[], run: (query: string) => unknown): number[] {
  for (let i = 0; i < WARMUP; i++) run(queries[i % queries.length] ?? "");
  return queries.map((query) => {
    const start = performance.now();
    run(query);
    return performance.now() - start;
  });
}

/** Share of sampled tools found in the top 5 by four words of their own description. */
function selfRecall(tools: readonly SurfaceTool[], index: ToolSearchIndex): number {
  let found = 0;
  let total = 0;
  for (let i = 0; i < tools.length; i += SELF_RECALL_STRIDE) {
    const tool = tools[i] as SurfaceTool;
    const words = (tool.toolDescription ?? "").split(/\W+/).filter((w) => w.length > 2);
    const query = [words[3], words[7], words[11], words[15]].filter(Boolean).join(" ");
    total++;
    if (index.search(query, 5).some((hit) => hit.name === tool.name)) found++;
  }
  return found / total;
}

function recall(
  index: ToolSearchIndex,
  labelled: readonly LabelledQuery[],
): { at3: number; at5: number; queries: number } {
  let at3 = 0;
  let at5 = 0;
  for (const { query, expected } of labelled) {
    const names = index.search(query, 5).map((h) => h.name);
    if (names.slice(0, 3).some((n) => expected.includes(n))) at3++;
    if (names.some((n) => expected.includes(n))) at5++;
  }
  const n = labelled.length;
  return { at3: at3 / n, at5: at5 / n, queries: n };
}

/**
 * Runs the visibility benchmark.
 * @returns token counts, search latency, recall, with targets and ratios
 */
export async function run(): Promise<BenchResult> {
  const manifests = await loadManifestDir(builtinManifestDir());
  const builtin = ToolSurface.fromManifests(manifests);
  const labelled = evaluableQueries(manifests.map((m) => m.id));
  const builtinTokens = payloadTokens(builtin);
  const [thousand, tenThousand] = CATALOG_SIZES.map((size) =>
    payloadTokens(ToolSurface.fromManifests(syntheticManifests({ tools: size }))),
  ) as [PayloadTokens, PayloadTokens];

  // The catalog the previous bench counted tokens on (59,290 deferred tokens before the budget).
  const syllables = payloadTokens(ToolSurface.fromManifests(syllableManifests(1_000, 1)));
  const large = ToolSurface.fromManifests(syllableManifests(GENERATED_TOOLS_LATENCY, 2));
  const buildStart = performance.now();
  const index = toolSearchIndexFor(large);
  const buildMs = performance.now() - buildStart;
  const queries = queryMix(large, QUERIES, 3);
  const scan = linearScan(large);
  const ours = summarizeLatencies(time(queries, (q) => index.search(q, 5)));
  const baseline = summarizeLatencies(time(queries.slice(0, BASELINE_QUERIES), scan));
  const prunedSelfRecall = selfRecall(large, index);
  const fullSelfRecall = selfRecall(
    large,
    new ToolSearchIndex(large, { postingBudget: Number.POSITIVE_INFINITY }),
  );
  const builtinIndex = toolSearchIndexFor(builtin);
  const builtinLatency = summarizeLatencies(
    time(
      labelled.map((q) => q.query),
      (q) => builtinIndex.search(q),
    ),
  );
  const quality = recall(builtinIndex, labelled);

  const share = (t: PayloadTokens) => t.deferred / t.eager;
  const builtinLabel = `built-in (${builtin.length} tools)`;
  return {
    name: "visibility",
    description:
      "First-turn tool tokens eager vs deferred at the built-in catalog, 1,000 and 10,000 tools; tool_search latency at 10,000 tools; recall",
    parameters: {
      builtinTools: builtin.length,
      syntheticTools: CATALOG_SIZES.join(" / "),
      syntheticSources: `${thousand.sources} / ${tenThousand.sources}`,
      sectionTokenBudget: DEFAULT_DEFERRED_TOOLS_TOKEN_BUDGET,
      sectionTiers: [builtinTokens, thousand, tenThousand].map((t) => t.tier ?? "empty").join(" / "),
      generatedToolsForLatency: large.length,
      queries: QUERIES,
      warmup: WARMUP,
      labelledQueries: quality.queries,
      tokenizer: "o200k_base (js-tiktoken)",
      quick: QUICK,
    },
    metrics: [
      ...tokenMetrics(builtinLabel, builtinTokens),
      metricWithTarget(
        `${builtinLabel}: deferred / eager`,
        share(builtinTokens),
        "share",
        TARGET_DEFERRED_SHARE_BUILTIN,
      ),
      {
        name: `${builtinLabel}: routing hints (extra, optional)`,
        value: builtinTokens.hints,
        unit: "tokens",
      },
      ...tokenMetrics("1,000 tools", thousand),
      metricWithTarget("1,000 tools: deferred / eager", share(thousand), "share", TARGET_DEFERRED_SHARE_1000),
      ...tokenMetrics("10,000 tools", tenThousand),
      ...tokenMetrics("1,000 syllable-word tools (previous catalog)", syllables),
      metricWithTarget(
        "10,000 tools: deferred first-turn tokens",
        tenThousand.deferred,
        "tokens",
        TARGET_DEFERRED_TOKENS_10000,
      ),
      { name: "10,000 tools: deferred / eager", value: share(tenThousand), unit: "share" },
      { name: "10,000 tools: index build", value: buildMs, unit: "ms" },
      metricWithTarget("10,000 tools: tool_search p50", ours.p50, "ms", TARGET_SEARCH_P50_MS),
      { name: "10,000 tools: tool_search p99", value: ours.p99, unit: "ms" },
      { name: "10,000 tools: linear scan p50", value: baseline.p50, unit: "ms" },
      {
        name: "10,000 tools: self-retrieval recall@5 (posting budget)",
        value: prunedSelfRecall,
        unit: "share",
      },
      { name: "10,000 tools: self-retrieval recall@5 (unbounded)", value: fullSelfRecall, unit: "share" },
      { name: "built-in: tool_search p50", value: builtinLatency.p50, unit: "ms" },
      { name: "built-in: recall@3", value: quality.at3, unit: "share" },
      { name: "built-in: recall@5", value: quality.at5, unit: "share" },
      metricWithTarget("built-in: recall@3 miss rate", 1 - quality.at3, "share", 1 - TARGET_RECALL_AT_3),
    ],
    ratios: [
      ...[
        [builtinLabel, builtinTokens] as const,
        ["1,000 tools", thousand] as const,
        ["10,000 tools", tenThousand] as const,
        ["1,000 syllable-word tools", syllables] as const,
      ].flatMap(([label, t]) => [
        ratioOf(`first-turn tokens, ${label}: deferred / eager`, t.deferred, t.eager, "tokens"),
        ratioOf(
          `first-turn tokens, ${label}: deferred, budget / no budget`,
          t.deferred,
          t.unbudgeted,
          "tokens",
        ),
      ]),
      ratioOf("search p50 at 10,000 tools: index / linear scan", ours.p50, baseline.p50, "ms"),
      ratioOf("search p99 at 10,000 tools: index / linear scan", ours.p99, baseline.p99, "ms"),
      ratioOf(
        "self-retrieval recall@5 at 10,000 tools: budget / unbounded",
        prunedSelfRecall,
        fullSelfRecall,
        "share",
      ),
    ],
    notes: [
      "Eager = tools array (OpenAI function format) of every tool with its composed description and schema.",
      "Deferred = tool_search in that format + the <available-deferred-tools> section within the default budget " +
        `(${DEFAULT_DEFERRED_TOOLS_TOKEN_BUDGET} tokens by the built-in estimate); "no budget" lists every summary, ` +
        "as before the budget existed; routing hints are listed apart.",
      "1,000 and 10,000 tools: realistic synthetic catalogs (test/visibility/synthetic-catalog.ts: SaaS, data and " +
        "science services of 4-48 tools each, verb_noun tool names, one-sentence summaries, described parameters).",
      `Latency: ${WARMUP} warm-up queries, then ${QUERIES} sequential searches (60% sentences, 15% bare ids, ` +
        `10% full names, 10% +term, 5% select:) on a prebuilt index; the baseline (${BASELINE_QUERIES} queries) ` +
        "scans every tool's text.",
      "Latency and self-retrieval use a catalog of made-up syllable words (bench/lib/syllable-catalog.ts). " +
        "Self-retrieval: every 20th generated tool searched by four words of its own description; the posting " +
        "budget (1,000) trades a little of it for latency at 10,000 tools and does not touch the built-in catalog.",
      `Recall over ${quality.queries} labelled requests (test/visibility/retrieval-queries.ts).`,
    ],
  };
}
