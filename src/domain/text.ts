import type { ErrorDetails } from './errors.js';

/**
 * What Parley stores must be text PostgreSQL can hold, and JSON it can serialise again. One rule,
 * applied at the edge to every request (http/plugins/text-guard.ts) and by the data import to
 * each record on its own, so that one bad record fails alone.
 */

/** The deepest nesting of arrays and objects accepted in a JSON body or an import record. */
export const MAX_JSON_DEPTH = 64;

const NUL_PROBLEM = 'must not contain the NUL character';
const SURROGATE_PROBLEM = 'must be valid Unicode text: it holds a lone UTF-16 surrogate';

/**
 * Why PostgreSQL cannot store this string, if it cannot: the NUL character (text cannot hold
 * it), or half of a UTF-16 surrogate pair (JSON's `\ud800`, which is no character: the text
 * cannot be encoded as UTF-8, and PostgreSQL refuses it inside JSON).
 */
export function unstorableText(value: string): string | undefined {
  if (value.includes('\u0000')) return NUL_PROBLEM;
  if (!value.isWellFormed()) return SURROGATE_PROBLEM;
  return undefined;
}

/**
 * The first field (`a.b.0`) of a parsed JSON value whose string or key PostgreSQL cannot store,
 * or where arrays and objects nest deeper than `maxDepth`; with the problem, as error details.
 */
export function findUnstorable(value: unknown, maxDepth: number = MAX_JSON_DEPTH, path = '', depth = 0): ErrorDetails | undefined {
  if (typeof value === 'string') {
    const problem = unstorableText(value);
    return problem ? { [path || 'value']: problem } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= maxDepth) return { [path || 'value']: `nests deeper than ${maxDepth} levels` };
  for (const key of Object.keys(value)) {
    const childPath = path ? `${path}.${key}` : key;
    const problem = unstorableText(key);
    if (problem) return { [childPath]: problem };
    const found = findUnstorable((value as Record<string, unknown>)[key], maxDepth, childPath, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Only these escapes in JSON text can decode to a string PostgreSQL cannot store (raw bytes that
 * are not UTF-8 decode to U+FFFD, which it can): a body without them needs no walk.
 */
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/** Whether JSON text may hold a string that unstorableText refuses (then findUnstorable tells where). */
export function mayHoldUnstorableText(json: string): boolean {
  return SUSPECT_ESCAPE.test(json);
}

/**
 * Whether JSON text nests arrays and objects deeper than `maxDepth`, read from the text itself
 * (brackets outside strings), so that a hostile body is refused before anything walks it.
 */
export function jsonNestsDeeperThan(json: string, maxDepth: number): boolean {
  // Each level takes two characters at least.
  if (json.length <= 2 * maxDepth) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
