/**
 * What a console page is: a route (method, path pattern, whether it writes) and a handler that gets the
 * request and the console's context and returns a page, a redirect, a file or a stream.
 */
import type { ServerResponse } from "node:http";
import type { Clock } from "../core/index.js";
import type { Governance } from "../runtime/index.js";
import type { ConsoleAuthorizations } from "./console-authorizations.js";
import type { SafeHtml } from "./console-html.js";

/** The navigation sections; a page names the one it belongs to. */
export type ConsoleSection = "sources" | "invocations" | "evidence" | "jobs" | "papers" | "permissions";

/** One request as a page sees it. */
export interface ConsoleRequest {
  method: "GET" | "POST";
  /** The request's URL with the console's base path removed (`/invocations?source=pubmed`). */
  url: URL;
  /** The values of the pattern's `:name` segments (decoded). */
  params: Readonly<Record<string, string>>;
  /** A POST's form fields (`application/x-www-form-urlencoded`); empty for a GET. */
  form: URLSearchParams;
  /** Who sent it, for per-client limits: the connection's remote address. */
  client: string;
  /**
   * The console's address as the browser reaches it, base path included (`https://ops.example/sciencegate`):
   * the handler's `publicUrl`, else the request's scheme and `Host`.
   */
  consoleUrl: string;
  /**
   * The user who sent it (the access token's subject) when the console is a resource server; its
   * writes are recorded as this user's. @default none: the console's one operator
   */
  principal?: string | undefined;
}

/** What every page gets besides its request. */
export interface ConsoleContext {
  governance: Governance;
  /** Whether write actions (revoke, modes, switches, cancel, retry) are allowed. */
  writable: boolean;
  /** The token each form carries in its `_csrf` field. */
  csrfToken: string;
  clock: Clock;
  /**
   * A link inside the console: the base path, the path and the query (empty values dropped).
   * @param path a console path such as `/invocations/abc`
   * @param query query parameters
   */
  href(path: string, query?: Readonly<Record<string, string | number | undefined>>): string;
  /** Aborted when the console closes (streams end with it). */
  signal: AbortSignal;
  /** The authorizations of protected MCP servers begun from the Sources page and waiting for their callback. */
  authorizations: ConsoleAuthorizations;
  /**
   * The final answer of a thread (the app's, e.g. read from its checkpointer with
   * `checkpointerThreadAnswer`), or `undefined` when the thread has none. Absent: the Evidence page
   * offers no thread to review.
   */
  threadAnswer?: ((threadId: string) => Promise<string | undefined>) | undefined;
}

/** What a page answers. */
export type ConsoleResult =
  | {
      kind: "page";
      title: string;
      section: ConsoleSection;
      body: SafeHtml;
      status?: number;
    }
  | {
      kind: "redirect";
      /** A console path with its query (`/permissions?done=revoked`), or with `external` an absolute URL. */
      location: string;
      /** The location is another site's (an authorization server's page). @default false */
      external?: boolean;
    }
  | {
      kind: "file";
      status?: number;
      contentType: string;
      body: string | Uint8Array;
      headers?: Record<string, string>;
    }
  | {
      kind: "stream";
      /**
       * Writes the answer itself (server-sent events); resolves when the stream ends, at the latest when
       * the console closes (the context's `signal`).
       */
      run(response: ServerResponse): Promise<void>;
    };

/** One route of the console. */
export interface ConsoleRoute {
  method: "GET" | "POST";
  /** A path with `:name` segments, e.g. `/invocations/:id`. */
  pattern: string;
  /** A POST that changes state: refused when the console is read-only. Every POST needs the CSRF token. */
  writes?: boolean;
  handle(request: ConsoleRequest, context: ConsoleContext): Promise<ConsoleResult>;
}
