/**
 * Registers the forwarded server surface in one session's method table (its 2025-11-25 SDK `Server`
 * and the table the 2026-07-28 face dispatches through): prompts, resources (the
 * gateway's own `sciencegate://` ones first, then the servers'), resource templates, subscriptions,
 * completion and log level. The handlers only adapt the SDK's request to the transport-free functions
 * of `gateway-prompts.ts`, `gateway-upstream-resources.ts`, `gateway-subscriptions.ts` and
 * `gateway-completion.ts`.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  type LoggingLevel,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
  type ServerNotification,
  type ServerRequest,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { type CompleteParams, completeGateway, setGatewayLogLevel } from "./gateway-completion.js";
import { getGatewayPrompt, listGatewayPrompts } from "./gateway-prompts.js";
import type { GatewaySubscriptions, SurfaceSubscriber } from "./gateway-subscriptions.js";
import type { SurfaceCaller, SurfaceRuntime } from "./gateway-surface-policy.js";
import {
  GATEWAY_RESOURCE_SCHEME,
  listUpstreamResources,
  listUpstreamResourceTemplates,
  readUpstreamResource,
} from "./gateway-upstream-resources.js";

/** The gateway's own resources of a session (its papers, its research object). */
export interface LocalResources {
  list(): Promise<Resource[]>;
  /** Reads one `sciencegate://` uri. */
  read(uri: string): Promise<ReadResourceResult>;
}

/** What one session's surface needs. */
export interface SessionSurface {
  runtime: SurfaceRuntime;
  subscriptions: GatewaySubscriptions;
  subscriber: SurfaceSubscriber;
  /** The caller of one request (its signal, and the question through that request). */
  caller(request: RequestHandlerExtra<ServerRequest, ServerNotification>): SurfaceCaller;
  /** The session's own resources, if any. */
  local?: LocalResources | undefined;
  /** Keeps the client's log level (it filters the log messages relayed to the client). */
  setLogLevel(level: LoggingLevel): void;
}

/**
 * Declares prompts, resources (with `subscribe` and `listChanged`), completions and logging in a
 * session's method table and answers their requests. Call it before the server connects.
 * @param server where the session's methods are registered (`GatewaySession.methods`)
 * @param surface runtime, subscriptions, the caller of a request and the session's own resources
 */
export function serveGatewaySurface(
  server: Pick<Server, "registerCapabilities" | "setRequestHandler">,
  surface: SessionSurface,
): void {
  const { runtime, local } = surface;
  server.registerCapabilities({
    prompts: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    completions: {},
    logging: {},
  });
  server.setRequestHandler(ListPromptsRequestSchema, (_request, extra) =>
    listGatewayPrompts(runtime, surface.caller(extra)),
  );
  server.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
    getGatewayPrompt(runtime, surface.caller(extra), request.params),
  );
  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => ({
    resources: [
      ...((await local?.list()) ?? []),
      ...(await listUpstreamResources(runtime, surface.caller(extra))),
    ],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (_request, extra) => ({
    resourceTemplates: await listUpstreamResourceTemplates(runtime, surface.caller(extra)),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => {
    const { uri } = request.params;
    if (local !== undefined && uri.startsWith(GATEWAY_RESOURCE_SCHEME)) return local.read(uri);
    return readUpstreamResource(runtime, surface.caller(extra), uri);
  });
  server.setRequestHandler(SubscribeRequestSchema, (request, extra) =>
    surface.subscriptions.subscribe(surface.caller(extra), surface.subscriber, request.params.uri),
  );
  server.setRequestHandler(UnsubscribeRequestSchema, (request, extra) =>
    surface.subscriptions.unsubscribe(surface.caller(extra), surface.subscriber, request.params.uri),
  );
  server.setRequestHandler(CompleteRequestSchema, (request, extra) =>
    completeGateway(runtime, surface.caller(extra), request.params as CompleteParams),
  );
  server.setRequestHandler(SetLevelRequestSchema, async (request, extra) => {
    surface.setLogLevel(request.params.level);
    return setGatewayLogLevel(runtime, surface.caller(extra), request.params.level);
  });
}
