/**
 * `subscriptions/listen` of 2026-07-28 clients over the gateway's resource subscriptions: before the
 * SDK's listen router opens a stream, each resource uri the stream asks for is subscribed the way a
 * 2025-11-25 session's `resources/subscribe` is (the manifest's `surface` policy, a ledger row, one
 * upstream subscription per server and uri); a refused uri is left out of the filter, so the stream's
 * acknowledgement does not list it. When the stream closes, the uris only it watched are unsubscribed.
 * The servers' updates and list changes reach the streams through the handler's event bus.
 */
import { randomUUID } from "node:crypto";
import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import type { McpHttpHandler } from "@modelcontextprotocol/server";
import type { GatewaySubscriptions, SurfaceSubscriber } from "./gateway-subscriptions.js";
import type { SurfaceCaller } from "./gateway-surface-policy.js";

/** The resource uris one stream may subscribe to; further uris are left out of its filter. */
export const MAX_LISTEN_URIS = 256;

/** Who opens a stream: the governance session of its conversation and its user. */
export type ListenCaller = Pick<SurfaceCaller, "sessionId" | "principal">;

/** The listen streams' side of the gateway's subscriptions. */
export interface ListenGovernance {
  /**
   * Governs the resource subscriptions of a `subscriptions/listen` body.
   * @param body the request's JSON body
   * @param caller the stream's session and user; `undefined` when its conversation is invalid
   * @param signal ends with the stream
   * @returns the body to serve, its filter keeping only the subscriptions allowed
   */
  govern(body: unknown, caller: ListenCaller | undefined, signal: AbortSignal): Promise<unknown>;
  /** Stops receiving the servers' notifications. */
  close(): void;
}

/**
 * @param body a JSON-RPC body
 * @returns whether it is (or holds) a `subscriptions/listen` request
 */
export function isListenBody(body: unknown): boolean {
  return (Array.isArray(body) ? body : [body]).some(
    (message) => (message as { method?: unknown } | null)?.method === "subscriptions/listen",
  );
}

/**
 * Joins the listen streams of a handler to the gateway's subscriptions.
 * @param subscriptions the gateway's subscriptions (absent: no upstream surface, nothing subscribed)
 * @param notify the handler's event bus sugar
 * @returns the governance of the streams' bodies
 */
export function listenGovernance(
  subscriptions: GatewaySubscriptions | undefined,
  notify: McpHttpHandler["notify"],
): ListenGovernance {
  /** Open streams per uri: the gateway's one subscriber holds a uri while any stream watches it. */
  const watching = new Map<string, number>();
  const subscriber: SurfaceSubscriber = {
    key: `stateless:${randomUUID()}`,
    send: async (notification: ServerNotification) => {
      if (notification.method === "notifications/resources/updated") {
        notify.resourceUpdated(notification.params.uri);
      } else if (notification.method === "notifications/resources/list_changed") {
        notify.resourcesChanged();
      } else if (notification.method === "notifications/prompts/list_changed") {
        notify.promptsChanged();
      }
    },
  };
  subscriptions?.attach(subscriber);

  const release = async (caller: SurfaceCaller, uris: readonly string[]) => {
    for (const uri of uris) {
      const left = (watching.get(uri) ?? 1) - 1;
      if (left > 0) {
        watching.set(uri, left);
        continue;
      }
      watching.delete(uri);
      await subscriptions?.unsubscribe(caller, subscriber, uri).catch(() => {});
    }
  };

  const governOne = async (message: unknown, caller: ListenCaller | undefined, signal: AbortSignal) => {
    const request = message as {
      method?: unknown;
      params?: { notifications?: { resourceSubscriptions?: unknown } };
    } | null;
    const asked = request?.params?.notifications?.resourceSubscriptions;
    if (request?.method !== "subscriptions/listen" || !Array.isArray(asked) || asked.length === 0) {
      return message;
    }
    const kept: string[] = [];
    // No question can be asked on a stream: a uri under `approval` is refused (and recorded).
    const surfaceCaller: SurfaceCaller | undefined = caller && { ...caller, signal };
    if (subscriptions && surfaceCaller) {
      // Each uri is a governed request and a ledger row: a stream's list is bounded (the rest is left out).
      for (const uri of [...new Set(asked)].slice(0, MAX_LISTEN_URIS)) {
        if (typeof uri !== "string") continue;
        try {
          await subscriptions.subscribe(surfaceCaller, subscriber, uri);
          kept.push(uri);
          watching.set(uri, (watching.get(uri) ?? 0) + 1);
        } catch {
          // Refused (policy, switched off, unknown uri): left out of the stream's acknowledgement.
        }
      }
      const done = () => void release({ ...surfaceCaller, signal: undefined }, kept);
      if (signal.aborted) done();
      else signal.addEventListener("abort", done, { once: true });
    }
    const params = request.params as Record<string, unknown>;
    const notifications = params.notifications as Record<string, unknown>;
    return {
      ...request,
      params: { ...params, notifications: { ...notifications, resourceSubscriptions: kept } },
    };
  };

  return {
    async govern(body, caller, signal) {
      if (!Array.isArray(body)) return governOne(body, caller, signal);
      const governed: unknown[] = [];
      for (const message of body) governed.push(await governOne(message, caller, signal));
      return governed;
    },
    close() {
      subscriptions?.detach(subscriber.key);
    },
  };
}
