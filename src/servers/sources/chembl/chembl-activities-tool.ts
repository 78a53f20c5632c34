/** `chembl_search_activities`: measured bioactivities of a compound, on a target, or of a compound on a target. */
import { z } from "zod";
import { maxResultsInput, optionalInput, startInput } from "../input-schemas.js";
import { ProviderError } from "../provider-error.js";
import { defineTool } from "../source-module.js";
import { chemblActivityRecord } from "./chembl-activity-parser.js";
import { chemblIdOrThrow } from "./chembl-ids.js";
import { fetchChemblPage, filteredListingRecords, pagingData } from "./chembl-page.js";

const MAX_OFFSET = 1_000_000;

/** `chembl_search_activities`: activity values filtered by molecule and/or target, with paging. */
export const chemblSearchActivitiesTool = defineTool({
  id: "search_activities",
  title: "Search ChEMBL bioactivities",
  description:
    "List measured bioactivities (IC50, Ki, Kd, EC50, inhibition, ...) from ChEMBL for a molecule, a target, or " +
    "a molecule on a target (by ChEMBL id; find ids with chembl_search_molecules or chembl_search_targets). " +
    "Each record has the standardized value and units, pChEMBL, assay, target, organism and source document. " +
    "Optional filters: activity type and minimum pChEMBL. Pages with start/max_results.",
  inputShape: {
    molecule: optionalInput(z.string().trim().min(1).max(200)).describe(
      "ChEMBL id of the molecule (e.g. CHEMBL25); give a molecule, a target or both.",
    ),
    target: optionalInput(z.string().trim().min(1).max(200)).describe(
      "ChEMBL id of the target (e.g. CHEMBL203); give a molecule, a target or both.",
    ),
    activity_type: optionalInput(
      z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9][\w .%/()-]{0,39}$/),
    ).describe("Only this standardized activity type, e.g. IC50, Ki, Kd, EC50, Potency, Inhibition."),
    min_pchembl: optionalInput(z.number().min(0).max(15)).describe(
      "Only values with a pChEMBL (-log10 molar potency) of at least this, e.g. 6 for 1 µM or better.",
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
    const page = await fetchChemblPage(http, "/activity.json", "activities", {
      query: {
        molecule_chembl_id: molecule,
        target_chembl_id: target,
        standard_type__iexact: input.activity_type,
        pchembl_value__gte: input.min_pchembl,
        // A fixed order keeps pages stable while the model pages through them.
        order_by: "activity_id",
        limit: input.max_results,
        offset: start,
      },
    });
    const { records, warnings } = await filteredListingRecords(http, page, {
      toRecord: chemblActivityRecord,
      noun: "activity",
      idName: "an activity id",
      molecule,
      target,
      emptyWarning:
        "ChEMBL has no activities matching these filters. Values are recorded on the exact compound form " +
        "tested; a salt or parent form may have its own ChEMBL id.",
    });
    return { records, warnings, data: pagingData(page, start) };
  },
});
