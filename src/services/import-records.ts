import type { Static } from '@sinclair/typebox';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { GroupType, MemberScope } from '../db/schema.js';
import { AppError, badRequest, type ErrorDetails } from '../domain/errors.js';
import type { ErrorCode } from '../domain/error-codes.js';
import { metadataJson, normalizeId, normalizeTags, unixSecondsToDate } from '../domain/normalize.js';
import { findUnstorable } from '../domain/text.js';
import type { NewGroup } from '../repositories/groups.repository.js';
import type { BulkMessage } from '../repositories/message-store/message-imports.repository.js';
import type { NewUser } from '../repositories/users.repository.js';
import { type ImportGroupDetails, ImportGroupRecord, ImportMemberRecord, ImportMessageRecord, ImportUserRecord } from '../schemas/data-import.schema.js';
import { compileBodyValidator, validationDetails } from '../schemas/validator.js';

// The records of a data import call: their shapes, how a body is read into records, and the
// helpers each kind's import shares (docs/import.md).

/** One record's answer, as the vendor's data import answers each record. */
export type RecordResult<T> = { success: true; data: T } | { success: false; error: { code: string; message: string; details?: ErrorDetails } };

export interface ImportedMember {
  guid: string;
  uid: string;
  scope?: MemberScope;
  joinedAt?: number;
  isBanned?: true;
  bannedAt?: number;
}

export type ImportUser = Static<typeof ImportUserRecord>;
export type ImportGroupFields = Static<typeof ImportGroupDetails>;
export type ImportGroup = Static<typeof ImportGroupRecord>;
export type ImportMember = Static<typeof ImportMemberRecord>;
export type ImportMessage = Static<typeof ImportMessageRecord>;

/** Rows per INSERT statement (and per transaction): the statement stays small, the round trips few. */
export const CHUNK = 1_000;
/** Messages per transaction: a message import writes them in two statements, whatever their number. */
export const MESSAGE_CHUNK = 5_000;

export interface Kind {
  wrapper: 'users' | 'groups' | 'members' | 'messages';
  idField: 'uid' | 'guid' | 'memberId' | 'muid';
  formatCode: ErrorCode;
  /** Ids compared as sent (a muid), not lower-cased as uids and guids are. */
  exact?: boolean;
}
export const USERS: Kind = { wrapper: 'users', idField: 'uid', formatCode: 'ERR_IMPORT_INVALID_USER_FORMAT' };
export const GROUPS: Kind = { wrapper: 'groups', idField: 'guid', formatCode: 'ERR_IMPORT_INVALID_GROUP_FORMAT' };
export const MEMBERS: Kind = { wrapper: 'members', idField: 'memberId', formatCode: 'ERR_IMPORT_INVALID_MEMBER_FORMAT' };
export const MESSAGES: Kind = { wrapper: 'messages', idField: 'muid', formatCode: 'ERR_IMPORT_INVALID_MESSAGE_FORMAT', exact: true };

export const validateUser = compileBodyValidator(ImportUserRecord);
export const validateGroup = compileBodyValidator(ImportGroupRecord);
export const validateMember = compileBodyValidator(ImportMemberRecord);
export const validateMessage = compileBodyValidator(ImportMessageRecord);

/** A validated message record, with the users and group its *Details create. */
export interface MessageCandidate {
  key: string;
  row: BulkMessage & { sentAt: Date; muid: string };
  /** Mentioned uids, kept if they name active users when stored. */
  mentioned: string[];
  users: NewUser[];
  group: PreparedGroup | undefined;
}

/** A group ready to insert, but for its password hash (made only for groups that will be inserted). */
export interface PreparedGroup {
  group: NewGroup;
  password: string | undefined;
}

/**
 * The body's records, in order, after the checks that fail the whole call: the wrapper must
 * be an object keyed by id, each record an object whose id is its key, and at most
 * `maxRecords` of them.
 */
export function recordsOf(body: unknown, kind: Kind, maxRecords: number): Array<[string, Record<string, unknown>]> {
  const malformed = (problem: string, details: ErrorDetails) => new AppError(kind.formatCode, { params: { problem }, details });
  if (!isObject(body)) throw malformed('the body is not a JSON object', { body: 'must be an object' });
  const wrapper = body[kind.wrapper];
  if (!isObject(wrapper)) {
    throw malformed(`"${kind.wrapper}" is ${wrapper === undefined ? 'missing' : 'not an object'}`, {
      [kind.wrapper]: `must be an object keyed by ${kind.idField}`,
    });
  }
  const entries = Object.entries(wrapper);
  if (entries.length > maxRecords) {
    throw badRequest(
      { [kind.wrapper]: `must hold at most ${maxRecords} records per call` },
      `The request holds ${entries.length} records; at most ${maxRecords} are accepted per call. Send them in several calls.`,
    );
  }
  for (const [key, record] of entries) {
    if (!isObject(record)) throw malformed(`the record ${key} is not an object`, { [`${kind.wrapper}.${key}`]: 'must be an object' });
    const id = record[kind.idField];
    if (typeof id !== 'string' || (kind.exact ? id !== key : normalizeId(id) !== normalizeId(key))) {
      throw malformed(`the key ${key} differs from its record's ${kind.idField}`, {
        [`${kind.wrapper}.${key}.${kind.idField}`]: `must equal the record's key, ${key}`,
      });
    }
  }
  return entries as Array<[string, Record<string, unknown>]>;
}

/** A validated user record (or *Details object) as a row to insert. */
export function prepareUser(record: ImportUser, field = ''): NewUser {
  return {
    uid: normalizeId(record.uid),
    name: record.name,
    avatar: record.avatar,
    link: record.link,
    role: record.role === undefined ? undefined : normalizeId(record.role),
    statusMessage: record.statusMessage,
    metadataJson: metadataJson(record.metadata, `${field}metadata`),
    tags: record.tags && normalizeTags(record.tags),
    createdAt: time(record.createdAt),
    lastActiveAt: time(record.lastActiveAt),
    deactivatedAt: time(record.deactivatedAt),
  };
}

/** A validated group record (or groupDetails object) as a row to insert, its password not yet hashed. */
export function prepareGroup(record: ImportGroupFields, defaultOwner: string | undefined, field = ''): PreparedGroup {
  if (record.type === 'password' && !record.password) throw new AppError('ERR_EMPTY_GROUP_PASS');
  return {
    group: {
      guid: normalizeId(record.guid),
      name: record.name,
      type: record.type as GroupType,
      passwordHash: null,
      icon: record.icon,
      description: record.description,
      metadataJson: metadataJson(record.metadata, `${field}metadata`),
      tags: record.tags && normalizeTags(record.tags),
      owner: record.owner !== undefined ? normalizeId(record.owner) : (defaultOwner ?? null),
      createdAt: time(record.createdAt),
    },
    password: record.type === 'password' ? record.password : undefined,
  };
}

export function time(value: number | string | undefined): Date | undefined {
  return value === undefined ? undefined : unixSecondsToDate(value);
}

/**
 * Validates a record: text PostgreSQL can store, nested at most MAX_JSON_DEPTH deep (the edge's
 * rule, applied here record by record), then its schema. A failure is ERR_BAD_REQUEST with a
 * detail per field.
 */
export function check(validate: ValidateFunction, record: unknown): void {
  const unstorable = findUnstorable(record);
  if (unstorable) throw badRequest(unstorable);
  if (validate(record)) return;
  throw badRequest(validationDetails((validate.errors ?? []) as ErrorObject[], 'record'));
}

export function attempt<T>(work: () => T): T | AppError {
  try {
    return work();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

export function failure(error: AppError): { success: false; error: { code: string; message: string; details?: ErrorDetails } } {
  return { success: false, error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } };
}

export function uidExists(uid: string): AppError {
  return new AppError('ERR_UID_ALREADY_EXISTS', { params: { uid } });
}

export function guidExists(guid: string): AppError {
  return new AppError('ERR_GUID_ALREADY_EXISTS', { params: { guid } });
}

/** The first item of each id, in order; `onRepeat` is told of the others. */
export function firstOfEach<T>(items: T[], idOf: (item: T) => string, onRepeat: (item: T) => void): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const id = idOf(item);
    if (seen.has(id)) {
      onRepeat(item);
      return false;
    }
    seen.add(id);
    return true;
  });
}

/** Sorted by key, so concurrent importers insert (and lock) rows in the same order. */
export function sortBy<T>(items: T[], keyOf: (item: T) => string): T[] {
  return [...items].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
}

export function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function distinct(values: string[]): string[] {
  return [...new Set(values)];
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The results in the order of the body's records. */
export function inOrder<T>(entries: Array<[string, unknown]>, results: Map<string, RecordResult<T>>): Record<string, RecordResult<T>> {
  // fromEntries defines properties, so even a key such as __proto__ stays a plain key.
  return Object.fromEntries(entries.map(([key]) => [key, results.get(key)!]));
}

/** Imported records, by app, kind and result: stored, or answered with an error. */
export interface ImportedRecords {
  appId: string;
  kind: string;
  stored: number;
  failed: number;
}

/** The records an import service answered since it was made (for the metrics: docs/metrics.md). */
export class ImportCounts {
  /** By app id and kind. */
  private readonly counts = new Map<string, ImportedRecords>();

  /** Counts the results, and answers them in the order of the body's records (inOrder). */
  answer<T>(appId: string, kind: string, entries: Array<[string, unknown]>, results: Map<string, RecordResult<T>>): Record<string, RecordResult<T>> {
    const key = `${appId}\u0000${kind}`;
    let counts = this.counts.get(key);
    if (counts === undefined) this.counts.set(key, (counts = { appId, kind, stored: 0, failed: 0 }));
    for (const result of results.values()) {
      if (result.success) counts.stored++;
      else counts.failed++;
    }
    return inOrder(entries, results);
  }

  stats(): ImportedRecords[] {
    return [...this.counts.values()].map((counts) => ({ appId: counts.appId, kind: counts.kind, stored: counts.stored, failed: counts.failed }));
  }
}
