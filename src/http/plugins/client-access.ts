import type { FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { normalizeId } from '../../domain/normalize.js';

/**
 * What a user's auth token may do (docs/client-api.md): the one rule. A request authenticated
 * by the `authToken` header acts as the token's user, exactly as `onBehalfOf` makes them with an
 * API key, on the operations listed here, by operationId (the same under `/v3` and `/v3.0`);
 * every other operation, and any added later without an entry here, answers
 * ERR_PERMISSION_DENIED (403). The services keep their own checks of what the onBehalfOf user
 * may do (a group's scopes, a message's sender, the conversations they are part of).
 */
export interface ClientRule {
  /**
   * Parameters that name the token's own user: when given, they must (another uid answers 403,
   * whether that user exists or not). `path.uid` on the routes about a user's own lists,
   * `query.uid` on a user's notification preferences, `body.owner` on a group's creation.
   */
  self?: readonly Param[];
  /**
   * Path parameters that may name another user: the other side of a conversation, a member
   * acted on in a group (the services check the token's user may). Every `{uid}` of a listed
   * route is in `self` or here, so none is let through by omission (checked at registration).
   */
  others?: readonly Param[];
}

type Param = `${'path' | 'query' | 'body'}.${string}`;

const ANY: ClientRule = {};
/** Routes about a user's own lists: the path's uid is the token's user. */
const OWN: ClientRule = { self: ['path.uid'] };
/** The path's uid names another user (a conversation's other side, a member acted on). */
const OTHER: ClientRule = { others: ['path.uid'] };
/** A user's notification preferences: named by the `uid` query parameter. */
const OWN_QUERY: ClientRule = { self: ['query.uid'] };

/**
 * The operations a chat app's user does for themselves. Not here, on purpose: creating,
 * listing, updating or deleting users, API keys and auth tokens; roles and permissions; app-wide
 * lists (users, groups, a group's members and bans); bot messages; rate limits, stats and the
 * event stream; moderation's administration; notification providers, settings, logs and push
 * tokens; the data import.
 */
export const CLIENT_ACCESS: Readonly<Record<string, ClientRule>> = {
  // The SDK's REST half (client.routes.ts).
  'update-me': ANY,
  'get-client-settings': ANY,
  'create-user-session': ANY,
  // A user's profile, as any user of the app sees it (blockedByMe and hasBlockedMe relative to them).
  'get-user': OTHER,
  // Friends and blocks: the token's own lists.
  'add-friend': OWN,
  'list-all-friends': OWN,
  'remove-friend': OWN,
  'block-users': OWN,
  'unblock-users': OWN,
  'list-blocked-users': OWN,
  // Groups: created as their owner; joined, left and administered as their scope allows.
  'create-group': { self: ['body.owner'] },
  'get-group': ANY,
  'update-group': ANY,
  'delete-group': ANY,
  'add-group-members': ANY,
  'change-group-member-scope': OTHER,
  'kick-group-member': OTHER,
  'ban-group-user': OTHER,
  'unban-group-user': OTHER,
  // Messages, threads, reactions and flags.
  'send-message': ANY,
  'list-all-messages': ANY,
  'get-message-details': ANY,
  'update-message': ANY,
  'delete-message': ANY,
  'user-list-user-messages': OTHER,
  'user-list-group-messages': ANY,
  'send-thread-message': ANY,
  'list-all-thread-messages': ANY,
  'list-all-reactions': ANY,
  'get-message-reactions': ANY,
  'add-message-reactions': ANY,
  'remove-message-reactions': ANY,
  'flag-a-message': ANY,
  // Conversations and receipts.
  'list-all-conversations': ANY,
  'get-conversation': ANY,
  'delete-conversation': ANY,
  'get-user-conversations': OTHER,
  'update-user-conversation': OTHER,
  'reset-user-conversation': OTHER,
  'mark-conversation-as-delivered': OTHER,
  'mark-conversation-as-read': OTHER,
  'mark-conversation-as-unread': OTHER,
  'get-group-conversations': ANY,
  'update-group-conversation': ANY,
  'reset-group-conversation': ANY,
  'mark-group-conversation-as-delivered': ANY,
  'mark-group-conversation-as-read': ANY,
  'mark-group-conversation-as-unread': ANY,
  // A user's own notification preferences, mutes, time zone and contact details.
  'notifications-push-list-preferences': OWN_QUERY,
  'notifications-push-update-preferences': OWN_QUERY,
  'notifications-push-reset-preferences': OWN_QUERY,
  'notifications-push-list-muted': OWN_QUERY,
  'notifications-push-mute-conversations': OWN_QUERY,
  'notifications-push-unmute-conversations': OWN_QUERY,
  'notifications-get-timezone': OWN_QUERY,
  'notifications-update-timezone': OWN_QUERY,
  'notifications-get-contact-details': OWN_QUERY,
  'notifications-update-contact-details': OWN_QUERY,
  'notifications-delete-contact-details': OWN_QUERY,
};

/** The rule of a route's operation, or undefined: a token may not call it. */
export function clientRule(operationId: string | undefined): ClientRule | undefined {
  return operationId !== undefined && Object.hasOwn(CLIENT_ACCESS, operationId) ? CLIENT_ACCESS[operationId] : undefined;
}

/**
 * Throws at registration when a listed route's path names a user (`{uid}`) that its rule
 * classifies as neither its own nor another's: a route is never opened to tokens by omission.
 */
export function checkClientRule(operationId: string | undefined, url: string): void {
  const rule = clientRule(operationId);
  if (rule === undefined) return;
  for (const [, name] of url.matchAll(/:(\w+)/g)) {
    if (name !== 'uid') continue;
    const param: Param = `path.${name}`;
    if (!rule.self?.includes(param) && !rule.others?.includes(param)) {
      throw new Error(`client-access.ts: ${operationId} (${url}) names a user in its path; list path.${name} in its self or others`);
    }
  }
}

function denied(operationId: string | undefined): AppError {
  return new AppError('ERR_PERMISSION_DENIED', {
    message: `An auth token cannot be used for this operation${operationId ? ` (${operationId})` : ''}: it acts for its own user only. Use an API key.`,
  });
}

/**
 * For a request authenticated by the auth token of `uid`, before its body is read: the route's
 * operation must be listed, and its path and query must name no other user where the rule
 * says they name the token's own.
 */
export function checkClientRequest(request: FastifyRequest, uid: string): void {
  const operationId = (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId;
  const rule = clientRule(operationId);
  if (rule === undefined) throw denied(operationId);
  for (const param of rule.self ?? []) {
    if (param.startsWith('body.')) continue;
    const [where, name] = param.split('.') as ['path' | 'query', string];
    const values = (where === 'path' ? request.params : request.query) as Record<string, unknown> | undefined;
    if (!namesOnly(values?.[name], uid)) throw denied(operationId);
  }
}

/** For the same request once its body is parsed and validated: body fields that must name the token's user. */
export function checkClientBody(request: FastifyRequest, uid: string): void {
  const operationId = (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId;
  const rule = clientRule(operationId);
  if (rule === undefined) throw denied(operationId);
  const body = request.body as Record<string, unknown> | undefined;
  for (const param of rule.self ?? []) {
    if (param.startsWith('body.') && !namesOnly(body?.[param.slice(5)], uid)) throw denied(operationId);
  }
}

/** Whether a parameter's value is absent or names `uid` (ids compare normalised). */
function namesOnly(value: unknown, uid: string): boolean {
  if (value === undefined) return true;
  if (Array.isArray(value)) return value.every((each) => namesOnly(each, uid));
  return typeof value === 'string' && value.length <= 200 && normalizeId(value) === uid;
}
