import { badRequest } from './errors.js';

/**
 * Normalisation shared by the REST path and the data import path, so that both apply the same
 * rules. Shape rules (types, lengths, patterns) live in the TypeBox schemas; these are the
 * rules a schema cannot express.
 */

/** uids, guids and role ids: alpha-dash, at most 100 characters; stored lower-cased. */
export const ID_PATTERN = '^[a-zA-Z0-9_-]+$';
export const ID_MAX_LENGTH = 100;

/** An app id is one DNS label, since it leads the host name: <appId>.api-<region>.<domain>. */
export const APP_ID_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export const LIMITS = {
  nameLength: 100,
  urlLength: 3000,
  statusMessageLength: 1000,
  /** Metadata, serialised as JSON (docs/compatibility.md, "Limits"). */
  metadataBytes: 5 * 1024,
  tagsPerEntity: 25,
  tagLength: 100,
  /** uids per bulk deactivate / reactivate call. */
  bulkUids: 1000,
  apiKeysPerApp: 25,
  apiKeyNameLength: 100,
  authTokensPerUser: 100,
  /** uids per add-members call, across its four arrays (and inline on create-group). */
  membersPerCall: 25,
  membersPerGroup: 100_000,
  /** uids per add-friend, remove-friend, block-users and unblock-users call. */
  relationUidsPerCall: 25,
  /** The vendor's limit (an older page of its docs says 500; docs/compatibility.md, "Friends and blocked users"). */
  friendsPerUser: 1000,
  groupPasswordLength: 100,
  groupDescriptionLength: 255,
  rolesPerApp: 25,
  roleDescriptionLength: 255,
  /** The vendor's limits on the message as JSON, and its data object (docs/compatibility.md, "Messages"). */
  messageJsonChars: 65_536,
  messageDataBytes: 10 * 1024,
  mentionsPerMessage: 10,
  /** The vendor's limits: distinct reactions per message, characters per reaction (docs/compatibility.md, "Threads and reactions"). */
  reactionsPerMessage: 25,
  reactionLength: 45,
  /** Parley's own: reactions per page of a reaction list (the vendor's example shows 100). */
  reactionsPageMax: 100,
  /** Parley's own bounds: a client message id, a custom type, receivers of one multi-send. */
  muidLength: 255,
  messageTypeLength: 100,
  messageReceiversPerCall: 100,
  messageLimitMax: 1000,
  messageLimitDefault: 10,
  perPageMax: 1000,
  perPageDefault: 100,
} as const;

/** The largest 10-digit unix time in seconds (the year 2286): larger values are milliseconds sent by mistake. */
export const UNIX_SECONDS_MAX = 9_999_999_999;

/** Unix seconds (an integer, or a string of digits as the vendor's import examples send) as a Date. */
export function unixSecondsToDate(value: number | string): Date {
  return new Date(Number(value) * 1000);
}

export function normalizeId(raw: string): string {
  return raw.toLowerCase();
}

/** Lower-cases and de-duplicates ids, keeping first-seen order. */
export function normalizeIds(raw: readonly string[]): string[] {
  return [...new Set(raw.map(normalizeId))];
}

/** De-duplicates tags, keeping first-seen order and case. */
export function normalizeTags(raw: readonly string[]): string[] {
  return [...new Set(raw)];
}

/**
 * Serialises a metadata object, keeping its key order, and enforces the size limit.
 * `null` and `undefined` pass through.
 */
export function metadataJson(value: unknown, field = 'metadata', maxBytes: number = LIMITS.metadataBytes): string | null | undefined {
  if (value === undefined || value === null) return value;
  const json = JSON.stringify(value);
  if (Buffer.byteLength(json, 'utf8') > maxBytes) {
    throw badRequest({ [field]: `must be at most ${maxBytes} bytes when serialised as JSON` });
  }
  return json;
}
