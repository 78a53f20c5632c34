/** A client transport that speaks streamable HTTP and falls back to SSE for older MCP servers. */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";

/**
 * Tries the primary transport (streamable HTTP); when its first message (`initialize`) fails, closes
 * it quietly and sends everything over the secondary one (SSE), as the MCP spec's backwards-compatibility
 * section advises. After one message went through, failures are reported as they are.
 */
export class FallbackHttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  readonly #secondary: () => Transport;
  #active: Transport;
  #settled = false;

  /**
   * @param primary builds the streamable HTTP transport
   * @param secondary builds the SSE transport, only when the primary fails
   */
  constructor(primary: () => Transport, secondary: () => Transport) {
    this.#secondary = secondary;
    this.#active = this.#wire(primary());
  }

  /** The session id of the transport in use. */
  get sessionId(): string | undefined {
    return this.#active.sessionId;
  }

  /** Starts the primary transport. */
  async start(): Promise<void> {
    await this.#active.start();
  }

  /**
   * Sends one message; the first failure of the primary switches to the secondary and resends.
   * @param message the JSON-RPC message
   * @param options SDK send options
   * @throws whatever the transport in use throws once the fallback was tried
   */
  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await this.#active.send(message, options);
    } catch (error) {
      if (this.#settled) throw error;
      this.#settled = true;
      const failed = this.#active;
      failed.onclose = undefined;
      failed.onerror = undefined;
      failed.onmessage = undefined;
      await failed.close().catch(() => undefined);
      this.#active = this.#wire(this.#secondary());
      await this.#active.start();
      await this.#active.send(message, options);
    }
    this.#settled = true;
  }

  /** Closes the transport in use. */
  close(): Promise<void> {
    return this.#active.close();
  }

  /** @param version the negotiated protocol version, passed to the transport in use */
  setProtocolVersion(version: string): void {
    this.#active.setProtocolVersion?.(version);
  }

  #wire(transport: Transport): Transport {
    transport.onmessage = (message, extra) => this.onmessage?.(message, extra);
    // Errors of a primary that is about to be replaced are not the connection's errors.
    transport.onerror = (error) => {
      if (this.#settled) this.onerror?.(error);
    };
    transport.onclose = () => this.onclose?.();
    return transport;
  }
}
