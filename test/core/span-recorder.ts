/**
 * A real OpenTelemetry trace SDK for test files: a `BasicTracerProvider` and an
 * `AsyncLocalStorageContextManager`, registered globally in every test worker before its first file
 * (test/harness/worker-setup.ts), whatever the files of that worker are. Its sampler records only while
 * a file that called `recordSpans()` runs, and sends that file's spans to its own memory exporter:
 * every other file gets non-recording spans, the branch an app without an SDK takes (the code asks only
 * `span.isRecording()`), so what a file covers never depends on which files ran before it.
 */
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  type Sampler,
  SamplingDecision,
  SimpleSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll } from "vitest";

/** The exporter of the recording file running now; the same object whichever copy of this module loaded. */
interface Route {
  exporter: InMemorySpanExporter | undefined;
  registered: boolean;
}
const ROUTE = Symbol.for("sciencegate.test.spanRoute");
const shared = globalThis as { [ROUTE]?: Route };
shared[ROUTE] ??= { exporter: undefined, registered: false };
const route: Route = shared[ROUTE];

/**
 * Registers the SDK for this process once (the worker setup calls it before every file).
 * @throws Error when another tracer provider or context manager was registered first
 */
export function registerTestTracing(): void {
  if (route.registered) return;
  const routingExporter: SpanExporter = {
    export(spans, done) {
      if (route.exporter) route.exporter.export(spans, done);
      else done({ code: 0 });
    },
    shutdown: async () => {},
  };
  const sampler: Sampler = {
    shouldSample: () => ({
      decision: route.exporter ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD,
    }),
    toString: () => "RecordingFileSampler",
  };
  const provider = new BasicTracerProvider({
    sampler,
    spanProcessors: [new SimpleSpanProcessor(routingExporter)],
  });
  if (!trace.setGlobalTracerProvider(provider)) throw new Error("a tracer provider is already registered");
  if (!context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()))
    throw new Error("a context manager is already registered");
  route.registered = true;
}

/** The spans a file's tests ended, and lookups over them. */
export interface SpanRecorder {
  /** Every ended span since the last test began, in the order they ended. */
  spans(): ReadableSpan[];
  /** The one ended span of this name; fails when there is none or more than one. */
  one(name: string): ReadableSpan;
  /** The ended spans whose parent is `parent`. */
  childrenOf(parent: ReadableSpan): ReadableSpan[];
  /** Forgets the spans ended so far. */
  reset(): void;
}

/**
 * Records the spans of the calling test file, from its `beforeAll` to its `afterAll`: its spans are
 * sampled and sent to this recorder; they are cleared after each test.
 * @returns the recorder
 * @throws Error (in `beforeAll`) when the worker setup did not register the SDK
 */
export function recordSpans(): SpanRecorder {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    if (!route.registered) throw new Error("recordSpans: test/harness/worker-setup.ts did not run");
    route.exporter = exporter;
  });
  afterEach(() => exporter.reset());
  afterAll(() => {
    if (route.exporter === exporter) route.exporter = undefined;
  });
  const spans = () => exporter.getFinishedSpans();
  return {
    spans,
    reset: () => exporter.reset(),
    one(name) {
      const found = spans().filter((s) => s.name === name);
      if (found.length !== 1) {
        throw new Error(
          `expected one span '${name}', found ${found.length} among: ${spans()
            .map((s) => s.name)
            .join(", ")}`,
        );
      }
      return found[0] as ReadableSpan;
    },
    childrenOf(parent) {
      const id = parent.spanContext().spanId;
      return spans().filter((s) => s.parentSpanContext?.spanId === id);
    },
  };
}
