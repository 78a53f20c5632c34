"use strict";
/**
 * Runs statements in PostgreSQL for a caller that cannot wait asynchronously (a process exit step, see
 * `PostgresDatabase.runSync` in open-postgres.ts). Reads one JSON document on stdin:
 * `{ connection, statements: [{ sql, params }] }`, where a parameter `{ "$bytes": base64 }` is a
 * `bytea` and `{ "$bigint": text }` a bigint. Runs them in one transaction, each in a savepoint of its
 * own so that a refused one does not undo the others, and prints `{ failed, error? }` on stdout. Plain
 * CommonJS, so that it runs unchanged from the sources and from the package.
 */
const pg = require("pg");

function decode(value) {
  if (value !== null && typeof value === "object") {
    if (typeof value.$bytes === "string") return Buffer.from(value.$bytes, "base64");
    if (typeof value.$bigint === "string") return BigInt(value.$bigint);
  }
  return value;
}

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const { connection, statements } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const client = new pg.Client(connection);
  client.on("error", () => {});
  await client.connect();
  let failed = 0;
  let firstError;
  try {
    await client.query("BEGIN");
    for (const { sql, params } of statements) {
      await client.query("SAVEPOINT one");
      try {
        await client.query(sql, params.map(decode));
        await client.query("RELEASE SAVEPOINT one");
      } catch (error) {
        failed++;
        firstError ??= error instanceof Error ? error.message : String(error);
        await client.query("ROLLBACK TO SAVEPOINT one");
      }
    }
    await client.query("COMMIT");
  } finally {
    await client.end().catch(() => {});
  }
  process.stdout.write(JSON.stringify(firstError === undefined ? { failed } : { failed, error: firstError }));
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(error instanceof Error ? error.message : String(error));
    process.exit(1);
  },
);
