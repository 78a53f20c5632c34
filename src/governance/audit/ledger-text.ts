/**
 * The one reversible encoding of text in the SQL ledgers (`SqliteLedger`, `PostgresLedger`): every string
 * a row carries, whatever a third party put in it, is stored and read back exactly. PostgreSQL refuses a
 * NUL character in `text` and `jsonb` and a lone surrogate in `jsonb`; SQLite keeps a NUL but its `LIKE`
 * stops at it, and turns a lone surrogate into U+FFFD. So those characters, and the escape character
 * itself, are stored as two characters: U+FFFF (a noncharacter) and a private-use code. Every other
 * string is stored as it is, so that a search, an index or an operator's own SQL sees plain text.
 * Because the encoding maps each character on its own, a search pattern encoded the same way finds the
 * same rows (see `ARCHITECTURE.md`, "Record").
 */

/** Starts every escape. */
const ESCAPE = "\uFFFF";
/** The code after `ESCAPE` for a NUL character. */
const NUL_CODE = 0xe000;
/** The code after `ESCAPE` for `ESCAPE` itself. */
const ESCAPE_CODE = 0xe001;
/** Codes `SURROGATE_BASE + (unit - 0xD800)` stand for a lone surrogate code unit. */
const SURROGATE_BASE = 0xe800;

/** Characters that may need an escape: NUL, any surrogate (paired ones stay as they are), the escape. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding the NUL character is this pattern's job.
const MAY_NEED_ESCAPE = /[\u0000\uD800-\uDFFF\uFFFF]/;

/**
 * The stored form of a string: NUL, lone surrogates and U+FFFF escaped, everything else unchanged.
 * @param text any JavaScript string
 * @returns a string that PostgreSQL and SQLite store, compare and search as is
 */
export function encodeLedgerText(text: string): string {
  if (!MAY_NEED_ESCAPE.test(text)) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0) out += ESCAPE + String.fromCharCode(NUL_CODE);
    else if (unit === 0xffff) out += ESCAPE + String.fromCharCode(ESCAPE_CODE);
    else if (unit >= 0xd800 && unit <= 0xdbff && isLow(text.charCodeAt(i + 1))) {
      out += text.slice(i, i + 2);
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += ESCAPE + String.fromCharCode(SURROGATE_BASE + (unit - 0xd800));
    } else out += text.charAt(i);
  }
  return out;
}

/**
 * The string a stored form stands for (the inverse of `encodeLedgerText`). An escape followed by
 * anything else is kept as it is, so text stored before the encoding reads back unchanged.
 * @param stored a string as stored
 * @returns the original string
 */
export function decodeLedgerText(stored: string): string {
  if (!stored.includes(ESCAPE)) return stored;
  let out = "";
  for (let i = 0; i < stored.length; i++) {
    const unit = stored.charCodeAt(i);
    const code = stored.charCodeAt(i + 1);
    if (unit !== 0xffff || Number.isNaN(code)) {
      out += stored.charAt(i);
      continue;
    }
    if (code === NUL_CODE) out += "\u0000";
    else if (code === ESCAPE_CODE) out += ESCAPE;
    else if (code >= SURROGATE_BASE && code < SURROGATE_BASE + 0x800) {
      out += String.fromCharCode(0xd800 + (code - SURROGATE_BASE));
    } else {
      out += ESCAPE;
      continue;
    }
    i++;
  }
  return out;
}

/**
 * The migration step that re-encodes text stored before the encoding existed: a U+FFFF already in a
 * column would otherwise read as the start of an escape. NUL and lone surrogates could not be stored
 * then, so U+FFFF is the only character to escape.
 * @param table the table
 * @param columns its text columns (and JSON columns stored as text)
 * @param spell how the dialect writes `replace(column, U+FFFF, escaped)` and `column contains U+FFFF`
 * @returns one `UPDATE` per column
 */
export function reencodeStoredText(
  table: string,
  columns: readonly string[],
  spell: { replace(column: string): string; contains(column: string): string },
): string {
  return columns
    .map(
      (column) => `UPDATE ${table} SET ${column} = ${spell.replace(column)} WHERE ${spell.contains(column)};`,
    )
    .join("\n");
}

function isLow(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
