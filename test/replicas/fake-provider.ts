/**
 * The loopback provider of the replica tests (`*.replicas.test.ts`): it runs in the test process, so
 * that what every replica process sends upstream is seen in one place. It records each request's
 * arrival (replica, call, time) and how many requests are open at once.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the provider saw it arrive. */
export interface Arrival {
  replica: string;
  call: number;
  /** `performance.now()` of the test process. */
  at: number;
}

/** How long the provider holds a request before it answers, in ms, or `"never"`. */
export type ProviderHold = (replica: string, call: number) => number | "never";

/** The running provider. */
export interface FakeProvider {
  readonly arrivals: Arrival[];
  /** Requests open now, per replica. */
  readonly inFlight: Map<string, number>;
  /** Most requests open at once so far. */
  readonly maxActive: number;
  /** Starts listening on a free loopback port; returns the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/**
 * A provider that answers `GET /call?replica=<name>&call=<k>` with `ok` after `hold(replica, call)` ms.
 * A request counts as open until it is answered or its caller's socket closes.
 * @param hold how long to hold each request
 * @returns the provider (call `listen()`)
 */
export function startProvider(hold: ProviderHold): FakeProvider {
  const arrivals: Arrival[] = [];
  const inFlight = new Map<string, number>();
  let active = 0;
  let maxActive = 0;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const replica = url.searchParams.get("replica") ?? "?";
    const call = Number(url.searchParams.get("call"));
    arrivals.push({ replica, call, at: performance.now() });
    active++;
    maxActive = Math.max(maxActive, active);
    inFlight.set(replica, (inFlight.get(replica) ?? 0) + 1);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      active--;
      inFlight.set(replica, inFlight.get(replica)! - 1);
    };
    res.on("close", finish); // answered, or the caller's socket died
    const ms = hold(replica, call);
    if (ms !== "never") setTimeout(() => res.end("ok"), ms);
  });
  return {
    arrivals,
    inFlight,
    get maxActive() {
      return maxActive;
    },
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, "127.0.0.1", () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        ),
      ),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * At the provider a start is the request's arrival, some time after admission: a replica's event
 * loop may be late in sending one request and not the next (three tsx processes, vitest and
 * PostgreSQL on a shared 2-core machine; 90 ms late was seen at load 9). So the exact check is on
 * admissions, by the database clock, and at the provider the rate is checked per window: at most
 * 5 arrivals in any 1 s, plus one that a late send pushed into the window.
 */
export const ARRIVALS_PER_SECOND_BOUND = 5 + 1;

/** Most of `times` in any window of `ms` (half-open). */
export function maxInWindow(times: number[], ms: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= ms) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

/** The smallest gap between two of `times`. */
export function minGap(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let min = Number.POSITIVE_INFINITY;
  for (let i = 1; i < sorted.length; i++) min = Math.min(min, sorted[i]! - sorted[i - 1]!);
  return min;
}
