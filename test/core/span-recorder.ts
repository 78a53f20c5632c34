/**
 * A real OpenTelemetry trace SDK for one test file: a `BasicTracerProvider` exporting to memory and an
 * `AsyncLocalStorageContextManager`, registered globally before the file's tests and removed after.
 */
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll } from "vitest";

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
 * Registers the SDK for the calling test file (`beforeAll`) and unregisters it (`afterAll`); the
 * recorded spans are cleared before each test.
 * @returns the recorder
 */
export function recordSpans(): SpanRecorder {
  const exporter = new InMemorySpanExporter();
  let provider: BasicTracerProvider | undefined;
  let contextManager: AsyncLocalStorageContextManager | undefined;
  beforeAll(() => {
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    contextManager = new AsyncLocalStorageContextManager().enable();
    if (!trace.setGlobalTracerProvider(provider)) throw new Error("a tracer provider is already registered");
    if (!context.setGlobalContextManager(contextManager))
      throw new Error("a context manager is already registered");
  });
  afterEach(() => exporter.reset());
  afterAll(async () => {
    trace.disable();
    context.disable();
    await provider?.shutdown();
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
