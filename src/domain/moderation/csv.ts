/**
 * CSV as RFC 4180 writes it, for keyword lists uploaded as a file: fields separated by commas,
 * records by CRLF (a lone LF or CR is read as a line break too), a field in double quotes may hold
 * commas, line breaks and quotes written twice (`""`). A UTF-8 byte order mark is skipped. Two
 * leniencies for hand-written lists: spaces and tabs around a quoted field are ignored, and a
 * last line without a line break ends the file.
 *
 * Refused, with the line where it happens: a quote that never closes, a quote inside a field
 * that did not start with one, and text after a closing quote.
 */

export type CsvResult = { ok: true; rows: string[][] } | { ok: false; line: number; problem: string };

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;

/** The rows of a CSV text, each a list of its fields as written (quotes removed, not trimmed). */
export function parseCsv(input: string): CsvResult {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  const rows: string[][] = [];
  let row: string[] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  // One field per turn of the loop; `i` is at the field's first character.
  for (;;) {
    const start = i;
    while (i < n && (text.charCodeAt(i) === SPACE || text.charCodeAt(i) === TAB)) i++;
    let field: string;
    const quoted = i < n && text.charCodeAt(i) === QUOTE;
    if (quoted) {
      const opened = line;
      i++;
      let value = '';
      let from = i;
      for (;;) {
        if (i >= n) return { ok: false, line: opened, problem: 'a quoted field is not closed (a " is missing)' };
        const c = text.charCodeAt(i);
        if (c === QUOTE) {
          if (text.charCodeAt(i + 1) === QUOTE) {
            value += text.slice(from, i + 1);
            i += 2;
            from = i;
            continue;
          }
          value += text.slice(from, i);
          i++;
          break;
        }
        if (c === LF || (c === CR && text.charCodeAt(i + 1) !== LF)) line++;
        i++;
      }
      while (i < n && (text.charCodeAt(i) === SPACE || text.charCodeAt(i) === TAB)) i++;
      if (i < n && !isSeparator(text.charCodeAt(i))) {
        return { ok: false, line, problem: 'text follows a closing quote (a quote inside a quoted field is written "")' };
      }
      field = value;
    } else {
      while (i < n && !isSeparator(text.charCodeAt(i))) {
        if (text.charCodeAt(i) === QUOTE) return { ok: false, line, problem: 'a quote inside a field that does not start with one (quote the whole field and write the quote "")' };
        i++;
      }
      field = text.slice(start, i);
    }
    row.push(field);
    if (i >= n) {
      // A file ending with a line break has no empty last record.
      if (!(row.length === 1 && row[0] === '' && !quoted)) rows.push(row);
      return { ok: true, rows };
    }
    const c = text.charCodeAt(i);
    i++;
    if (c === COMMA) continue;
    if (c === CR && text.charCodeAt(i) === LF) i++;
    line++;
    rows.push(row);
    row = [];
    if (i >= n) return { ok: true, rows };
  }
}

function isSeparator(c: number): boolean {
  return c === COMMA || c === LF || c === CR;
}

/** Every non-empty cell of every row, trimmed, in order: a keyword list's terms from a CSV text. */
export function csvCells(input: string): { ok: true; cells: string[] } | { ok: false; line: number; problem: string } {
  const parsed = parseCsv(input);
  if (!parsed.ok) return parsed;
  const cells: string[] = [];
  for (const row of parsed.rows) {
    for (const cell of row) {
      const term = cell.trim();
      if (term !== '') cells.push(term);
    }
  }
  return { ok: true, cells };
}

/** A file's bytes as UTF-8 text, or undefined when they are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
