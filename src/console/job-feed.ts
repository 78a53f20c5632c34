/**
 * One reader of the job store per console, shared by every open `/jobs/events` stream: it lists the
 * jobs every `JOB_POLL_MS` while at least one stream is open and hands each list to all of them, so
 * the store's load does not grow with the number of open pages (see ARCHITECTURE.md, "The console").
 */
import type { DownloadJob } from "../artifacts/index.js";
import type { Clock } from "../core/index.js";

/** How often the feed reads the job store while a stream is open. */
export const JOB_POLL_MS = 500;

/** What one stream receives: the newest job list, or why the read failed. */
export type JobFeedUpdate = { jobs: readonly DownloadJob[] } | { error: unknown };

/** One stream's place in the feed. */
export interface JobFeedSubscription {
  /**
   * The next list the feed reads after the last one this subscriber took (lists read in between are
   * skipped: only the newest matters), or `undefined` once `stop` is aborted or the feed is closed.
   */
  next(stop: AbortSignal): Promise<JobFeedUpdate | undefined>;
  /** Leaves the feed; the feed stops reading when no subscriber is left. */
  close(): void;
}

interface Subscriber {
  pending: JobFeedUpdate | undefined;
  wake: (() => void) | undefined;
}

/** The shared reader; made by `jobFeedOf` once per console. */
export class JobFeed {
  readonly #list: () => Promise<readonly DownloadJob[]>;
  readonly #clock: Clock;
  readonly #closing: AbortSignal;
  readonly #subscribers = new Set<Subscriber>();
  #polling = false;
  #reads = 0;

  /**
   * @param list reads every job (the runtime's `downloads.list`)
   * @param clock the poll interval's clock
   * @param closing aborted when the console closes: the feed stops and subscribers get `undefined`
   */
  constructor(list: () => Promise<readonly DownloadJob[]>, clock: Clock, closing: AbortSignal) {
    this.#list = list;
    this.#clock = clock;
    this.#closing = closing;
  }

  /** Store reads made so far (snapshots and polls). */
  get reads(): number {
    return this.#reads;
  }

  /** Open subscriptions. */
  get subscribers(): number {
    return this.#subscribers.size;
  }

  /**
   * The jobs for a new stream's first event, read now: an older list could undo what the page it
   * serves was just rendered with (a job cancelled a moment ago shown running again).
   */
  snapshot(): Promise<readonly DownloadJob[]> {
    return this.#read();
  }

  /** Joins the feed; polling starts with the first subscriber. */
  subscribe(): JobFeedSubscription {
    const subscriber: Subscriber = { pending: undefined, wake: undefined };
    this.#subscribers.add(subscriber);
    if (!this.#polling) void this.#poll();
    const closing = this.#closing;
    return {
      next: async (stop) => {
        while (subscriber.pending === undefined) {
          if (stop.aborted || closing.aborted || !this.#subscribers.has(subscriber)) return undefined;
          await new Promise<void>((resolve) => {
            const done = () => {
              stop.removeEventListener("abort", done);
              closing.removeEventListener("abort", done);
              subscriber.wake = undefined;
              resolve();
            };
            subscriber.wake = done;
            stop.addEventListener("abort", done, { once: true });
            closing.addEventListener("abort", done, { once: true });
          });
        }
        const update = subscriber.pending;
        subscriber.pending = undefined;
        return update;
      },
      close: () => {
        this.#subscribers.delete(subscriber);
        subscriber.wake?.();
      },
    };
  }

  async #read(): Promise<readonly DownloadJob[]> {
    this.#reads++;
    return this.#list();
  }

  async #poll(): Promise<void> {
    this.#polling = true;
    try {
      while (this.#subscribers.size > 0 && !this.#closing.aborted) {
        await this.#clock.sleep(JOB_POLL_MS, this.#closing).catch(() => undefined);
        if (this.#subscribers.size === 0 || this.#closing.aborted) break;
        let update: JobFeedUpdate;
        try {
          update = { jobs: await this.#read() };
        } catch (error) {
          update = { error };
        }
        for (const subscriber of this.#subscribers) {
          subscriber.pending = update;
          subscriber.wake?.();
        }
      }
    } finally {
      this.#polling = false;
    }
  }
}

/** The feed of each console, keyed by the console's closing signal (one per handler). */
const feeds = new WeakMap<AbortSignal, JobFeed>();

/**
 * The console's feed, made on first use.
 * @param closing the console's closing signal (its identity)
 * @param list reads every job
 * @param clock the poll interval's clock
 */
export function jobFeedOf(
  closing: AbortSignal,
  list: () => Promise<readonly DownloadJob[]>,
  clock: Clock,
): JobFeed {
  let feed = feeds.get(closing);
  if (!feed) {
    feed = new JobFeed(list, clock, closing);
    feeds.set(closing, feed);
  }
  return feed;
}
