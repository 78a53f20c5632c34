/**
 * What console tests do as a browser would: read a page's CSRF token and rows, post a form (same
 * origin), read a server-sent event stream with fetch's body reader, and make the governed arXiv call
 * whose result offers a PDF candidate.
 */
import { expect } from "vitest";
import type { Governance } from "../../src/runtime/index.js";

/** The paper the fake arXiv provider knows (`test/fixtures/providers/arxiv`). */
export const ARXIV_PAPER_ID = "2403.01234v2";

/**
 * The `_csrf` value of a page's forms.
 * @param page the page's HTML
 */
export function csrfOf(page: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
  if (token === undefined) throw new Error("The page has no form with a CSRF token.");
  return token;
}

/**
 * The `<tr>` of a row with `data-job-id` (the markup from `<tr` to `</tr>`).
 * @param page the page's HTML
 * @param jobId the row's id
 */
export function rowOf(page: string, jobId: string): string {
  const start = page.indexOf(`data-job-id="${jobId}"`);
  if (start < 0) throw new Error(`No row for job ${jobId}.`);
  const open = page.lastIndexOf("<tr", start);
  return page.slice(open, page.indexOf("</tr>", start) + 5);
}

/** The headers Chromium sends with a form of a page served with `Referrer-Policy: no-referrer`. */
export const BROWSER_FORM_HEADERS = { origin: "null", "sec-fetch-site": "same-origin" };

/**
 * Posts a form to the console as the page would (urlencoded).
 * @param base the console's URL
 * @param path the form's action
 * @param fields the fields (`_csrf` included when the test wants it)
 * @param headers where the form comes from @default `Origin` the console's own
 */
export function post(
  base: string,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = { origin: base },
): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
}

/** One server-sent event. */
export interface SseEvent {
  event: string;
  data: string;
}

/** Reads the events of a `text/event-stream` answer, one at a time. */
export function eventReader(response: Response) {
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const comments: string[] = [];
  /** The next event; rejects when the stream ends first. */
  const next = async (): Promise<SseEvent> => {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = "message";
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) comments.push(line);
          else if (line.startsWith("event: ")) event = line.slice(7);
          else if (line.startsWith("data: ")) data.push(line.slice(6));
        }
        if (data.length > 0) return { event, data: data.join("\n") };
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("The event stream ended.");
      buffer += decoder.decode(value, { stream: true });
    }
  };
  return {
    next,
    comments,
    /** Events until one satisfies `wanted` (returned); every event read is kept in `seen`. */
    async until(wanted: (event: SseEvent) => boolean, seen: SseEvent[] = []): Promise<SseEvent> {
      for (;;) {
        const event = await next();
        seen.push(event);
        if (wanted(event)) return event;
      }
    },
    /** Resolves when the server ends the stream (reads and drops what is left). */
    async ended(): Promise<void> {
      for (;;) if ((await reader.read()).done) return;
    },
    cancel: () => reader.cancel().catch(() => undefined),
  };
}

/**
 * The governed `arxiv.prepare_paper_download` call of `session`: its ledger row offers the PDF candidate.
 * @param governance the runtime (its pool serves the bundled arXiv source)
 * @param session the session that may download the candidate
 */
export async function offerPaper(
  governance: Governance,
  session: string,
): Promise<{ mcpInvocationId: string; candidateId: string }> {
  const outcome = await governance.broker.invoke({
    sourceId: "arxiv",
    toolId: "prepare_paper_download",
    input: { id: ARXIV_PAPER_ID },
    sessionId: session,
  });
  const candidateId = outcome.result.artifacts?.[0]?.candidateId;
  if (candidateId === undefined) throw new Error("prepare_paper_download offered no candidate.");
  return { mcpInvocationId: outcome.invocationId, candidateId };
}
