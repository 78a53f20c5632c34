/**
 * The `requestState` of the gateway's multi-round-trip approvals: what the first round trip knew (the
 * tool call id it reserved, the call, the principal, the conversation), signed so that any replica with
 * the same secret can resume it and nobody else can forge it (see ARCHITECTURE.md, "The governed MCP
 * gateway"). The state travels through the client: it is signed, not secret.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { type Clock, canonicalJson, GovernanceError, sha256Hex, systemClock } from "../core/index.js";

/**
 * What a state continues: a tool call's approval, a surface read's approval (`tool` is the method,
 * the arguments its params), a call held open for its upstream server's question, or a call paused
 * at its upstream server's 2026-07-28 round (recorded in the ledger, continued on any replica).
 */
export type RoundKind = "approval" | "surface" | "upstream" | "paused";

/** What one approval round trip carries to the next. */
export interface ApprovalRoundState {
  /** What the state continues (absent: `approval`). */
  kind?: RoundKind | undefined;
  /**
   * The tool call id reserved for the call: the broker keys the call (and its one row) by it; for a
   * held call, the held call's id.
   */
  toolCallId: string;
  /** For a held call: the question this state asks (each answer advances it). */
  seq?: number | undefined;
  /** For a held call: the revision its upstream server asked in (what a refusal elsewhere explains). */
  upstreamEra?: string | undefined;
  /**
   * For a paused call: the answers to its earlier questions, in order (the retry adds the answer to
   * the question this state asks, the next one, and the call continues with them all).
   */
  answers?: unknown[] | undefined;
  /** The model-visible tool name called. */
  tool: string;
  /** SHA-256 of the canonical JSON of the call's arguments. */
  argsHash: string;
  /** The principal that made the call (`""`: the single user). */
  principal: string;
  /** The governance session of the call's conversation. */
  sessionId: string;
  /** Expiry, ms since the epoch. */
  exp: number;
}

/** Why a state was refused. */
export type RequestStateRefusal =
  | "malformed"
  | "bad_signature"
  | "expired"
  | "other_call"
  | "other_principal";

/** Options of {@link createApprovalStateCodec}. */
export interface ApprovalStateCodecOptions {
  /**
   * The HMAC-SHA256 key, at least 32 bytes; replicas that resume each other's approvals share it.
   * @default 32 random bytes, new for each process (approvals then resume on this replica only)
   */
  secret?: Uint8Array | string | undefined;
  /** How long a round trip's state stays valid. @default 10 minutes */
  ttlMs?: number | undefined;
  /** The expiry's clock. @default the system clock */
  clock?: Clock | undefined;
}

/** Mints and checks approval round-trip states. */
export interface ApprovalStateCodec {
  /**
   * @param state everything but `exp`, which is set from the clock
   * @returns the wire form, `v1.<payload>.<signature>` (base64url)
   */
  mint(state: Omit<ApprovalRoundState, "exp">): string;
  /**
   * Checks the signature, the expiry, and that the state belongs to this very call and principal.
   * @param wire the state the client echoed
   * @param expected the call being retried
   * @returns the state, or why it is refused
   */
  verify(
    wire: unknown,
    expected: {
      /** @default "approval" */
      kind?: RoundKind | undefined;
      tool: string;
      args: Record<string, unknown>;
      principal: string | undefined;
      sessionId: string;
    },
  ): { ok: true; state: ApprovalRoundState } | { ok: false; reason: RequestStateRefusal };
}

const MIN_SECRET_BYTES = 32;
/**
 * The longest state accepted: a paused call's carries the answers given so far (the gateway refuses an
 * answer that would make it longer), the others are a few hundred bytes.
 */
export const MAX_REQUEST_STATE_CHARS = 65_536;

/**
 * Creates the codec of the gateway's approval states. Written here rather than with the SDK's
 * `createRequestStateCodec` because expiry must follow the gateway's injected clock.
 * @param options secret, lifetime, clock
 * @returns the codec
 * @throws GovernanceError `INVALID_CONFIG` for a secret shorter than 32 bytes
 */
export function createApprovalStateCodec(options: ApprovalStateCodecOptions = {}): ApprovalStateCodec {
  const key = secretOf(options.secret);
  const ttlMs = options.ttlMs ?? 10 * 60_000;
  const clock = options.clock ?? systemClock;
  const sign = (payload: string) => createHmac("sha256", key).update(payload).digest();
  return {
    mint(state) {
      const payload = Buffer.from(JSON.stringify({ ...state, exp: clock.now() + ttlMs })).toString(
        "base64url",
      );
      return `v1.${payload}.${sign(payload).toString("base64url")}`;
    },
    verify(wire, expected) {
      if (typeof wire !== "string" || wire.length > MAX_REQUEST_STATE_CHARS)
        return { ok: false, reason: "malformed" };
      const [version, payload, signature, ...rest] = wire.split(".");
      if (version !== "v1" || !payload || !signature || rest.length > 0)
        return { ok: false, reason: "malformed" };
      const given = Buffer.from(signature, "base64url");
      const wanted = sign(payload);
      if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
        return { ok: false, reason: "bad_signature" };
      }
      let state: ApprovalRoundState;
      try {
        state = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as ApprovalRoundState;
      } catch {
        return { ok: false, reason: "malformed" };
      }
      if (typeof state.exp !== "number" || clock.now() > state.exp) return { ok: false, reason: "expired" };
      if (state.principal !== (expected.principal ?? "")) return { ok: false, reason: "other_principal" };
      if (
        (state.kind ?? "approval") !== (expected.kind ?? "approval") ||
        state.tool !== expected.tool ||
        state.sessionId !== expected.sessionId ||
        state.argsHash !== argumentsHash(expected.args)
      ) {
        return { ok: false, reason: "other_call" };
      }
      return { ok: true, state };
    },
  };
}

/**
 * What a state says it continues, read without checking it (to route the retry to the check that
 * applies; a state is trusted only once `verify` passed).
 * @param wire the state the client echoed
 * @returns its kind, `undefined` when it is not a state
 */
export function roundKindOf(wire: unknown): RoundKind | undefined {
  if (typeof wire !== "string" || wire.length > MAX_REQUEST_STATE_CHARS) return undefined;
  const payload = wire.split(".")[1];
  if (!payload) return undefined;
  try {
    const kind = (JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { kind?: unknown }).kind;
    return kind === "surface" || kind === "upstream" || kind === "paused" ? kind : "approval";
  } catch {
    return undefined;
  }
}

/**
 * @param args a call's arguments
 * @returns SHA-256 (hex) of their canonical JSON: equal for equal arguments in any key order
 */
export function argumentsHash(args: Record<string, unknown>): string {
  return sha256Hex(canonicalJson(args));
}

function secretOf(secret: Uint8Array | string | undefined): Buffer {
  if (secret === undefined) return randomBytes(MIN_SECRET_BYTES);
  const bytes = typeof secret === "string" ? Buffer.from(secret, "utf8") : Buffer.from(secret);
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `The gateway's request state secret must be at least ${MIN_SECRET_BYTES} bytes (it signs approval round trips); got ${bytes.length}.`,
      { data: { field: "requestStateSecret" } },
    );
  }
  return bytes;
}
