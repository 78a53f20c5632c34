/**
 * `serveConsole`: the console on its own Node HTTP server (what `sciencegate console` runs): loopback by
 * default, a token required on any other address, and the `Host` header checked against the bound
 * names (DNS rebinding) before the console sees a request.
 */

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { requireGovernanceOption } from "../core/index.js";
import { createHostCheck } from "../gateway/index.js";
import { type ConsoleHandlerOptions, createConsoleHandler } from "./console-handler.js";
import { assertConsoleBind, setSecurityHeaders } from "./console-security.js";

/** Options of `serveConsole`. */
export interface ConsoleServerOptions extends Omit<ConsoleHandlerOptions, "basePath"> {
  /** The address to bind. @default "127.0.0.1" */
  host?: string;
  /** The port; 0 picks a free one. @default 0 */
  port?: number;
  /** Host names a request may name besides the bound ones (a name behind a reverse proxy). */
  allowedHosts?: readonly string[];
}

/** A listening console. */
export interface ConsoleServer {
  /** `http://host:port` (the link to open; with a token, add `/?token=<token>` once). */
  url: string;
  host: string;
  port: number;
  /** Ends the event streams and stops listening. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves the console over an open runtime.
 * @param options `governance` (the runtime), bind address and port, token, writes, allowed host names
 * @returns the listening server
 * @throws GovernanceError `INVALID_CONFIG` for a non-loopback bind without a token or a short token
 */
export async function serveConsole(options: ConsoleServerOptions): Promise<ConsoleServer> {
  requireGovernanceOption(options, "serveConsole");
  const host = options.host ?? "127.0.0.1";
  // A resource server authenticates every request: the bind rule asks only that someone does.
  if (options.oauth === undefined) assertConsoleBind(host, options.token);
  // The audience defaults to the URL served, known once listening.
  const needsUrl = options.oauth !== undefined && options.oauth.audience === undefined;
  let handler = needsUrl ? undefined : createConsoleHandler(options);
  let hostAllowed: (header: string | undefined) => boolean = () => false;
  const server: Server = createServer((request, response) => {
    if (!hostAllowed(request.headers.host)) {
      setSecurityHeaders(response);
      response.statusCode = 403;
      response.setHeader("Content-Type", "text/plain; charset=utf-8");
      response.end(`Invalid Host header: ${request.headers.host ?? "(none)"}\n`);
      return;
    }
    if (handler === undefined) {
      response.statusCode = 503;
      response.end();
      return;
    }
    handler(request, response);
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  hostAllowed = createHostCheck({ host, allowedHosts: options.allowedHosts ?? [] });
  const shownHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
  const url = `http://${shownHost}:${port}`;
  if (handler === undefined && options.oauth !== undefined) {
    handler = createConsoleHandler({ ...options, oauth: { ...options.oauth, audience: `${url}/` } });
  }
  let closed: Promise<void> | undefined;
  return {
    url,
    host,
    port,
    close() {
      closed ??= new Promise<void>((resolve) => {
        handler?.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
