import type { Kysely } from 'kysely';
import type { DB, ReceiverType } from '../db/schema.js';
import { withTransaction, type Executor } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { AppError, badRequest } from '../domain/errors.js';
import { conversationKeysOf, conversationTypeOf, groupConversationKey, userConversationKey, wireConversationId } from '../domain/conversation-id.js';
import { parseMessageId } from '../domain/messages.js';
import { normalizeId, normalizeTags } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import { pageMeta, type PageMeta, type PageRequest } from '../domain/pagination.js';
import { toUnix } from '../domain/time.js';
import type { BlockedUsersRepository } from '../repositories/blocked-users.repository.js';
import type { ConversationFilter, ConversationStatesRepository, ConversationViewRow } from '../repositories/conversation-states.repository.js';
import type { GroupsRepository } from '../repositories/groups.repository.js';
import type { MessageRow, MessagesRepository } from '../repositories/messages.repository.js';
import type { UserRow, UsersRepository } from '../repositories/users.repository.js';
import { guidNotFound } from './group-access.js';
import { toGroup } from './views/groups.view.js';
import type { MessageHistoryService } from './message-history.service.js';
import type { Message } from './views/messages.view.js';
import type { UsersService } from './users.service.js';
import { toUser, withBlockFields } from './views/users.view.js';
import { againAsActor, type ActorContext } from './actor.js';
import type { EventsRepository } from '../repositories/events.repository.js';
import { receiptEvent } from './views/events.view.js';

export interface Conversation {
  conversationId: string;
  conversationType: ReceiverType;
  /** A string, as the vendor sends it. */
  unreadMessageCount: string;
  lastMessage?: Message;
  conversationWith: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  tags?: string[];
}

export interface ListConversationsInput extends PageRequest {
  conversationType?: ReceiverType;
  unread?: boolean;
  withTags?: boolean;
  tags?: string[];
  withUserAndGroupTags?: boolean;
  userTags?: string[];
  groupTags?: string[];
  searchKey?: string;
}

export type ReceiptKind = 'delivered' | 'read' | 'unread';

/** Where a conversation endpoint points: a user (the other side of a 1:1) or a group. */
type Target = { type: ReceiverType; id: string };
type Located = { viewer: string; actor: UserRow; conversationId: string; type: ReceiverType };

export class ConversationsService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      states: ConversationStatesRepository;
      messages: MessagesRepository;
      users: UsersRepository;
      groups: GroupsRepository;
      blocked: BlockedUsersRepository;
      /** The actor: read with a list's page, after a reset's check, and again when a change runs again. */
      usersService: Pick<UsersService, 'withActor' | 'readActor'>;
      history: MessageHistoryService;
      events: EventsRepository;
    },
  ) {}

  /** list-all-conversations: the onBehalfOf user's conversations, newest activity first. */
  async list(ctx: RequestContext, input: ListConversationsInput): Promise<{ data: Conversation[]; meta: PageMeta }> {
    const viewer = viewerOf(ctx);
    const filter: ConversationFilter = {
      conversationType: input.conversationType,
      unread: input.unread,
      tags: input.tags?.length ? input.tags : undefined,
      userTags: input.userTags?.length ? input.userTags : undefined,
      groupTags: input.groupTags?.length ? input.groupTags : undefined,
      searchKey: input.searchKey || undefined,
    };
    const page = { page: input.page, perPage: input.perPage };
    // The viewer (the actor) is checked while the page is read: a user who does not exist has no conversations.
    const [{ actor }, { rows, total }] = await Promise.all([this.deps.usersService.withActor(ctx), this.deps.states.list(ctx.appId, viewer, filter, page)]);
    const data = await this.render(ctx, viewer, rows, {
      withTags: input.withTags ?? false,
      withEntityTags: input.withUserAndGroupTags ?? false,
      viewerRow: actor,
    });
    return { data, meta: pageMeta(page, total, data.length) };
  }

  /** get-user-conversations / get-group-conversations. */
  async get(ctx: ActorContext, target: Target): Promise<Conversation> {
    const located = await this.locate(ctx, target);
    const row = await this.visible(ctx, located, target, { content: true });
    return (await this.render(ctx, located.viewer, [row], { withTags: true, withEntityTags: false }))[0]!;
  }

  /** get-conversation (deprecated): by conversation id. */
  async getById(ctx: ActorContext, rawConversationId: string): Promise<Conversation> {
    const located = await this.locateById(ctx, rawConversationId);
    const row = await this.visible(ctx, located, undefined, { content: true });
    return (await this.render(ctx, located.viewer, [row], { withTags: true, withEntityTags: false }))[0]!;
  }

  /** update-user-conversation / update-group-conversation: the viewer's tags of the conversation. */
  async update(ctx: ActorContext, target: Target, input: { tags: string[] }): Promise<Conversation> {
    // Located again when the conversation, its group or a user was deleted meanwhile: not found.
    await this.again(ctx, async (ctx) => {
      const located = await this.locate(ctx, target);
      const tags = normalizeTags(input.tags);
      await withTransaction(
        this.deps.db,
        'update_conversation',
        async (tx) => {
          await this.visible(ctx, located, target, { content: false }, tx);
          await this.deps.states.setTags(ctx.appId, located.viewer, located.conversationId, tags, tx);
        },
        ctx.log,
      );
    });
    return this.get(ctx, target);
  }

  /**
   * reset-user-conversation / reset-group-conversation: the viewer's history is cleared (hidden
   * from them up to the last message), and the conversation with it until a new message.
   * `deleteMessagesPermanently` (1:1 only) deletes the conversation and its messages for both.
   */
  async reset(ctx: RequestContext, target: Target, input: { conversationWith?: string; deleteMessagesPermanently?: boolean } = {}): Promise<{ success: true; message: string }> {
    if (input.conversationWith !== undefined && normalizeId(input.conversationWith) !== normalizeId(target.id)) {
      throw badRequest({ conversationWith: 'must name the user in the path' });
    }
    const scope = input.deleteMessagesPermanently ? 'permanently' : 'viewer';
    // The actor is read after the body's check, so that a bad body is answered as such whoever
    // onBehalfOf names. Located again when the conversation, its group or a user was deleted meanwhile.
    const actorCtx = await this.deps.usersService.withActor(ctx);
    return this.again(actorCtx, async (ctx) => this.clear(ctx, await this.locate(ctx, target), target, scope));
  }

  /**
   * delete-conversation (deprecated), by conversation id: as its example says, the history is
   * cleared for all the users (every participant, until a new message); reset clears it for the
   * viewer only.
   */
  async deleteById(ctx: ActorContext, rawConversationId: string): Promise<{ success: true; message: string }> {
    return this.again(ctx, async (ctx) => this.clear(ctx, await this.locateById(ctx, rawConversationId), undefined, 'everyone'));
  }

  /** Clears the conversation for the viewer, for every participant, or deletes it with its messages. */
  private async clear(ctx: RequestContext, located: Located, target: Target | undefined, scope: 'viewer' | 'everyone' | 'permanently'): Promise<{ success: true; message: string }> {
    const { viewer, conversationId } = located;
    await withTransaction(
      this.deps.db,
      scope === 'permanently' ? 'delete_conversation' : 'reset_conversation',
      async (tx) => {
        const row = await this.visible(ctx, located, target, { content: false }, tx);
        if (scope === 'permanently') await this.deps.states.deleteWithMessages(ctx.appId, conversationId, located.type, tx);
        else if (scope === 'everyone') await this.deps.states.clearForEveryone(ctx.appId, conversationId, row.last_message_id!, tx);
        else await this.deps.states.clear(ctx.appId, viewer, conversationId, row.last_message_id!, tx);
      },
      ctx.log,
    );
    const shown = wireConversationId(conversationId);
    const message = {
      permanently: `The conversation ${shown} and its messages have been deleted permanently for all its users.`,
      everyone: `The conversation ${shown} has been deleted successfully for all the users.`,
      viewer: `The conversation ${shown} has been deleted successfully for UID ${viewer}.`,
    }[scope];
    return { success: true, message };
  }

  /**
   * mark-*-as-delivered / -read / -unread: moves the viewer's watermark to `messageId` (a
   * message of the conversation), or to the last message; without it, unread marks everything.
   */
  async mark(ctx: ActorContext, target: Target, kind: ReceiptKind, rawMessageId?: string | number): Promise<{ success: true; message: string }> {
    // Run again when the conversation, its group or a user was deleted meanwhile: then not found.
    return this.again(ctx, (ctx) => this.markOnce(ctx, target, kind, rawMessageId));
  }

  /** againIfDeletedMeanwhile, reading the actor again for each run after the first (againAsActor). */
  private again<T>(ctx: ActorContext, work: (ctx: ActorContext) => Promise<T>): Promise<T> {
    return againAsActor(ctx, (stale) => this.deps.usersService.readActor(stale), work);
  }

  private async markOnce(ctx: ActorContext, target: Target, kind: ReceiptKind, rawMessageId?: string | number): Promise<{ success: true; message: string }> {
    const located = await this.locate(ctx, target);
    const { viewer, conversationId } = located;
    const messageId = rawMessageId === undefined ? undefined : parseMessageId(String(rawMessageId));
    if (rawMessageId !== undefined && messageId === undefined) throw messageNotFound(String(rawMessageId));
    await withTransaction(
      this.deps.db,
      `mark_conversation_${kind}`,
      async (tx) => {
        const row = await this.visible(ctx, located, target, { content: false }, tx);
        const named = messageId === undefined ? undefined : await this.requireMessageOf(ctx, messageId, conversationId, located.type, tx);
        if (kind === 'unread') {
          await this.deps.states.mark(ctx.appId, viewer, conversationId, { kind, messageId: messageId ?? null }, tx);
          return;
        }
        const upTo = named ?? (await this.deps.messages.get(ctx.appId, row.last_message_id!, tx));
        await this.deps.states.mark(ctx.appId, viewer, conversationId, { kind, messageId: messageId ?? row.last_message_id! }, tx);
        // The receipt is for the other side: the other user of a 1:1, the group.
        if (upTo) await this.deps.events.record(ctx.appId, [receiptEvent(kind, located.actor, normalizeId(target.id), upTo, new Date())], tx);
      },
      ctx.log,
    );
    const what = target.type === 'user' ? `the messages from the user ${target.id}` : `the messages in the group ${target.id}`;
    const message =
      kind === 'unread'
        ? messageId !== undefined
          ? `The messages after the message id ${messageId} of ${wireConversationId(conversationId)} are marked as unread for the user ${viewer}.`
          : `All the messages of ${wireConversationId(conversationId)} are marked as unread for the user ${viewer}.`
        : `All ${what}${messageId !== undefined ? ` up to the message id ${messageId}` : ''} are marked as ${kind} for the user ${viewer}.`;
    return { success: true, message };
  }

  private async requireMessageOf(ctx: RequestContext, id: string, conversationId: string, type: ReceiverType, tx: Executor): Promise<MessageRow> {
    const message = await this.deps.messages.getVisible(ctx.appId, id, ctx.onBehalfOf, tx);
    if (!message || message.conversation_id !== conversationId || message.receiver_type !== type) throw messageNotFound(id);
    return message;
  }

  /** The onBehalfOf user, required; checked as the actor. */
  private viewer(ctx: ActorContext): { viewer: string; actor: UserRow } {
    const viewer = viewerOf(ctx);
    return { viewer, actor: ctx.actor! };
  }

  private async locate(ctx: ActorContext, target: Target): Promise<Located> {
    const { viewer, actor } = this.viewer(ctx);
    const id = normalizeId(target.id);
    if (target.type === 'group') {
      if (!(await this.deps.groups.get(ctx.appId, id))) throw guidNotFound(id);
      return { viewer, actor, conversationId: groupConversationKey(id), type: 'group' };
    }
    return { viewer, actor, conversationId: userConversationKey(viewer, id), type: 'user' };
  }

  /**
   * A conversation named by the vendor's id (a path): the first of the conversations it can
   * name that the viewer sees, the group's before a 1:1 (docs/conversations.md).
   */
  private async locateById(ctx: ActorContext, rawConversationId: string): Promise<Located> {
    const { viewer, actor } = this.viewer(ctx);
    for (const key of conversationKeysOf(rawConversationId, { viewer })) {
      const row = await this.deps.states.get(ctx.appId, viewer, key, conversationTypeOf(key), { content: false });
      if (row) return { viewer, actor, conversationId: row.conversation_id, type: row.conversation_type };
    }
    throw notAccessible(viewer, rawConversationId);
  }

  /**
   * The conversation as the viewer sees it, else ERR_CONVERSATION_NOT_ACCESSIBLE: not part of
   * it, no message yet, or cleared by them. A user that never existed is ERR_UID_NOT_FOUND.
   */
  private async visible(ctx: RequestContext, located: Located, target: Target | undefined, options: { content: boolean }, tx?: Executor): Promise<ConversationViewRow> {
    const row = await this.deps.states.get(ctx.appId, located.viewer, located.conversationId, located.type, options, tx);
    if (row) return row;
    if (target?.type === 'user') {
      const uid = normalizeId(target.id);
      if (!(await this.deps.users.get(ctx.appId, uid, tx))) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid } });
    }
    throw notAccessible(located.viewer, wireConversationId(located.conversationId));
  }

  /** Conversations with their last message and the other side, from one read of each. */
  private async render(ctx: RequestContext, viewer: string, rows: ConversationViewRow[], options: { withTags: boolean; withEntityTags: boolean; viewerRow?: UserRow }): Promise<Conversation[]> {
    if (rows.length === 0) return [];
    const uids = rows.filter((row) => row.conversation_type === 'user').map((row) => row.with_id);
    // The rows carry their last message and the other side (ConversationViewRow), so what is
    // left is read at once: blocks, and the last messages' reactions, receipts and people.
    const users = rows.flatMap((row) => (row.with_user ? [row.with_user] : []));
    if (options.viewerRow) users.push(options.viewerRow);
    const groups = rows.flatMap((row) => (row.with_group ? [row.with_group] : []));
    // A deleted last message is not shown (docs/compatibility.md, "The conversation object").
    const shown = rows.flatMap((row) => (row.last_message && row.last_message.deleted_at === null ? [row.last_message] : []));
    const messageCtx = extended(ctx, { onBehalfOf: viewer });
    const [relations, rendered] = await Promise.all([this.deps.blocked.relations(ctx.appId, viewer, uids), this.deps.history.render(messageCtx, shown, { withTags: false, known: { users, groups } })]);
    const messageById = new Map(rendered.map((message) => [message.id, message]));
    return rows.map((row) => {
      const conversationId = wireConversationId(row.conversation_id);
      let conversationWith: Record<string, unknown>;
      if (row.conversation_type === 'user') {
        const user = row.with_user;
        conversationWith = user ? extended(withBlockFields(toUser(user, { withTags: options.withEntityTags }), relations.get(row.with_id)), { conversationId }) : { uid: row.with_id, conversationId };
      } else {
        const group = row.with_group;
        conversationWith = group ? { ...toGroup(group, { scope: row.scope, joinedAt: row.joined_at }, { withTags: options.withEntityTags }) } : { guid: row.with_id, conversationId };
      }
      const conversation: Conversation = {
        conversationId,
        conversationType: row.conversation_type,
        unreadMessageCount: String(row.unread),
        conversationWith,
        createdAt: toUnix(row.created_at),
        updatedAt: toUnix(row.updated_at),
      };
      const last = row.last_message_id === null ? undefined : messageById.get(String(row.last_message_id));
      if (last) conversation.lastMessage = last;
      if (options.withTags && row.tags?.length) conversation.tags = row.tags;
      return conversation;
    });
  }
}

/** The onBehalfOf user, required: conversations are always someone's. */
function viewerOf(ctx: RequestContext): string {
  if (ctx.onBehalfOf === undefined) throw badRequest({ onBehalfOf: 'is required: it names the user whose conversations these are' });
  return ctx.onBehalfOf;
}

function notAccessible(uid: string, conversationId: string): AppError {
  return new AppError('ERR_CONVERSATION_NOT_ACCESSIBLE', { params: { uid, conversationId } });
}

function messageNotFound(id: string): AppError {
  return new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id } });
}
