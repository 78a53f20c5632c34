/** Zod inputs shared by the Ensembl tools. */
import { z } from "zod";
import { optionalInput } from "../input-schemas.js";

/** The species of a lookup, region or variant (blank means human). */
export const speciesInput = optionalInput(z.string().trim().min(1).max(100)).describe(
  "Species: Ensembl name (homo_sapiens), scientific name (Mus musculus), common name (human, mouse, " +
    "zebrafish) or taxon id (9606). Default human.",
);
