/**
 * The console's HTTP checks: the access token (bearer or the cookie of a ?token= visit), the bind rule,
 * the Host header, the security headers on every answer, the POST body rules, mounting under a base
 * path, and the escaping of every value.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createConsoleHandler, serveConsole } from "sciencegate/console";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { escapeHtml, html } from "../../src/console/console-html.js";
import { CONSOLE_COOKIE_MAX_AGE_MS } from "../../src/console/console-security.js";
import type { ConsoleServer } from "../../src/console/index.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { createLab, type Lab } from "../gateway/gateway-harness.js";

const TOKEN = "console-token-0123456789abcdef";
let lab: Lab;
let open: ConsoleServer;
let guarded: ConsoleServer;

beforeAll(async () => {
  lab = await createLab();
  open = await serveConsole({ governance: lab.governance, port: 0 });
  guarded = await serveConsole({ governance: lab.governance, port: 0, token: TOKEN });
});

afterAll(async () => {
  await open?.close();
  await guarded?.close();
  await lab?.governance.close();
});

const get = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, { headers, redirect: "manual" });

describe("html", () => {
  test("escapes every interpolated value and nothing the console wrote", () => {
    const title = `<script>alert(1)</script><img src=x onerror="alert('2')">\`&`;
    const markup = html`<td title="${title}">${title}</td>${[title, html`<b>${title}</b>`]}`.markup;
    expect(markup).not.toContain("<script>");
    expect(markup).not.toContain("<img");
    expect(markup).toBe(
      `<td title="${escapeHtml(title)}">${escapeHtml(title)}</td>${escapeHtml(title)}<b>${escapeHtml(title)}</b>`,
    );
    expect(escapeHtml(title)).toBe(
      "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(&#39;2&#39;)&quot;&gt;&#96;&amp;",
    );
    expect(html`${null}${undefined}${false}${0}`.markup).toBe("0");
  });
});

describe("the bind rule", () => {
  test("a non-loopback bind needs a token, and a token of 16 characters at least", async () => {
    await expect(
      serveConsole({ governance: lab.governance, host: "0.0.0.0", port: 0 }),
    ).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringContaining("SCIENCEGATE_CONSOLE_TOKEN"),
    });
    await expect(serveConsole({ governance: lab.governance, port: 0, token: "short" })).rejects.toMatchObject(
      {
        code: "INVALID_CONFIG",
        message: expect.stringContaining("at least 16"),
      },
    );
    const wide = await serveConsole({ governance: lab.governance, host: "0.0.0.0", port: 0, token: TOKEN });
    try {
      expect((await get(`http://127.0.0.1:${wide.port}/sources`)).status).toBe(401);
    } finally {
      await wide.close();
    }
  });
});

describe("the access token", () => {
  test("without credentials, with a wrong bearer or a forged cookie: 401 and no page", async () => {
    for (const headers of [
      {},
      { authorization: "Bearer wrong-token-0123456789" },
      { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` },
      { cookie: `sciencegate_console=${"0".repeat(64)}` },
      { cookie: `sciencegate_console=${TOKEN}` },
    ]) {
      const response = await get(`${guarded.url}/sources`, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain("Bearer");
      expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(await response.text()).not.toContain("Sources and tools");
    }
    expect((await get(`${guarded.url}/assets/console.js`)).status).toBe(401);
    expect((await get(`${guarded.url}/sources?token=wrong-token-0123456789`)).status).toBe(401);
  });

  test("a bearer token opens the page", async () => {
    const response = await get(`${guarded.url}/sources`, { authorization: `Bearer ${TOKEN}` });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("Sources and tools");
  });

  test("?token= sets an HttpOnly SameSite=Strict cookie holding no token, and redirects without it", async () => {
    const visit = await get(`${guarded.url}/sources?refresh=1&token=${TOKEN}`);
    expect(visit.status).toBe(303);
    expect(visit.headers.get("location")).toBe("/sources?refresh=1");
    const cookie = visit.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(
      /^sciencegate_console=\d+\.[0-9a-f]{64}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/,
    );
    expect(cookie).not.toContain(TOKEN);
    const pair = cookie.split(";")[0] as string;
    const page = await get(`${guarded.url}/sources`, { cookie: pair });
    expect(page.status).toBe(200);
    // Another console with another token does not accept this cookie.
    const other = await serveConsole({ governance: lab.governance, port: 0, token: `${TOKEN}-other` });
    try {
      expect((await get(`${other.url}/sources`, { cookie: pair })).status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe("the cookie expires", () => {
  test("after 12 hours the cookie no longer lets a browser in; an expiry edited later is a forgery", async () => {
    const clock = new ManualClock(Date.now());
    const timed = await serveConsole({ governance: lab.governance, port: 0, token: TOKEN, clock });
    try {
      const visit = await get(`${timed.url}/sources?token=${TOKEN}`);
      const pair = (visit.headers.get("set-cookie") ?? "").split(";")[0] as string;
      const [, expires, mac] = /^sciencegate_console=(\d+)\.([0-9a-f]{64})$/.exec(pair) ?? [];
      expect(Number(expires)).toBe(clock.now() + CONSOLE_COOKIE_MAX_AGE_MS);
      expect((await get(`${timed.url}/sources`, { cookie: pair })).status).toBe(200);
      const extended = `sciencegate_console=${Number(expires) + 86_400_000}.${mac}`;
      expect((await get(`${timed.url}/sources`, { cookie: extended })).status).toBe(401);
      await clock.advance(CONSOLE_COOKIE_MAX_AGE_MS - 1_000);
      expect((await get(`${timed.url}/sources`, { cookie: pair })).status).toBe(200);
      await clock.advance(1_000);
      const expired = await get(`${timed.url}/sources`, { cookie: pair });
      expect(expired.status).toBe(401);
      // The bearer token and a new ?token= visit still work.
      expect((await get(`${timed.url}/sources`, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      expect((await get(`${timed.url}/sources?token=${TOKEN}`)).status).toBe(303);
    } finally {
      await timed.close();
    }
  });
});

describe("requests", () => {
  test("a Host header naming another server is refused (DNS rebinding)", async () => {
    const { port } = open;
    const refused = await rawGet(port, "/sources", "evil.example");
    expect(refused.status).toBe(403);
    expect(refused.body).toContain("Invalid Host header");
    expect((await rawGet(port, "/sources", `localhost:${port}`)).status).toBe(200);
  });

  test("every answer carries the security headers; unknown pages 404, wrong methods 405", async () => {
    const page = await get(`${open.url}/sources`);
    expect(page.headers.get("content-security-policy")).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.headers.get("cache-control")).toBe("no-store");
    const body = await page.text();
    // No inline script: the one script is the console's own file.
    expect(body.match(/<script\b[^>]*>/g)).toEqual(['<script src="/assets/console.js" defer>']);
    const missing = await get(`${open.url}/nothing/<b>here</b>`);
    expect(missing.status).toBe(404);
    const missingBody = await missing.text();
    expect(missingBody).toContain("&lt;b&gt;here&lt;/b&gt;");
    expect(missingBody).not.toContain("<b>here");
    expect(missing.headers.get("content-security-policy")).toContain("script-src 'self'");
    const post = await fetch(`${open.url}/sources`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "a=b",
    });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
  });

  test("assets are the console's own files with their types", async () => {
    const css = await get(`${open.url}/assets/console.css`);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await css.text()).toContain("color-scheme: light dark");
    const js = await get(`${open.url}/assets/console.js`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await js.text()).toContain("sciencegate-theme");
  });
});

describe("writes", () => {
  let writable: ConsoleServer;
  let csrf = "";
  beforeAll(async () => {
    writable = await serveConsole({ governance: lab.governance, port: 0, writable: true });
    const page = await (await get(`${writable.url}/permissions`)).text();
    csrf = /name="_csrf" value="([0-9a-f]{64})"/.exec(page)?.[1] ?? "";
    expect(csrf).not.toBe("");
  });
  afterAll(() => writable.close());

  const setMode = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${writable.url}/sessions/mode`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body,
    });

  test("a form with the token from the console's own origin is applied", async () => {
    const response = await setMode(`_csrf=${csrf}&session=w-ok&mode=always_allow`, {
      origin: writable.url,
      "sec-fetch-site": "same-origin",
    });
    expect(response.status).toBe(303);
    expect(lab.governance.permissions.approvalMode("w-ok")).toBe("always_allow");
  });

  test.each([
    ["no CSRF token", "session=w-1&mode=always_allow", {}, "no CSRF token"],
    ["a wrong CSRF token", `_csrf=${"0".repeat(64)}&session=w-2&mode=always_allow`, {}, "not valid"],
    [
      "another origin",
      "CSRF&session=w-3&mode=always_allow",
      { origin: "http://evil.example" },
      "Cross-origin",
    ],
    ["an opaque origin", "CSRF&session=w-4&mode=always_allow", { origin: "null" }, "opaque origin"],
    [
      "a cross-site fetch",
      "CSRF&session=w-5&mode=always_allow",
      { "sec-fetch-site": "cross-site" },
      "Cross-site",
    ],
  ])("%s is refused with 403 and changes nothing", async (_name, body, headers, reason) => {
    const session = /session=([\w-]+)/.exec(body)?.[1] as string;
    const response = await setMode(body.replace("CSRF", `_csrf=${csrf}`), headers);
    expect(response.status).toBe(403);
    expect(await response.text()).toContain(reason);
    expect(lab.governance.permissions.approvalMode(session)).toBe("ask_for_dangerous");
  });

  test("a body that is not a form is 415; one over the cap is 413", async () => {
    const json = await fetch(`${writable.url}/sessions/mode`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ _csrf: csrf, session: "w-6", mode: "always_allow" }),
    });
    expect(json.status).toBe(415);
    const big = await fetch(`${writable.url}/sessions/mode`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `_csrf=${csrf}&session=w-7&mode=always_allow&pad=${"x".repeat(1024 * 1024)}`,
    });
    expect(big.status).toBe(413);
    expect(lab.governance.permissions.approvalMode("w-7")).toBe("ask_for_dangerous");
  });

  test("a read-only console refuses a valid write with 403", async () => {
    const page = await (await get(`${open.url}/permissions`)).text();
    const token = /name="_csrf" value="([0-9a-f]{64})"/.exec(page)?.[1] ?? "";
    const response = await fetch(`${open.url}/sessions/mode`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `_csrf=${token}&session=w-8&mode=always_allow`,
    });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain("read-only");
    expect(lab.governance.permissions.approvalMode("w-8")).toBe("ask_for_dangerous");
  });
});

describe("mounted in an app's server", () => {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    const handler = createConsoleHandler({ governance: lab.governance, basePath: "/sciencegate/" });
    server = createServer((req, res) =>
      handler(req, res, () => {
        res.end("the app's own page");
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test("serves under its base path, links stay under it, and the rest goes to the app", async () => {
    const root = await get(`${origin}/sciencegate`);
    expect(root.status).toBe(303);
    expect(root.headers.get("location")).toBe("/sciencegate/sources");
    const page = await (await get(`${origin}/sciencegate/sources`)).text();
    expect(page).toContain('href="/sciencegate/assets/console.css"');
    expect(page).toContain('href="/sciencegate/invocations"');
    expect(page).not.toMatch(/href="\/(?!sciencegate)/);
    expect(await (await get(`${origin}/other`)).text()).toBe("the app's own page");
    expect(await (await get(`${origin}/sciencegateX/sources`)).text()).toBe("the app's own page");
  });

  test("a base path that is not a path is refused", () => {
    expect(() => createConsoleHandler({ governance: lab.governance, basePath: "sciencegate" })).toThrow(
      /must be a path/,
    );
  });
});

/** A GET with a chosen Host header (fetch does not let a caller set it). */
async function rawGet(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}
