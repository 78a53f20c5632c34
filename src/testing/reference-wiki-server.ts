/**
 * A small LLM Wiki on loopback for tests and the demo: the three endpoints of the bridge's HTTP contract
 * (`POST /api/v1/query/structured`, `GET /api/v1/wiki/{path}`, `POST /api/v1/wiki/pages/batch`) over a
 * folder of markdown pages with an optional front matter, Bearer auth optional. It records every request,
 * and also answers the answer-generation endpoint `POST /api/v1/query` so that tests can prove the
 * bridge never calls it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join, relative, sep } from "node:path";

/** Options of `startReferenceWikiServer`. */
export interface ReferenceWikiOptions {
  /** The folder of `*.md` pages (searched recursively); a page's path is its relative file path without `.md`. */
  pagesDir: string;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string;
  /** @default 0 (a free port) */
  port?: number;
}

/** One request the reference wiki received. */
export interface ReferenceWikiRequest {
  method: string;
  /** The path with its query, as sent (still percent-encoded). */
  path: string;
  authorization: string | undefined;
  body: unknown;
}

/** A running reference wiki. */
export interface ReferenceWiki {
  /** `http://127.0.0.1:<port>`: the value for `SCIENCE_AGENT_LLM_WIKI_URL`. */
  origin: string;
  /** Every request received, in order. */
  requests: ReferenceWikiRequest[];
  /** Stops the server. */
  close(): Promise<void>;
}

/** One page of the reference wiki as its single-page endpoint returns it. */
export type ReferencePage = Record<string, unknown> & {
  path: string;
  page_id: string;
  title: string;
  body: string;
};

/**
 * Reads a folder of markdown pages. Front matter lines are `key: value`; a value starting with `[`, `{`
 * or `"` is JSON.
 * @param dir the folder
 * @returns path → page
 */
export function loadReferencePages(dir: string): Map<string, ReferencePage> {
  const pages = new Map<string, ReferencePage>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".md")) continue;
    const file = join(entry.parentPath, entry.name);
    const path = relative(dir, file).split(sep).join("/").replace(/\.md$/, "");
    const text = readFileSync(file, "utf8");
    const match = /^---\n([\s\S]*?)\n---\n?/.exec(text);
    const meta: Record<string, unknown> = {};
    for (const line of match?.[1]?.split("\n") ?? []) {
      const at = line.indexOf(":");
      if (at <= 0) continue;
      const value = line.slice(at + 1).trim();
      meta[line.slice(0, at).trim()] = /^[[{"]/.test(value) ? JSON.parse(value) : value;
    }
    const body = (match ? text.slice(match[0].length) : text).trim();
    const title = typeof meta.title === "string" ? meta.title : path;
    pages.set(path, { ...meta, path, page_id: path.replace(/\//g, "-"), title, body });
  }
  return pages;
}

/**
 * Starts the reference wiki on 127.0.0.1.
 * @param options the pages folder, optional token and port
 * @returns the running wiki with its origin and request log
 * @example
 * const wiki = await startReferenceWikiServer({ pagesDir: "test/fixtures/wiki" });
 * process.env.SCIENCE_AGENT_LLM_WIKI_URL = wiki.origin;
 */
export async function startReferenceWikiServer(options: ReferenceWikiOptions): Promise<ReferenceWiki> {
  const pages = loadReferencePages(options.pagesDir);
  const requests: ReferenceWikiRequest[] = [];
  const server = createServer((req, res) => {
    readBody(req).then(
      (body) => {
        requests.push({
          method: req.method ?? "GET",
          path: req.url ?? "/",
          authorization: req.headers.authorization,
          body,
        });
        if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
          return send(res, 401, { detail: "Missing or invalid bearer token" });
        }
        route(pages, req.method ?? "GET", req.url ?? "/", body, res);
      },
      () => send(res, 400, { detail: "Invalid JSON body" }),
    );
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function route(
  pages: Map<string, ReferencePage>,
  method: string,
  url: string,
  body: unknown,
  res: ServerResponse,
): void {
  send(res, ...answer(pages, method, url, body));
}

/** The status and JSON body of one request. */
function answer(
  pages: Map<string, ReferencePage>,
  method: string,
  url: string,
  body: unknown,
): [number, unknown] {
  const path = url.split("?")[0] ?? "/";
  const input = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  if (method === "POST" && path === "/api/v1/query/structured") {
    const topK = typeof input.top_k === "number" ? input.top_k : 5;
    return [
      200,
      {
        question: input.question,
        mode: input.mode,
        sources: search(pages, String(input.question ?? ""), topK),
      },
    ];
  }
  if (method === "POST" && path === "/api/v1/query") {
    return [200, { answer: "Generated answers are not part of the bridge contract." }];
  }
  if (method === "POST" && path === "/api/v1/wiki/pages/batch") return [200, batch(pages, input)];
  if (method === "GET" && path.startsWith("/api/v1/wiki/")) {
    const page = pages.get(decodeURIComponent(path.slice("/api/v1/wiki/".length)));
    return page ? [200, page] : [404, { detail: "Page not found" }];
  }
  return [404, { detail: "Not found" }];
}

function search(
  pages: Map<string, ReferencePage>,
  question: string,
  topK: number,
): Record<string, unknown>[] {
  const terms = question
    .toLowerCase()
    .split(/\W+/)
    .filter((t) => t.length > 1);
  const scored = [...pages.values()].map((page) => {
    const title = page.title.toLowerCase();
    const text = `${page.body} ${JSON.stringify(page.tags ?? [])}`.toLowerCase();
    const score = terms.reduce((sum, t) => sum + (title.includes(t) ? 3 : 0) + text.split(t).length - 1, 0);
    return { page, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.page.path.localeCompare(b.page.path))
    .slice(0, topK)
    .map(({ page, score }) => ({ ...page, score }));
}

function batch(pages: Map<string, ReferencePage>, input: Record<string, unknown>): Record<string, unknown> {
  const paths = Array.isArray(input.paths) ? input.paths.map(String) : [];
  const budget = typeof input.max_tokens === "number" ? input.max_tokens : 8000;
  const enforce = input.token_budget_enabled === true;
  const out: Record<string, unknown>[] = [];
  const missing: string[] = [];
  let used = 0;
  let truncated = false;
  for (const path of paths) {
    const page = pages.get(path);
    if (!page) {
      missing.push(path);
      continue;
    }
    const tokens = Math.ceil(page.body.length / 4);
    if (enforce && used + tokens > budget) {
      truncated = true;
      continue;
    }
    used += tokens;
    // Like a real batch endpoint, the light page form leaves out sources and update times.
    out.push({
      path: page.path,
      page_id: page.page_id,
      title: page.title,
      category: page.category,
      tags: page.tags,
      body: page.body,
    });
  }
  return { pages: out, missing, token_budget: budget, tokens_used: used, truncated };
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? undefined : JSON.parse(text);
}
