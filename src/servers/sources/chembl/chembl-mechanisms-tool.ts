/** `chembl_get_mechanisms`: curated drug mechanisms of action of a compound, on a target, or both. */
import { z } from "zod";
import { maxResultsInput, optionalInput, startInput } from "../input-schemas.js";
import { ProviderError } from "../provider-error.js";
import { defineTool } from "../source-module.js";
import { chemblIdOrThrow } from "./chembl-ids.js";
import { chemblMechanismRecord } from "./chembl-mechanism-parser.js";
import { fetchChemblPage, filteredListingRecords, pagingData } from "./chembl-page.js";

const MAX_OFFSET = 100_000;

/** `chembl_get_mechanisms`: ChEMBL's drug mechanism resource filtered by molecule and/or target, with paging. */
export const chemblGetMechanismsTool = defineTool({
  id: "get_mechanisms",
  title: "Get ChEMBL drug mechanisms",
  description:
    "Get the curated mechanisms of action of a drug or clinical candidate from ChEMBL, by molecule and/or " +
    "target ChEMBL id (find ids with chembl_search_molecules or chembl_search_targets). Each record has the " +
    "mechanism of action, action type (INHIBITOR, AGONIST, ...), target, direct-interaction and disease-" +
    "efficacy flags, max phase and the references it was curated from (FDA label, DailyMed, PubMed) as " +
    "links. Pages with start/max_results.",
  inputShape: {
    molecule: optionalInput(z.string().trim().min(1).max(200)).describe(
      "ChEMBL id of the drug (e.g. CHEMBL941); give a molecule, a target or both.",
    ),
    target: optionalInput(z.string().trim().min(1).max(200)).describe(
      "ChEMBL id of the target (e.g. CHEMBL1862); give a molecule, a target or both.",
    ),
    max_results: maxResultsInput(20, 100),
    start: startInput(MAX_OFFSET),
  },
  async run(input, { http }) {
    const molecule = input.molecule === undefined ? undefined : chemblIdOrThrow(input.molecule);
    const target = input.target === undefined ? undefined : chemblIdOrThrow(input.target);
    if (!molecule && !target) {
      throw new ProviderError("invalid_input", "Give a molecule or a target ChEMBL id (or both).");
    }
    const start = input.start ?? 0;
    const page = await fetchChemblPage(http, "/mechanism.json", "mechanisms", {
      query: {
        molecule_chembl_id: molecule,
        target_chembl_id: target,
        // A fixed order keeps pages stable while the model pages through them.
        order_by: "mec_id",
        limit: input.max_results,
        offset: start,
      },
    });
    const { records, warnings } = await filteredListingRecords(http, page, {
      toRecord: chemblMechanismRecord,
      noun: "mechanism",
      idName: "a mechanism id",
      molecule,
      target,
      emptyWarning:
        "ChEMBL has no mechanism of action matching these filters. ChEMBL curates mechanisms for approved " +
        "drugs and clinical candidates; a salt or parent form may carry it under its own ChEMBL id.",
    });
    return { records, warnings, data: pagingData(page, start) };
  },
});
