/**
 * Connecting an SDK client in the protocol revision a server speaks, on one transport and so on one
 * process: over HTTP the SDK's own negotiation (`server/discover`, then `initialize` as the fallback);
 * over stdio and other single-peer transports the 2025 `initialize` first, which every 2025 server
 * expects as its first message, and a move to 2026-07-28 on the same process only when the server
 * answers that it does not support that revision (ARCHITECTURE.md "Protocol revisions").
 */
import {
  type Client,
  type JSONRPCMessage,
  ProtocolError,
  ProtocolErrorCode,
  type Transport,
  type TransportSendOptions,
  type VersionNegotiationOptions,
} from "@modelcontextprotocol/client";
import type { ProtocolSetting } from "../config/index.js";
import { isNetworkTransport, isSseTransport } from "./transports.js";

/** The one 2026-era revision the pool speaks. */
export const MODERN_REVISION = "2026-07-28";

/**
 * One started transport shared by the clients that take turns on it while the revision is found out:
 * it starts once, hands inbound messages to the view in use, and closes only when the view in use asks.
 */
export class SharedTransport {
  readonly inner: Transport;
  #started: Promise<void> | undefined;
  #active: TransportView | undefined;
  /** Called with every close of the inner transport, before the view in use hears of it. */
  onInnerClose: (() => void) | undefined;
  /** Called with every error of the inner transport, before the view in use hears of it. */
  onInnerError: ((error: Error) => void) | undefined;

  /** @param inner an unstarted transport; ownership passes to the shared transport */
  constructor(inner: Transport) {
    this.inner = inner;
    // Set before any start: the SDK's stdio transport reports a spawn failure or an overflow here.
    inner.onmessage = (message, extra) => this.#active?.onmessage?.(message, extra);
    inner.onclose = () => {
      this.onInnerClose?.();
      this.#active?.onclose?.();
    };
    inner.onerror = (error) => {
      this.onInnerError?.(error);
      this.#active?.onerror?.(error);
    };
  }

  /** @returns a new view; it takes the inbound messages once started */
  view(): TransportView {
    return new TransportView(this);
  }

  /** Starts the inner transport once and makes `view` the one that hears it. */
  async activate(view: TransportView): Promise<void> {
    this.#active = view;
    this.#started ??= this.inner.start();
    await this.#started;
  }

  /** Stops forwarding to `view` if it is the one in use. */
  deactivate(view: TransportView): void {
    if (this.#active === view) this.#active = undefined;
  }
}

/**
 * What one client sees of a {@link SharedTransport}. While its close is held (an `initialize` attempt
 * that may be followed by another revision), a close the SDK asks for is only noted.
 */
export class TransportView implements Transport {
  readonly #shared: SharedTransport;
  #isCloseHeld = false;
  #isCloseNoted = false;
  #isDetached = false;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: Transport["onmessage"];

  /** @param shared the transport this view is of */
  constructor(shared: SharedTransport) {
    this.#shared = shared;
  }

  /** The inner transport's session id (HTTP). */
  get sessionId(): string | undefined {
    return this.#shared.inner.sessionId;
  }

  /** Whether the inner transport gives each request its own response stream. */
  get hasPerRequestStream(): boolean {
    return this.#shared.inner.hasPerRequestStream === true;
  }

  /** @param version the negotiated version, passed to the inner transport (its HTTP header) */
  setProtocolVersion(version: string): void {
    this.#shared.inner.setProtocolVersion?.(version);
  }

  /** @param versions the versions this client supports, passed to the inner transport */
  setSupportedProtocolVersions(versions: string[]): void {
    this.#shared.inner.setSupportedProtocolVersions?.(versions);
  }

  /** Starts the inner transport (once) and routes its messages here. */
  start(): Promise<void> {
    if (this.#isDetached) return Promise.reject(new Error("Not connected"));
    return this.#shared.activate(this);
  }

  /** Sends through the inner transport. */
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#isDetached) return Promise.reject(new Error("Not connected"));
    return this.#shared.inner.send(message, options);
  }

  /** Closes the inner transport, unless the close is held or this view was set aside. */
  async close(): Promise<void> {
    if (this.#isDetached) return;
    if (this.#isCloseHeld) {
      this.#isCloseNoted = true;
      return;
    }
    await this.#shared.inner.close();
  }

  /** Notes the SDK's close instead of doing it, until {@link releaseClose}. */
  holdClose(): void {
    this.#isCloseHeld = true;
  }

  /**
   * Ends the hold.
   * @returns whether a close was asked for while it was held
   */
  releaseClose(): boolean {
    this.#isCloseHeld = false;
    return this.#isCloseNoted;
  }

  /** Sets this view aside: it hears nothing more and its close does nothing. */
  detach(): void {
    this.#isDetached = true;
    this.#shared.deactivate(this);
  }
}

/** How to connect: the SDK negotiation of each attempt, in order. */
type Attempt = { negotiation: VersionNegotiationOptions; fallbackOnUnsupported: boolean };

/**
 * The attempts for a setting over a transport.
 * @param setting the server's `protocol`
 * @param inner the unstarted transport
 * @returns the attempts, each tried only when the one before it failed with an unsupported version
 */
function attemptsFor(setting: ProtocolSetting, inner: Transport): Attempt[] {
  const legacy: VersionNegotiationOptions = { mode: "legacy" };
  const pinned: VersionNegotiationOptions = { mode: { pin: MODERN_REVISION } };
  // SSE is a 2025-era transport; the configuration refuses "2026-07-28" with it.
  if (setting === "2025-11-25" || isSseTransport(inner)) {
    return [{ negotiation: legacy, fallbackOnUnsupported: false }];
  }
  if (setting === MODERN_REVISION) return [{ negotiation: pinned, fallbackOnUnsupported: false }];
  // Over the network a probe costs one request and spends no process: let the SDK negotiate.
  if (isNetworkTransport(inner)) return [{ negotiation: { mode: "auto" }, fallbackOnUnsupported: false }];
  return [
    { negotiation: legacy, fallbackOnUnsupported: true },
    { negotiation: pinned, fallbackOnUnsupported: false },
  ];
}

/**
 * Connects a client in the revision the server speaks.
 * @param shared the connection's transport
 * @param setting the server's `protocol`
 * @param makeClient builds a client for one attempt, with the given negotiation and its handlers set
 * @param timeoutMs the SDK's timeout for each handshake request
 * @returns the connected client
 * @throws the SDK's error of the last attempt
 */
export async function connectInEra(
  shared: SharedTransport,
  setting: ProtocolSetting,
  makeClient: (negotiation: VersionNegotiationOptions) => Client,
  timeoutMs: number,
): Promise<Client> {
  const attempts = attemptsFor(setting, shared.inner);
  for (const [index, attempt] of attempts.entries()) {
    const client = makeClient(attempt.negotiation);
    const view = shared.view();
    const mayFallBack = attempt.fallbackOnUnsupported && index < attempts.length - 1;
    if (mayFallBack) view.holdClose();
    try {
      await client.connect(view, { timeout: timeoutMs });
      view.releaseClose();
      return client;
    } catch (error) {
      const closeAsked = view.releaseClose();
      if (mayFallBack && isUnsupportedVersion(error)) {
        view.detach();
        continue;
      }
      if (closeAsked) await shared.inner.close().catch(() => undefined);
      throw error;
    }
  }
  // attemptsFor never returns an empty list.
  throw new Error("no connection attempt was made");
}

/** The server's answer to a revision it does not speak: `-32022` (2026-07-28 servers on `initialize`). */
function isUnsupportedVersion(error: unknown): boolean {
  return error instanceof ProtocolError && error.code === ProtocolErrorCode.UnsupportedProtocolVersion;
}
