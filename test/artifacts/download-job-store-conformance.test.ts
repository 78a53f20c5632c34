import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { type DownloadJobStore, MemoryDownloadJobStore } from "../../src/artifacts/download-job-store.js";
import { downloadJobsPath, SqliteDownloadJobStore } from "../../src/artifacts/download-sqlite-job-store.js";
import { describeDownloadJobStoreConformance } from "../../src/testing/conformance/download-job-store-conformance.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-jobs-conformance-"));
let dirs = 0;
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** The file each SQLite store was opened on, so `reopen` can open it again. */
const files = new WeakMap<DownloadJobStore, string>();

describeDownloadJobStoreConformance("MemoryDownloadJobStore", () => new MemoryDownloadJobStore());
describeDownloadJobStoreConformance("SqliteDownloadJobStore (:memory:)", () =>
  SqliteDownloadJobStore.open(":memory:"),
);
describeDownloadJobStoreConformance(
  "SqliteDownloadJobStore (file)",
  async () => {
    const path = downloadJobsPath(join(scratch, `data-${++dirs}`));
    const store = await SqliteDownloadJobStore.open(path);
    files.set(store, path);
    return store;
  },
  {
    reopen: async (store) => {
      const path = files.get(store);
      if (path === undefined) throw new Error("not a store of this file's factory");
      await store.close();
      return SqliteDownloadJobStore.open(path);
    },
  },
);
