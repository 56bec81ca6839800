/**
 * What an answer of app B to a request naming app A's entities may and may not contain.
 * Each check returns failures as text (empty when the answer is fine), so that a test can report
 * every failure of an operation at once.
 */
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { conversationKeysOf, wireConversationId } from '../../src/domain/conversation-id.js';
import { ERROR_CATALOGUE, type ErrorCode } from '../../src/domain/error-codes.js';
import type { TestApp } from './app.js';
import type { Tenant } from './tenant-data.js';

function parse(response: LightMyRequestResponse): any {
  try {
    return response.json();
  } catch {
    return undefined;
  }
}

const excerpt = (response: LightMyRequestResponse) => `${response.statusCode} ${response.body.slice(0, 400)}`;

/** Checks for any answer: no 5xx, errors in the vendor's shape, and nothing of A's data. */
export function commonFailures(a: Tenant, response: LightMyRequestResponse): string[] {
  const failures: string[] = [];
  const json = parse(response);
  if (response.statusCode >= 500) failures.push(`answered ${excerpt(response)}`);
  if (response.statusCode >= 400 && (typeof json?.error?.code !== 'string' || typeof json?.error?.message !== 'string')) {
    failures.push(`error not in the vendor's shape {"error":{"code","message"}}: ${excerpt(response)}`);
  }
  // The marker is in A's stored names, texts and metadata and in no request: any answer holding
  // it shows A's data.
  if (response.body.includes(a.marker)) failures.push(`answer holds A's data (its marker): ${excerpt(response)}`);
  if (response.statusCode < 300) {
    for (const secret of a.secrets) {
      if (response.body.includes(secret)) failures.push(`answer holds A's key or token ${secret}: ${excerpt(response)}`);
    }
    const ids = new Set(a.messages);
    const found = new Set<string>();
    visit(json, (key, value) => {
      if (/id$/i.test(key) && (typeof value === 'string' || typeof value === 'number') && ids.has(String(value))) found.add(String(value));
    });
    if (found.size > 0) failures.push(`answer names A's messages ${[...found].join(', ')}: ${excerpt(response)}`);
    // A list's counts are of what it lists: a first page that is not full holds them all, so
    // its total is its length (a count of another app's rows would show here).
    const page = json?.meta?.pagination;
    if (Array.isArray(json?.data) && page && page.current_page === 1 && json.data.length < page.per_page) {
      if (page.total !== json.data.length || page.count !== json.data.length) failures.push(`counts other than its items: ${excerpt(response)}`);
    }
    const current = json?.meta?.current;
    if (Array.isArray(json?.data) && current && current.count !== undefined && current.count !== json.data.length) {
      failures.push(`counts other than its items: ${excerpt(response)}`);
    }
  }
  return failures;
}

function visit(node: unknown, each: (key: string, value: unknown) => void): void {
  if (Array.isArray(node)) for (const item of node) visit(item, each);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      each(key, value);
      visit(value, each);
    }
  }
}

const isFailure = (node: any) => node && typeof node === 'object' && node.success === false && node.error;

/**
 * A's ids (users, group, role, tags, conversations, reaction, moderation rule, keyword list and
 * reason) that a 2xx answer names outside its per-item failures, and the codes of those failures.
 */
export function answerItems(a: Tenant, json: unknown): { ids: Set<string>; failureCodes: string[]; successes: number } {
  const aIds = new Set([...a.users, ...(a.loner ? [a.loner] : []), a.group, a.role, a.tag, a.reaction, ...a.conversations, a.rule, a.keywordList, a.reason]);
  const ids = new Set<string>();
  const failureCodes: string[] = [];
  let successes = 0;
  const walk = (node: any): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (isFailure(node)) failureCodes.push(String(node.error.code));
    else if (node && typeof node === 'object') {
      if (node.success === true) successes++;
      for (const [key, value] of Object.entries(node)) {
        if (aIds.has(key) && !isFailure(value)) ids.add(key);
        walk(value);
      }
    } else if (typeof node === 'string' && aIds.has(node)) ids.add(node);
  };
  walk(json);
  return { ids, failureCodes, successes };
}

/** Of `ids`, those that app `appId` holds as its own user, group, role, conversation, moderation rule, keyword list or reason. */
export async function ownedBy(t: TestApp, appId: string, ids: Set<string>): Promise<Set<string>> {
  if (ids.size === 0) return new Set();
  const list = [...ids];
  const { rows } = await sql<{ id: string }>`
    select uid as id from users where app_id = ${appId} and uid = any(${list})
    union select guid from groups where app_id = ${appId} and guid = any(${list})
    union select role from roles where app_id = ${appId} and role = any(${list})
    union select 'group_' || guid from groups where app_id = ${appId} and 'group_' || guid = any(${list})
    union select id from moderation_rules where app_id = ${appId} and id = any(${list})
    union select id from moderation_keyword_lists where app_id = ${appId} and id = any(${list})
    union select id from moderation_reasons where app_id = ${appId} and id = any(${list})`.execute(t.database.db);
  // Conversations are stored by key (src/domain/conversation-id.ts): the vendor's ids they show as.
  const keys = list.flatMap((id) => conversationKeysOf(id));
  const conversations = await sql<{ key: string }>`
    select conversation_id as key from conversations where app_id = ${appId} and conversation_id = any(${keys})`.execute(t.database.db);
  return new Set([...rows.map((r) => r.id), ...conversations.rows.map((r) => wireConversationId(r.key))]);
}

export const statusOf = (code: string) => (Object.hasOwn(ERROR_CATALOGUE, code) ? ERROR_CATALOGUE[code as ErrorCode].status : undefined);

/**
 * 403 codes that answer the same whether or not what the request names exists: "not part of it,
 * or no message yet". Any other 403 to a request naming A's entity could tell that it exists
 * (ERR_GROUP_NOT_JOINED would say there is such a group), and is a failure.
 */
export const NEUTRAL_403 = new Set(['ERR_CONVERSATION_NOT_ACCESSIBLE']);

/**
 * A refusal that tells nothing about A: not found (404), or a neutral 403. Also two 400s that
 * come before any entity is looked up: the operation needs an onBehalfOf user and none was sent,
 * or it does not take the alternative field `separate` at all (a thread reply takes no
 * multipleReceivers); and a 400 naming only fields that reference what B lacks (`references`:
 * a rule's condition naming a keyword list of A's), the answer to an id that exists nowhere.
 */
export function isRefusal(response: LightMyRequestResponse, onBehalfOf: string | undefined, request: { separate?: string; references?: string[] } = {}): boolean {
  const error = parse(response)?.error;
  if (response.statusCode === 404) return true;
  if (response.statusCode === 403) return NEUTRAL_403.has(error?.code);
  if (response.statusCode !== 400 || error?.code !== 'ERR_BAD_REQUEST') return false;
  // The fields at fault (every error's details also carry the request's id).
  const fields = Object.keys(error?.details ?? {}).filter((field) => field !== 'requestId');
  if (onBehalfOf === undefined && fields.length === 1 && fields[0] === 'onBehalfOf') return true;
  const references = request.references ?? [];
  if (fields.length > 0 && fields.every((f) => references.some((r) => f === r || f.startsWith(`${r}[`) || f.startsWith(`${r}.`)))) return true;
  return request.separate !== undefined && fields.length === 1 && fields[0] === request.separate;
}

export { excerpt, parse };
