/**
 * A real OpenTelemetry trace SDK for test files: a `BasicTracerProvider` and an
 * `AsyncLocalStorageContextManager`, registered globally once per test process (a module's tracer,
 * taken at import, keeps the provider it first saw, and files share modules when the run does not
 * isolate them), with each file's spans exported to that file's own memory exporter.
 */
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll } from "vitest";

/** Where the process-wide provider sends ended spans: the exporter of the file running now. */
const route: { exporter: InMemorySpanExporter | undefined } = { exporter: undefined };

const routingExporter: SpanExporter = {
  export(spans, done) {
    if (route.exporter) route.exporter.export(spans, done);
    else done({ code: 0 });
  },
  shutdown: async () => {},
};

let registered = false;

function registerOnce(): void {
  if (registered) return;
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(routingExporter)] });
  if (!trace.setGlobalTracerProvider(provider)) throw new Error("a tracer provider is already registered");
  if (!context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()))
    throw new Error("a context manager is already registered");
  registered = true;
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
 * Registers the SDK for the process if no file did yet, and sends the spans ended from `beforeAll` to
 * `afterAll` of the calling test file to this recorder; they are cleared before each test.
 * @returns the recorder
 */
export function recordSpans(): SpanRecorder {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    registerOnce();
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
