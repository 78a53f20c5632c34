/** The UniProt accession tools: `lookup` (a batch of entries) and `prepare_sequence` (a file candidate). */
import { z } from "zod";
import type { ArtifactCandidate } from "../../../contract/index.js";
import { invalidId } from "../identifiers.js";
import { defaultedInput, idListInput } from "../input-schemas.js";
import { ProviderError } from "../provider-error.js";
import { defineTool } from "../source-module.js";
import { fetchUniprotEntries } from "./uniprot-entries.js";
import type { InactiveUniprotEntry, UniprotEntries, UniprotEntry } from "./uniprot-entry-parser.js";
import {
  normalizeUniprotAccession,
  type UniprotAccession,
  uniprotAccessionText,
  uniprotFileUrl,
} from "./uniprot-ids.js";

/** The licence of UniProt data, also stated on every sequence candidate. */
export const UNIPROT_LICENSE = "CC-BY-4.0";
const ID_FORMS = "a UniProtKB accession (P15056, UniProtKB:P15056, P15056-2 or a uniprot.org URL)";

/** A requested accession that failed, with the reason. */
interface FailedAccession {
  id: string;
  reason: "invalid_id" | "not_found" | "obsolete";
  replacedBy?: string[];
}

/** `uniprot_lookup`: up to 50 accessions → entry records, with per-accession failures. */
export const uniprotLookupTool = defineTool({
  id: "lookup",
  title: "Look up UniProtKB entries",
  description:
    "Fetch UniProtKB entries by accession (up to 50): protein and gene names, organism, length, function, " +
    "PDB and AlphaFold cross-references. Isoforms (P15056-2) and versions (P15056.3) resolve to the current " +
    "entry. Accessions that fail are listed in data.failed with a reason (obsolete ones with replacedBy).",
  inputShape: {
    accessions: idListInput(
      50,
      "UniProtKB accessions (1-50): P15056, UniProtKB:P15056, sp|P15056|BRAF_HUMAN, P15056-2, P15056.3 or " +
        "www.uniprot.org URLs.",
    ),
  },
  async run(input, { http }) {
    const failed: FailedAccession[] = [];
    const warnings: string[] = [];
    const wanted: string[] = [];
    for (const raw of input.accessions) {
      const id = normalizeUniprotAccession(raw);
      if (!id) {
        failed.push({ id: raw, reason: "invalid_id" });
        continue;
      }
      const note = suffixNote(id);
      if (note) warnings.push(note);
      if (!wanted.includes(id.accession)) wanted.push(id.accession);
    }
    if (wanted.length === 0) invalidId(input.accessions[0] ?? "", ID_FORMS);
    const found = await fetchUniprotEntries(http, wanted);
    const entries: UniprotEntry[] = [];
    for (const accession of wanted) {
      const match = resolve(found, accession);
      if ("record" in match) {
        if (match.accession !== accession) {
          warnings.push(
            `${accession} is a secondary accession of ${match.accession}; its entry is returned.`,
          );
        }
        if (!entries.includes(match)) entries.push(match);
      } else failed.push(match);
    }
    if (entries.length === 0) {
      throw new ProviderError("not_found", "UniProtKB has no active entry for any requested accession.");
    }
    if (found.malformed > 0) {
      warnings.push(
        `${found.malformed} entry record(s) of the answer had an unexpected shape and were left out.`,
      );
    }
    if (failed.length > 0) {
      warnings.push(`${failed.length} of ${input.accessions.length} accession(s) failed; see data.failed.`);
    }
    return {
      records: entries.map((entry) => entry.record),
      warnings,
      data: { requested: input.accessions.length, returned: entries.length, failed },
    };
  },
});

/** `uniprot_prepare_sequence`: the FASTA or flat-file candidate of one entry or isoform (never downloads). */
export const uniprotPrepareSequenceTool = defineTool({
  id: "prepare_sequence",
  title: "Plan a UniProtKB sequence download",
  description:
    "Plan the download of a UniProtKB sequence: confirms the entry and returns a download candidate (HTTPS URL " +
    "on rest.uniprot.org, format fasta or txt flat file, CC BY 4.0 licence) for artifact_download. Isoforms " +
    "(P15056-2) are available as fasta. Downloads nothing.",
  inputShape: {
    accession: z
      .string()
      .trim()
      .min(1)
      .describe(
        "A UniProtKB accession (P15056, UniProtKB:P15056, P15056-2 for an isoform) or uniprot.org URL.",
      ),
    format: defaultedInput(z.enum(["fasta", "txt"]), "fasta").describe(
      "fasta (the sequence, default) or txt (the UniProtKB flat file: annotation and sequence).",
    ),
  },
  async run(input, { http }) {
    const id = normalizeUniprotAccession(input.accession) ?? invalidId(input.accession, ID_FORMS);
    const text = uniprotAccessionText(id);
    if (id.isoform !== undefined && input.format === "txt") {
      throw new ProviderError(
        "invalid_input",
        `The UniProtKB flat file describes whole entries, not isoform ${text}; ask for fasta.`,
      );
    }
    // An isoform has its own entry in the REST API, so asking for it also confirms that the isoform exists.
    const match = resolve(await fetchUniprotEntries(http, [text]), text);
    if (!("record" in match)) {
      const detail =
        match.reason === "obsolete" ? ` is obsolete${replacedText(match.replacedBy)}` : " is unknown";
      throw new ProviderError("not_found", `UniProtKB accession ${text}${detail}.`);
    }
    const candidate: ArtifactCandidate = {
      candidateId: `uniprot:${match.accession}:${input.format}`,
      sourceId: "uniprot",
      sourceRecordId: match.accession,
      url: uniprotFileUrl(match.accession, input.format),
      format: input.format,
      kind: "sequence",
      license: UNIPROT_LICENSE,
      filename: `${match.accession}.${input.format}`,
    };
    const facts = match.record.structuredData ?? {};
    const warnings: string[] = [];
    if (
      id.version !== undefined &&
      facts.sequenceVersion !== undefined &&
      facts.sequenceVersion !== id.version
    ) {
      warnings.push(
        `The current sequence of ${match.accession} is version ${facts.sequenceVersion}, not ${id.version}; ` +
          "older versions are only in the UniSave archive.",
      );
    }
    return {
      records: [match.record],
      artifacts: [candidate],
      warnings,
      data: {
        accession: match.accession,
        format: input.format,
        ...pick(facts, ["entryVersion", "sequenceVersion", "sequenceLength"]),
      },
    };
  },
});

/** The entry of an accession (primary or secondary), or why there is none. */
function resolve(found: UniprotEntries, accession: string): UniprotEntry | FailedAccession {
  const entry =
    found.entries.find((e) => e.accession === accession) ??
    found.entries.find((e) => e.secondaryAccessions.includes(accession));
  if (entry) return entry;
  const inactive: InactiveUniprotEntry | undefined = found.inactive.find((e) => e.accession === accession);
  if (!inactive) return { id: accession, reason: "not_found" };
  return {
    id: accession,
    reason: "obsolete",
    ...(inactive.replacedBy.length > 0 ? { replacedBy: inactive.replacedBy } : {}),
  };
}

function suffixNote(id: UniprotAccession): string | undefined {
  if (id.isoform !== undefined) {
    return `${uniprotAccessionText(id)} is an isoform; the record describes entry ${id.accession}.`;
  }
  if (id.version !== undefined) {
    return `${id.accession}.${id.version}: the sequence version was read as the current entry ${id.accession}.`;
  }
  return undefined;
}

function replacedText(replacedBy: string[] | undefined): string {
  return replacedBy && replacedBy.length > 0 ? ` (replaced by ${replacedBy.join(", ")})` : "";
}

function pick(data: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.flatMap((key) => (data[key] === undefined ? [] : [[key, data[key]]])));
}
