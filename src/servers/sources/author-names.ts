/**
 * One display form for the authors of literature records, whatever form the provider writes them in: the NLM
 * (Vancouver) citation form PubMed and Europe PMC cite with, family name then initials (`Flaherty KT`).
 * Collective authors stay as written (`METRIC Study Group`). The parts a provider gives travel beside it.
 */

/** An author as the provider structures it (`structuredData.authorDetails[]`). */
export interface AuthorDetail {
  /** Family name (`Flaherty`). */
  family?: string;
  /** Given names as written (`Keith T`). */
  given?: string;
  /** Initials of the given names, no dots or spaces (`KT`). */
  initials?: string;
  /** Generational suffix (`Jr`). */
  suffix?: string;
  /** A group author's name, for a collective author (then no other part). */
  collective?: string;
  /** The ORCID iD, bare (`0000-0002-1825-0097`). */
  orcid?: string;
}

/** An author with its display form. */
export interface Author {
  /** `Flaherty KT`; a collective author's name as written. */
  display: string;
  detail: AuthorDetail;
}

/** The name parts a provider may give for one author. */
export interface AuthorParts {
  family?: string | undefined;
  given?: string | undefined;
  initials?: string | undefined;
  suffix?: string | undefined;
  collective?: string | undefined;
  /** The provider's own one-string form, used only when there is no family name. */
  fullName?: string | undefined;
  orcid?: string | undefined;
}

/**
 * The author of some name parts, in the common display form.
 * @param parts the provider's name parts (blank parts are ignored)
 * @returns the author, or undefined when no part names anyone
 */
export function authorOf(parts: AuthorParts): Author | undefined {
  const clean = (value: string | undefined) => value?.replace(/\s+/g, " ").trim() || undefined;
  const collective = clean(parts.collective);
  if (collective) return { display: collective, detail: { collective } };
  const family = clean(parts.family);
  const given = clean(parts.given);
  const suffix = clean(parts.suffix);
  const orcid = orcidOf(parts.orcid);
  const initials = clean(parts.initials)?.replace(/[.\s]/g, "") || (given ? initialsOf(given) : undefined);
  const detail: AuthorDetail = {
    ...(family ? { family } : {}),
    ...(given ? { given } : {}),
    ...(initials ? { initials } : {}),
    ...(suffix ? { suffix } : {}),
    ...(orcid ? { orcid } : {}),
  };
  const display = family
    ? [family, initials, suffix].filter(Boolean).join(" ")
    : (clean(parts.fullName) ?? given ?? initials);
  return display ? { display, detail } : undefined;
}

/**
 * The initials of given names as NLM writes them: one letter per name or hyphenated part (`Keith T` → `KT`,
 * `Jean-François` → `JF`, `J-F` → `JF`).
 * @param given the given names
 * @returns the initials (upper case), or undefined when there is no letter
 */
export function initialsOf(given: string): string | undefined {
  const letters = given
    .split(/[\s.\-‐]+/)
    .flatMap((part) => {
      const first = /\p{L}/u.exec(part)?.[0];
      return first ? [first.toUpperCase()] : [];
    })
    .join("");
  return letters || undefined;
}

function orcidOf(value: string | undefined): string | undefined {
  const match = /(\d{4}-\d{4}-\d{4}-\d{3}[\dX])/i.exec(value ?? "");
  return match?.[1]?.toUpperCase();
}
