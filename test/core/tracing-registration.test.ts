/**
 * Every test worker registers the tracing SDK before its first file (test/harness/worker-setup.ts),
 * and a file that does not record spans gets non-recording ones, the branch of an app without an SDK,
 * whichever files ran before it in the same worker.
 */
import { type ProxyTracerProvider, trace } from "@opentelemetry/api";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { expect, test } from "vitest";
import { recordingActiveSpan, SPAN_NAMES, SpanKind, startSpan } from "../../src/core/tracing.js";

test("the SDK is registered before this file runs, and a span started here does not record", () => {
  const provider = trace.getTracerProvider() as ProxyTracerProvider;
  expect(provider.getDelegate()).toBeInstanceOf(BasicTracerProvider);
  const span = startSpan(SPAN_NAMES.invoke, { kind: SpanKind.INTERNAL });
  expect(span.isRecording()).toBe(false);
  span.end();
  expect(recordingActiveSpan()).toBeUndefined();
});
