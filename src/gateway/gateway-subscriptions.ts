/**
 * Resource subscriptions of every gateway session, over one upstream subscription per server and uri:
 * the first session that subscribes to a uri subscribes upstream, the last that leaves unsubscribes,
 * and the server's `notifications/resources/updated` reaches each session subscribed to that uri. The
 * servers' `resources/list_changed` and `prompts/list_changed` reach every session. A subscriber is a
 * key and a way to send it a notification, so any transport (a session, a stream) can be one.
 */
import { McpError, type ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import type { SurfaceNotification } from "../mcp/index.js";
import {
  governedSurfaceRequest,
  RESOURCE_NOT_FOUND,
  type SurfaceCaller,
  type SurfaceRuntime,
  surfaceServerOf,
} from "./gateway-surface-policy.js";
import { resourceServerOf } from "./gateway-upstream-resources.js";

/** One session (or stream) that receives the notifications it subscribed to. */
export interface SurfaceSubscriber {
  /** Unique among the subscribers of one gateway. */
  key: string;
  /** Sends a notification; a failure is reported, never thrown to the server. */
  send(notification: ServerNotification): Promise<void>;
}

/** The subscriptions of one gateway. */
export class GatewaySubscriptions {
  readonly #runtime: SurfaceRuntime;
  readonly #onError: (error: unknown) => void;
  /** `serverId\0uri` → the subscribers' keys. */
  readonly #byUri = new Map<string, Set<string>>();
  readonly #subscribers = new Map<string, SurfaceSubscriber>();
  readonly #stop: () => void;

  /**
   * @param runtime pool (its notifications), catalog and ledger
   * @param onError receives notifications that could not be sent
   */
  constructor(runtime: SurfaceRuntime, onError: (error: unknown) => void) {
    this.#runtime = runtime;
    this.#onError = onError;
    this.#stop =
      runtime.pool.onNotification?.((serverId, notification) => this.#forward(serverId, notification)) ??
      (() => {});
  }

  /** Adds a subscriber for the list changes (a session, as it connects). */
  attach(subscriber: SurfaceSubscriber): void {
    this.#subscribers.set(subscriber.key, subscriber);
  }

  /**
   * Subscribes a subscriber to a uri: upstream once per server and uri, a ledger row per request.
   * @param caller session, principal, question and signal
   * @param subscriber who gets the updates
   * @param uri the resource's uri
   * @throws McpError -32002 for a uri no server offers; a refusal or the server's error
   */
  async subscribe(
    caller: SurfaceCaller,
    subscriber: SurfaceSubscriber,
    uri: string,
  ): Promise<Record<string, never>> {
    this.attach(subscriber);
    const serverId = await this.#serverOf(caller, uri);
    const key = `${serverId}\0${uri}`;
    const keys = this.#byUri.get(key);
    const server = surfaceServerOf(this.#runtime, serverId, "resources");
    // Already subscribed upstream: this session's subscription is governed and recorded all the same.
    await governedSurfaceRequest(this.#runtime, caller, {
      server,
      method: "resources/subscribe",
      name: uri,
      params: { uri },
      upstream: keys === undefined || keys.size === 0,
    });
    const set = this.#byUri.get(key) ?? new Set<string>();
    set.add(subscriber.key);
    this.#byUri.set(key, set);
    return {};
  }

  /**
   * Unsubscribes a subscriber from a uri; the last one out unsubscribes upstream.
   * @param caller session, principal and signal
   * @param subscriber who no longer gets the updates
   * @param uri the resource's uri
   */
  async unsubscribe(
    caller: SurfaceCaller,
    subscriber: SurfaceSubscriber,
    uri: string,
  ): Promise<Record<string, never>> {
    const serverId = await this.#serverOf(caller, uri);
    const key = `${serverId}\0${uri}`;
    const set = this.#byUri.get(key);
    set?.delete(subscriber.key);
    const last = set !== undefined && set.size === 0;
    if (last) this.#byUri.delete(key);
    const server = surfaceServerOf(this.#runtime, serverId, "resources");
    await governedSurfaceRequest(this.#runtime, caller, {
      server,
      method: "resources/unsubscribe",
      name: uri,
      params: { uri },
      upstream: last,
    });
    return {};
  }

  /**
   * Forgets a subscriber (its session ended): the uris only it watched are unsubscribed upstream.
   * @param key the subscriber's key
   */
  detach(key: string): void {
    this.#subscribers.delete(key);
    for (const [entry, set] of this.#byUri) {
      if (!set.delete(key) || set.size > 0) continue;
      this.#byUri.delete(entry);
      const [serverId, uri] = entry.split("\0") as [string, string];
      void this.#runtime.pool.request?.(serverId, "resources/unsubscribe", { uri }).catch(this.#onError);
    }
  }

  /** Stops following the servers' notifications. */
  close(): void {
    this.#stop();
  }

  async #serverOf(caller: SurfaceCaller, uri: string): Promise<string> {
    const server = await resourceServerOf(this.#runtime, caller, uri);
    if (server === undefined) {
      throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: '${uri}' (resources/list names them).`, {
        uri,
      });
    }
    return server.serverId;
  }

  #forward(serverId: string, notification: SurfaceNotification): void {
    if (notification.method === "notifications/resources/updated") {
      const uri = notification.params?.uri;
      if (typeof uri !== "string") return;
      for (const key of this.#byUri.get(`${serverId}\0${uri}`) ?? []) {
        this.#send(key, { method: "notifications/resources/updated", params: { uri } });
      }
      return;
    }
    // A denied part changes nothing any client sees.
    const part = notification.method === "notifications/prompts/list_changed" ? "prompts" : "resources";
    if (surfaceServerOf(this.#runtime, serverId, part).policy === "denied") return;
    for (const key of this.#subscribers.keys()) this.#send(key, { method: notification.method });
  }

  #send(key: string, notification: ServerNotification): void {
    const subscriber = this.#subscribers.get(key);
    subscriber?.send(notification).catch(this.#onError);
  }
}
