/**
 * A dedicated PostgreSQL connection that `LISTEN`s on one channel and reconnects when it drops:
 * how one replica learns that another changed shared state (see ARCHITECTURE.md "State: who owns
 * what"). Notifications sent while it is down are lost, so `onConnect` runs after every (re)connect,
 * once `LISTEN` is in place, for the owner to reload what it may have missed.
 */
import type { Client, ClientConfig } from "pg";
import { GovernanceError } from "./errors.js";

/** What a listener reports to its owner. */
export interface PostgresListenHandlers {
  /** A notification on the channel, with its payload (`""` when none). */
  onNotification(payload: string): void;
  /** After each (re)connect, once listening: reload whatever a gap may have missed. */
  onConnect?(): Promise<void> | void;
  /** A lost connection or a failed reconnect; the listener retries after `reconnectDelayMs`. */
  onError?(error: unknown): void;
}

/** Options of a listener. */
export interface PostgresListenOptions {
  /** Wait between reconnect attempts, in ms. @default 1000 */
  reconnectDelayMs?: number;
}

/** A running listener; `close()` ends its connection and stops reconnecting. */
export interface PostgresListener {
  /** Whether the connection is up and listening right now. */
  readonly connected: boolean;
  /** Ends the connection. Idempotent. */
  close(): Promise<void>;
}

/** Channel names are spliced into `LISTEN` (it takes no parameters), so only plain identifiers pass. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Starts listening; resolves once the first connection listens and its `onConnect` has run.
 * @param ClientClass the `pg` client class
 * @param config connection settings (the pool's)
 * @param channel a lower-case identifier
 * @param handlers notification, (re)connect and error callbacks
 * @param options reconnect delay
 * @returns the running listener
 * @throws GovernanceError `INVALID_INPUT` for a channel that is not a plain identifier; whatever the
 *   first connection or `onConnect` throws (nothing keeps running then)
 */
export async function startPostgresListener(
  ClientClass: new (config: ClientConfig) => Client,
  config: ClientConfig,
  channel: string,
  handlers: PostgresListenHandlers,
  options: PostgresListenOptions = {},
): Promise<PostgresListener> {
  if (!CHANNEL.test(channel)) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `Invalid LISTEN channel '${channel}': use lower-case letters, digits and _ (at most 63).`,
    );
  }
  const listener = new ChannelListener(() => new ClientClass(config), channel, handlers, options);
  try {
    await listener.connect();
  } catch (error) {
    await listener.close();
    throw error;
  }
  return listener;
}

class ChannelListener implements PostgresListener {
  readonly #newClient: () => Client;
  readonly #channel: string;
  readonly #handlers: PostgresListenHandlers;
  readonly #delayMs: number;
  #client: Client | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(
    newClient: () => Client,
    channel: string,
    handlers: PostgresListenHandlers,
    options: PostgresListenOptions,
  ) {
    this.#newClient = newClient;
    this.#channel = channel;
    this.#handlers = handlers;
    this.#delayMs = options.reconnectDelayMs ?? 1000;
  }

  get connected(): boolean {
    return this.#client !== undefined;
  }

  async connect(): Promise<void> {
    const client = this.#newClient();
    client.on("error", (error) => this.#lost(client, error));
    client.on("end", () => this.#lost(client, new Error("connection ended")));
    client.on("notification", (message) => {
      if (client === this.#client && message.channel === this.#channel) {
        this.#handlers.onNotification(message.payload ?? "");
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    // Listening is background work: it never keeps the process alive by itself (a waiter that needs a
    // notification also polls on a timer of its own). `pg` has the method, its types do not.
    (client as unknown as { unref?: () => void }).unref?.();
    try {
      await this.#handlers.onConnect?.();
    } catch (error) {
      // Listening without the reload would hide the gap: drop the connection and try again.
      this.#client = undefined;
      await client.end().catch(() => {});
      throw error;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    // Referenced again while it ends: an unreferenced socket lets the process run out of work before
    // the server's goodbye arrives, so whoever awaits `close()` (a shutdown sequence) never resumes.
    (client as unknown as { ref?: () => void } | undefined)?.ref?.();
    await client?.end().catch(() => {});
  }

  #lost(client: Client, error: unknown): void {
    if (client !== this.#client) return;
    this.#client = undefined;
    client.end().catch(() => {});
    this.#handlers.onError?.(error);
    this.#retry();
  }

  #retry(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.connect().catch((error: unknown) => {
        this.#handlers.onError?.(error);
        this.#retry();
      });
    }, this.#delayMs);
    // A listener waiting to reconnect must not keep the process alive.
    this.#timer.unref?.();
  }
}
