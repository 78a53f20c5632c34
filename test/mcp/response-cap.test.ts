import { ReadBuffer } from "@modelcontextprotocol/client";
import { describe, expect, test } from "vitest";
import type { GovernanceError } from "../../src/core/errors.js";
import { readBufferLimitOf } from "../../src/mcp/connection-failure.js";
import {
  createCappedFetch,
  UNCAPPED_REQUEST_MAX_BYTES,
  wireLimitBytes,
  withResponseCap,
} from "../../src/mcp/response-cap.js";

const MiB = 1024 * 1024;
const CAP = 1024;
const LIMIT = wireLimitBytes(CAP);

/** A fetch whose answer is `body`, sent in 64 KiB chunks. */
function answering(body: string, init: ResponseInit = {}) {
  const bytes = new TextEncoder().encode(body);
  return createCappedFetch(async () => {
    let offset = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.length) return controller.close();
        controller.enqueue(bytes.subarray(offset, offset + 64 * 1024));
        offset += 64 * 1024;
      },
    });
    return new Response(stream, init);
  });
}

/** Reads the whole answer inside a call capped at {@link CAP}. */
async function readCapped(fetch: ReturnType<typeof createCappedFetch>) {
  const stops: GovernanceError[] = [];
  const read = withResponseCap(
    CAP,
    (error) => stops.push(error),
    async () => (await fetch("http://127.0.0.1/mcp")).text(),
  );
  return { read, stops };
}

const sse = { headers: { "content-type": "text/event-stream" } };
const event = (size: number, newline = "\n") => `data: ${"x".repeat(size)}${newline}${newline}`;

describe("createCappedFetch", () => {
  test("an SSE stream is counted per event: many events past the limit in total pass", async () => {
    for (const newline of ["\n", "\r\n", "\r"]) {
      const body = event(LIMIT / 4, newline).repeat(8);
      const { read, stops } = await readCapped(answering(body, sse));
      expect(await read).toBe(body);
      expect(stops).toEqual([]);
    }
  });

  test.each([
    ["one SSE event", event(LIMIT + 10), sse],
    ["one SSE event after small ones", event(10).repeat(3) + event(LIMIT + 10), sse],
    ["an SSE event whose lines have no empty line between", "data: x\n".repeat(LIMIT / 4), sse],
    ["a JSON body", `{"text":"${"x".repeat(LIMIT)}"}`, { headers: { "content-type": "application/json" } }],
  ])("%s past the limit stops the read with RESPONSE_TOO_LARGE", async (_label, body, init) => {
    const { read, stops } = await readCapped(answering(body, init));
    await expect(read).rejects.toMatchObject({
      code: "RESPONSE_TOO_LARGE",
      retryable: false,
      data: { maxBytes: CAP },
    });
    expect(stops).toHaveLength(1);
    expect(stops[0]?.data?.bytes).toBeGreaterThan(LIMIT);
    expect(stops[0]?.data?.bytes).toBeLessThanOrEqual(LIMIT + 64 * 1024);
  });

  test("outside a capped call, and for an error status, the answer is read in full up to 16 MiB a message", async () => {
    const body = event(LIMIT + 10);
    expect(await (await answering(body, sse)("http://127.0.0.1/mcp")).text()).toBe(body);
    const { read, stops } = await readCapped(answering(body, { ...sse, status: 500 }));
    expect(await read).toBe(body);
    expect(stops).toEqual([]);
    // Many events past it in total pass: the standalone stream lives long.
    const many = event(4 * MiB).repeat(5);
    expect(await (await answering(many, sse)("http://127.0.0.1/mcp")).text()).toBe(many);
  });

  test.each([
    ["OAuth metadata (JSON)", { headers: { "content-type": "application/json" } }],
    ["one SSE event", sse],
  ])("%s outside a call past 16 MiB stops the read", async (_label, init) => {
    const body = `{"issuer":"${"x".repeat(UNCAPPED_REQUEST_MAX_BYTES)}"}`;
    const response = await answering(body, init)("http://127.0.0.1/.well-known/oauth-authorization-server");
    await expect(response.text()).rejects.toMatchObject({
      code: "RESPONSE_TOO_LARGE",
      message: expect.stringContaining("outside a tool call"),
    });
  });

  test("an error answer past 16 MiB inside a call stops its read, not the call", async () => {
    const body = `{"error":"${"x".repeat(UNCAPPED_REQUEST_MAX_BYTES)}"}`;
    const { read, stops } = await readCapped(answering(body, { status: 401 }));
    await expect(read).rejects.toMatchObject({ code: "RESPONSE_TOO_LARGE" });
    expect(stops).toEqual([]);
  });

  test("the wire limit leaves room for JSON escapes and the data given twice", () => {
    expect(wireLimitBytes(5 * MiB)).toBe(21 * MiB);
  });
});

describe("readBufferLimitOf", () => {
  test("names the limit of the SDK's stdio read buffer overflow, and nothing else", () => {
    const buffer = new ReadBuffer({ maxBufferSize: 16 });
    let overflow: unknown;
    try {
      buffer.append(Buffer.from("x".repeat(17)));
    } catch (error) {
      overflow = error;
    }
    expect(readBufferLimitOf(overflow)).toBe(16);
    expect(readBufferLimitOf(new Error("Connection closed"))).toBeUndefined();
    expect(readBufferLimitOf("ReadBuffer exceeded maximum size of 16 bytes")).toBeUndefined();
  });
});
