/**
 * The part of the ledger contract about objects kept with rows (`LedgerReader.objects`): an append
 * stores a row and its objects all or nothing, and appends made together may share a commit without
 * one refused row costing the others theirs. A store without `objects` must refuse inline objects.
 */
import { expect, test } from "vitest";
import { type ContentObject, contentObject, jsonObject } from "../../governance/audit/content-object.js";
import type { InvocationRecord } from "../../governance/audit/index.js";
import type { LedgerUnderTest } from "./ledger-under-test.js";

let counter = 0;
function row(overrides: Partial<InvocationRecord> = {}): InvocationRecord {
  counter += 1;
  return {
    invocationId: `obj-inv-${counter}`,
    sessionId: "s-objects",
    sourceId: "pubmed",
    toolId: "search",
    status: "ok",
    startedAt: new Date(Date.UTC(2025, 5, 1) + counter * 1000).toISOString(),
    finishedAt: new Date(Date.UTC(2025, 5, 1) + counter * 1000 + 5).toISOString(),
    durationMs: 5,
    attempts: 1,
    cacheHit: false,
    queueWaitMs: 0,
    ...overrides,
  };
}

/** A row referencing its request and result, with both objects. */
function call(label: string, overrides: Partial<InvocationRecord> = {}) {
  const request = jsonObject({ sourceId: "pubmed", toolId: "search", input: { query: label } });
  const result = jsonObject({ records: [{ title: `about ${label}` }] });
  const record = row({ requestRef: request.ref, normalizedRef: result.ref, ...overrides });
  return { record, objects: [request, result] as ContentObject[] };
}

const text = (bytes: Uint8Array | undefined) => (bytes ? new TextDecoder().decode(bytes) : undefined);

/**
 * Registers the objects tests inside a ledger conformance suite.
 * @param open returns a fresh ledger that the suite closes after the test
 */
export function ledgerObjectsTests(open: () => Promise<LedgerUnderTest>): void {
  test("without `objects`, append refuses inline objects with INVALID_INPUT and records nothing", async () => {
    const ledger = await open();
    if (ledger.objects !== undefined) return;
    const { record, objects } = call("no objects");
    await expect(ledger.append(record, objects)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(await ledger.get(record.invocationId)).toBeUndefined();
  });

  test("objects appended with a row are stored with it and read back by address", async () => {
    const ledger = await open();
    if (ledger.objects === undefined) return;
    const { record, objects } = call("brca1");
    await ledger.append(record, objects);
    expect(await ledger.get(record.invocationId)).toEqual(record);
    for (const object of objects) {
      expect(text(await ledger.objects.get(object.sha256))).toBe(text(object.bytes));
    }
    expect(await ledger.objects.get("0".repeat(64))).toBeUndefined();
    expect(await ledger.objects.verifyAll()).toEqual([]);
  });

  test("an object shared by two rows is kept once and stays readable", async () => {
    const ledger = await open();
    if (ledger.objects === undefined) return;
    const first = call("shared");
    const second = row({ requestRef: first.objects[0]?.ref ?? "" });
    await ledger.append(first.record, first.objects);
    await ledger.append(second, [first.objects[0] as ContentObject]);
    expect(text(await ledger.objects.get(first.objects[0]?.sha256 ?? ""))).toContain("shared");
    expect((await ledger.query({ sessionId: "s-objects" })).length).toBe(2);
  });

  test("a refused row stores none of its objects (all or nothing)", async () => {
    const ledger = await open();
    if (ledger.objects === undefined) return;
    const first = call("first", { threadId: "t-obj", toolCallId: "c-obj" });
    await ledger.append(first.record, first.objects);
    const twin = call("twin", { threadId: "t-obj", toolCallId: "c-obj" });
    await expect(ledger.append(twin.record, twin.objects)).rejects.toMatchObject({ code: "DUPLICATE_ID" });
    for (const object of twin.objects) expect(await ledger.objects.get(object.sha256)).toBeUndefined();
  });

  test("an authorization's objects are stored with it; a refused twin stores none of its own", async () => {
    const ledger = await open();
    if (ledger.objects === undefined) return;
    const question = jsonObject({ index: 1, message: "Really delete x?" });
    const authorization = {
      id: `obj-auth-${++counter}`,
      sessionId: "s-objects",
      sourceId: "up",
      toolId: "confirm_action",
      action: "elicitation",
      resource: question.ref,
      decisionSource: "upstream_asked",
      createdAt: new Date(Date.UTC(2025, 5, 1) + counter * 1000).toISOString(),
      epoch: 0,
    };
    await ledger.appendAuthorization(authorization, [question]);
    expect(await ledger.getAuthorization(authorization.id)).toEqual(authorization);
    expect(text(await ledger.objects.get(question.sha256))).toBe(text(question.bytes));
    const twin = jsonObject({ index: 1, message: "another question" });
    await expect(
      ledger.appendAuthorization({ ...authorization, resource: twin.ref }, [twin]),
    ).rejects.toMatchObject({ code: "DUPLICATE_ID" });
    expect(await ledger.objects.get(twin.sha256)).toBeUndefined();
  });

  test("an object past maxInlineBytes is refused with INVALID_INPUT, and its row is not recorded", async () => {
    const ledger = await open();
    if (ledger.objects === undefined) return;
    const big = contentObject(new Uint8Array(ledger.objects.maxInlineBytes + 1));
    const record = row({ rawRef: big.ref });
    await expect(ledger.append(record, [big])).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(await ledger.get(record.invocationId)).toBeUndefined();
    expect(await ledger.objects.get(big.sha256)).toBeUndefined();
  });

  test("appends started together all land, in order; a refused one among them costs the others nothing", async () => {
    const ledger = await open();
    if (ledger.objects === undefined) return;
    const calls = Array.from({ length: 30 }, (_, i) =>
      call(`batch ${i}`, { threadId: "t-batch", toolCallId: `c-${i === 17 ? 3 : i}` }),
    );
    const settled = await Promise.allSettled(calls.map((c) => ledger.append(c.record, c.objects)));
    expect(settled.map((s) => s.status)).toEqual(calls.map((_, i) => (i === 17 ? "rejected" : "fulfilled")));
    expect(settled[17]).toMatchObject({ reason: { code: "DUPLICATE_ID" } });
    const ids = (await ledger.query({ sessionId: "s-objects" })).map((r) => r.invocationId);
    expect(ids).toEqual(calls.filter((_, i) => i !== 17).map((c) => c.record.invocationId));
    for (const [i, c] of calls.entries()) {
      const stored = await ledger.objects.get(c.objects[1]?.sha256 ?? "");
      expect(stored === undefined, `objects of row ${i}`).toBe(i === 17);
    }
  });

  test("a row is readable as soon as its append settles", async () => {
    const ledger = await open();
    const records = Array.from({ length: 50 }, (_, i) => row({ threadId: "t-now", toolCallId: `c-${i}` }));
    for (const [i, record] of records.entries()) {
      await ledger.append(record);
      expect(await ledger.findByCall("t-now", `c-${i}`)).toEqual(record);
    }
  });
}
