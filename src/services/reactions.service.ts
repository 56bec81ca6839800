import type { Kysely } from 'kysely';
import type { DB, MemberScope } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { AppError, badRequest } from '../domain/errors.js';
import { requireShown } from '../domain/moderation/status.js';
import { cursorId } from '../domain/messages.js';
import { LIMITS } from '../domain/normalize.js';
import { asList } from '../domain/permissions.js';
import { toUnix } from '../domain/time.js';
import type { MessagesRepository } from '../repositories/messages.repository.js';
import type { EventsRepository } from '../repositories/events.repository.js';
import type { ReactionsRepository } from '../repositories/reactions.repository.js';
import { reactionEvent } from './views/events.view.js';
import type { UsersRepository } from '../repositories/users.repository.js';
import type { MessageHistoryService } from './message-history.service.js';
import type { Message } from './views/messages.view.js';
import { permissionDenied, type RbacService } from './rbac.service.js';
import type { UsersService } from './users.service.js';
import { toUser } from './views/users.view.js';

export interface Reaction {
  id: string;
  messageId: string;
  reaction: string;
  uid: string;
  reactedAt: number;
  /** The user as now; a permanently deleted user leaves only the uid. */
  reactedBy: Record<string, unknown>;
}

export interface ReactionPageInput {
  limit?: number;
  /** Cursor: reactions added after the one with this id. */
  id?: string;
}

/** As the vendor's example: the page size and count, and the last reaction of the page. */
export interface ReactionListMeta {
  current: { limit: number; count: number };
  next?: { affix: 'append'; id: string };
}

/** Reactions to messages: anyone who can see a message may react to it. */
export class ReactionsService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      messages: MessagesRepository;
      reactions: ReactionsRepository;
      users: UsersRepository;
      history: MessageHistoryService;
      usersService: Pick<UsersService, 'withActor'>;
      rbac: RbacService;
      events: EventsRepository;
    },
  ) {}

  /**
   * add-message-reactions, as the onBehalfOf user; adding a reaction again changes nothing.
   * Answers the message with its reaction counts.
   */
  async add(ctx: RequestContext, rawId: string, rawReaction: string): Promise<Message> {
    const uid = reactor(ctx);
    const reaction = checkReaction(rawReaction);
    // Read after the path's checks, so that a bad reaction is answered as such whoever onBehalfOf names.
    const actor = (await this.deps.usersService.withActor(ctx)).actor!;
    const { row: visible, scope } = await this.deps.history.requireVisibleWithScope(ctx, rawId);
    requireShown(visible, 'reacted to');
    if (scope) await this.deps.rbac.requireScopeAllows(ctx, visible.receiver, scope, 'addReaction');
    const id = String(visible.id);
    const row = await withTransaction(
      this.deps.db,
      'add_reaction',
      async (tx) => {
        // The message's row lock makes concurrent adds take turns, so the limit holds.
        const locked = await this.deps.messages.getForUpdate(ctx.appId, id, tx);
        if (!locked) throw new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id: rawId } });
        const present = await this.deps.reactions.distinct(ctx.appId, id, reaction, tx);
        if (!present.has && present.count >= LIMITS.reactionsPerMessage) {
          throw badRequest({ reaction: `is a new reaction, and a message has at most ${LIMITS.reactionsPerMessage} distinct reactions` });
        }
        const added = await this.deps.reactions.add(ctx.appId, id, reaction, uid, tx);
        if (added) await this.deps.events.record(ctx.appId, [reactionEvent('message_reaction_added', locked, reaction, actor, added)], tx);
        return locked;
      },
      ctx.log,
    );
    return (await this.deps.history.render(ctx, [row], { withTags: true }))[0]!;
  }

  /** remove-message-reactions, as the onBehalfOf user; removing a reaction they have not added changes nothing. */
  async remove(ctx: RequestContext, rawId: string, rawReaction: string): Promise<Message> {
    const uid = reactor(ctx);
    const reaction = checkReaction(rawReaction);
    // Read after the path's checks, so that a bad reaction is answered as such whoever onBehalfOf names.
    const actor = (await this.deps.usersService.withActor(ctx)).actor!;
    const row = await this.deps.history.requireVisible(ctx, rawId);
    // One statement removes it (a removal can neither break the limit nor race with itself); its event goes with it.
    await withTransaction(
      this.deps.db,
      'remove_reaction',
      async (tx) => {
        const removed = await this.deps.reactions.remove(ctx.appId, String(row.id), reaction, uid, tx);
        if (removed) await this.deps.events.record(ctx.appId, [reactionEvent('message_reaction_removed', row, reaction, actor, removed)], tx);
      },
      ctx.log,
    );
    return (await this.deps.history.render(ctx, [row], { withTags: true }))[0]!;
  }

  /**
   * list-all-reactions and (with `reaction`) get-message-reactions: who reacted, in the order
   * they did, as a user who can see the message.
   */
  async list(ctx: RequestContext, rawId: string, input: ReactionPageInput, rawReaction?: string): Promise<{ data: Reaction[]; meta: ReactionListMeta }> {
    const reaction = rawReaction === undefined ? undefined : checkReaction(rawReaction);
    // After the path's checks, as add does.
    await this.deps.usersService.withActor(ctx);
    const { row: message, scope } = await this.deps.history.requireVisibleWithScope(ctx, rawId);
    const limit = input.limit ?? LIMITS.reactionsPageMax;
    const page: Parameters<ReactionsRepository['list']>[2] = { reaction, afterId: input.id === undefined ? undefined : cursorId(input.id), limit };
    if (scope) {
      const values = await this.deps.rbac.scopeValues(ctx, message.receiver, scope, ['listReactions', 'listReactions.allowedScopes']);
      if (values.get('listReactions') === 'deny') throw permissionDenied('listReactions', { scope, guid: message.receiver });
      const scopes = asList(values.get('listReactions.allowedScopes')) as MemberScope[];
      if (scopes.length > 0) page.reactorsIn = { guid: message.receiver, scopes };
    }
    const rows = await this.deps.reactions.list(ctx.appId, String(message.id), page);
    const users = new Map((await this.deps.users.getMany(ctx.appId, [...new Set(rows.map((row) => row.uid))])).map((user) => [user.uid, user]));
    const data = rows.map((row): Reaction => {
      const user = users.get(row.uid);
      return {
        id: String(row.id),
        messageId: String(row.message_id),
        reaction: row.reaction,
        uid: row.uid,
        reactedAt: toUnix(row.reacted_at),
        reactedBy: user ? { ...toUser(user, { withTags: false }) } : { uid: row.uid },
      };
    });
    const meta: ReactionListMeta = { current: { limit, count: data.length } };
    const last = data[data.length - 1];
    if (last) meta.next = { affix: 'append', id: last.id };
    return { data, meta };
  }
}

function reactor(ctx: RequestContext): string {
  if (ctx.onBehalfOf === undefined) throw badRequest({ onBehalfOf: 'is required: it names the user who reacts' });
  return ctx.onBehalfOf;
}

/** A reaction from the path (already URL-decoded): kept as sent, but not blank. */
function checkReaction(raw: string): string {
  if (raw.trim() === '') throw badRequest({ reaction: 'must not be blank' });
  if ([...raw].length > LIMITS.reactionLength) throw badRequest({ reaction: `must be at most ${LIMITS.reactionLength} characters` });
  return raw;
}
