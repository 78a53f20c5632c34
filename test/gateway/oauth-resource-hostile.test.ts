/**
 * The gateway as a resource server reads its issuer's metadata under a bound: an issuer (or whatever
 * answers at its address) that sends an endless metadata document costs the gateway at most
 * `UNCAPPED_REQUEST_MAX_BYTES` of it, and the token is refused with nothing run.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, test } from "vitest";
import { createGatewayServer, serveGatewayHttp } from "../../src/gateway/index.js";
import { UNCAPPED_REQUEST_MAX_BYTES } from "../../src/mcp/response-cap.js";
import { createLab } from "./gateway-harness.js";
import { initializeBody, MCP_POST_HEADERS, rawRequest } from "./http-client.js";

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** An "issuer" whose metadata never ends: 1 MiB chunks until the reader hangs up. */
async function endlessIssuer(): Promise<{ url: string; sent: () => number }> {
  let sent = 0;
  const chunk = Buffer.alloc(1024 * 1024, "x");
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.write('{"issuer":"');
    const pump = () => {
      while (!response.destroyed && response.write(chunk)) sent += chunk.length;
      if (!response.destroyed) response.once("drain", pump);
    };
    response.on("close", () => response.removeAllListeners("drain"));
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sent: () => sent };
}

test("an endless metadata document is read up to the bound; the token is refused, nothing runs", async () => {
  const issuer = await endlessIssuer();
  const lab = await createLab();
  closers.push(() => lab.governance.close());
  const gateway = createGatewayServer({ governance: lab.governance, eager: true });
  const http = await serveGatewayHttp(gateway, { oauth: { issuer: issuer.url } });
  closers.push(async () => {
    await http.close();
    await gateway.close();
  });
  const started = Date.now();
  const answer = await rawRequest(http.url, {
    method: "POST",
    headers: { ...MCP_POST_HEADERS, Authorization: "Bearer a.b.c" },
    body: initializeBody(),
  });
  expect(answer.status).not.toBe(200);
  // Refused by the bound, not by the 10 s timeout of a discovery request (two documents are tried).
  expect(Date.now() - started).toBeLessThan(9_000);
  // What the issuer got out before the gateway hung up: the bound for each of the two documents, plus
  // what the sockets' buffers held.
  expect(issuer.sent()).toBeLessThan(2 * UNCAPPED_REQUEST_MAX_BYTES + 16 * 1024 * 1024);
  expect(await lab.governance.ledger.query({})).toEqual([]);
}, 30_000);
