/**
 * A ledger store as the conformance suites exercise it: appends through the one `LedgerWriter` (as
 * every runtime does), reads straight from the store.
 */
import type {
  AuthorizationRecord,
  ContentObject,
  InvocationRecord,
  LedgerReader,
  LedgerStore,
} from "../../governance/audit/index.js";
import { LedgerWriter, type LedgerWriterOptions } from "../../governance/audit/index.js";

/** A store with its writer: the writer's appends and the store's reads. */
export interface LedgerUnderTest extends LedgerReader {
  readonly store: LedgerStore;
  readonly writer: LedgerWriter;
  append(record: InvocationRecord, objects?: readonly ContentObject[]): Promise<void>;
  appendAuthorization(record: AuthorizationRecord, objects?: readonly ContentObject[]): Promise<void>;
  /** Closes the writer, then the store. */
  close(): Promise<void>;
}

/**
 * Wraps a store in a writer of its own.
 * @param store the store under test
 * @param options the writer's @default no spool and no retries: a failure shows at once
 * @returns the store and its writer as one object
 */
export function ledgerUnderTest(
  store: LedgerStore,
  options: LedgerWriterOptions = { retryWithinMs: 0 },
): LedgerUnderTest {
  const writer = new LedgerWriter(store, options);
  return {
    store,
    writer,
    get objects() {
      return store.objects;
    },
    append: (record, objects) => writer.append(record, objects),
    appendAuthorization: (record, objects) => writer.appendAuthorization(record, objects),
    get: (id) => store.get(id),
    findByCall: (threadId, toolCallId) => store.findByCall(threadId, toolCallId),
    query: (query) => store.query(query),
    count: (query) => store.count(query),
    activity: (query) => store.activity(query),
    summary: (options) => store.summary(options),
    getAuthorization: (id) => store.getAuthorization(id),
    listAuthorizations: (options) => store.listAuthorizations(options),
    close: async () => {
      await writer.close();
      await store.close();
    },
  };
}
