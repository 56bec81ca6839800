import { normalizeId } from './normalize.js';

/** Categories and types a client may send (docs/compatibility.md, "Messages"): `custom` takes any type. */
export const SENDABLE_CATEGORIES = ['message', 'custom'] as const;
export const MESSAGE_TYPES = ['text', 'image', 'video', 'audio', 'file'] as const;
export const MEDIA_TYPES = ['image', 'video', 'audio', 'file'] as const;

/** PostgreSQL's bigint ceiling: a larger id would make the query fail instead of matching nothing. */
const MAX_ID = 9_223_372_036_854_775_807n;

/** A message id from a path: digits within bigint, else undefined (it names no message). */
export function parseMessageId(raw: string): string | undefined {
  if (!/^\d{1,19}$/.test(raw) || BigInt(raw) > MAX_ID) return undefined;
  return BigInt(raw).toString();
}

/**
 * A cursor id from a query: clamped to the bigint range, so the integrators' habit of
 * `affix=prepend&id=<huge>` ("from the newest") works.
 */
export function cursorId(raw: string): string {
  const value = BigInt(raw);
  return (value > MAX_ID ? MAX_ID : value).toString();
}

const MENTION = /<@uid:([a-zA-Z0-9_-]{1,100})>/g;

/** The distinct uids mentioned as `<@uid:UID>` in a text, normalised, in first-seen order. */
export function mentionedUids(text: string | undefined): string[] {
  // Most texts mention no one: one substring search instead of the regular expression's walk.
  if (!text?.includes('<@uid:')) return [];
  return [...new Set([...text.matchAll(MENTION)].map((match) => normalizeId(match[1]!)))];
}
