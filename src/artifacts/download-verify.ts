/** The `verifying` step of a download: announced size and checksum against the staged bytes. */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import type { ArtifactCandidate } from "../contract/index.js";
import { GovernanceError } from "../core/index.js";

/**
 * Checks the staged file against the candidate's size and checksum (when it carries them).
 * @param path the staging file
 * @param candidate the candidate with optional `sizeBytes` and `checksum`
 * @param bytes the bytes the transfer counted
 * @returns `sha256:<hex>` of the file, recorded for every download
 * @throws GovernanceError `INVALID_INPUT` on a size or checksum mismatch (`data.reason`)
 */
export async function verifyDownload(
  path: string,
  candidate: ArtifactCandidate,
  bytes: number,
): Promise<string> {
  if (candidate.sizeBytes !== undefined && candidate.sizeBytes !== bytes) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `Size mismatch: the candidate announced ${candidate.sizeBytes} bytes, ${bytes} arrived.`,
      { data: { reason: "size_mismatch" } },
    );
  }
  const sha256 = createHash("sha256");
  const expected = candidate.checksum;
  const other = expected && expected.algorithm !== "sha256" ? createHash(expected.algorithm) : undefined;
  for await (const chunk of createReadStream(path)) {
    sha256.update(chunk as Buffer);
    other?.update(chunk as Buffer);
  }
  const actual = sha256.digest("hex");
  if (expected) {
    const got = other ? other.digest("hex") : actual;
    if (got !== expected.value.toLowerCase()) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Checksum mismatch: expected ${expected.algorithm}:${expected.value}, got ${expected.algorithm}:${got}.`,
        { data: { reason: "checksum_mismatch" } },
      );
    }
  }
  return `sha256:${actual}`;
}
