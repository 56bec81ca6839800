import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { withTransaction, type Executor } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { AppError, badRequest } from '../domain/errors.js';
import { parseMessageId } from '../domain/messages.js';
import { normalizeId } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import { asList } from '../domain/permissions.js';
import type { ConversationsRepository } from '../repositories/message-store/conversations.repository.js';
import type { GroupMembersRepository } from '../repositories/group-members.repository.js';
import type { GroupsRepository } from '../repositories/groups.repository.js';
import type { MessageRow, MessagesRepository } from '../repositories/messages.repository.js';
import type { UserRow } from '../repositories/users.repository.js';
import { APP_SENDER, type ActionMessages } from './action-messages.js';
import { groupActor, SCOPE_RANK, type GroupActor } from './group-access.js';
import type { MessagesService, MultiSendResult } from './messages.service.js';
import type { MessageHistoryService } from './message-history.service.js';
import { prepare, type MessageDataInput, type SendMessageInput } from './message-content.js';
import { type Message } from './views/messages.view.js';
import { permissionDenied, type RbacService } from './rbac.service.js';
import type { ActorContext } from './actor.js';
import type { UsersService } from './users.service.js';

export interface UpdateMessageInput {
  data?: MessageDataInput;
  tags?: string[];
}

/** Edits and deletes of messages (each answered with its action message), and bot messages. */
export class MessageEditsService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      messages: MessagesRepository;
      conversations: ConversationsRepository;
      groups: GroupsRepository;
      members: GroupMembersRepository;
      usersService: Pick<UsersService, 'withActor'>;
      messagesService: MessagesService;
      history: MessageHistoryService;
      actions: ActionMessages;
      rbac: RbacService;
    },
  ) {}

  /**
   * update-message: the keys given in `data` replace the stored ones (the others stay), `tags`
   * replaces the tags; the result must pass the rules of a send. Answers the `edited` action
   * message, stored in the same transaction.
   */
  async update(ctx: RequestContext, rawId: string, input: UpdateMessageInput): Promise<Message> {
    if (input.data === undefined && input.tags === undefined) throw badRequest({ data: 'or tags is required: they are what an edit changes' });
    // Read after the body's check, so that a bad body is answered as such whoever onBehalfOf names.
    const actor = (await this.deps.usersService.withActor(ctx)).actor;
    const { appId } = ctx;
    return withTransaction(
      this.deps.db,
      'update_message',
      async (tx) => {
        const row = await this.lockMessage(ctx, rawId, 'edited', tx);
        await this.requirePermission(ctx, actor, row, rawId, 'edit', tx);
        const { entities: _entities, mentions: _mentions, ...stored } = (row.data ?? {}) as Record<string, unknown>;
        const prepared = prepare({ category: row.category, type: row.type, data: extended(stored, input.data ?? {}) as MessageDataInput, tags: input.tags ?? row.tags });
        const mentionedUids = await this.deps.messagesService.activeMentions(appId, prepared.mentioned, tx);
        const edit = { dataJson: prepared.dataJson, tags: prepared.tags, mentionedUids, editedBy: actor?.uid ?? APP_SENDER };
        const edited = (await this.deps.messages.edit(appId, String(row.id), edit, tx))!;
        return this.actionAbout(ctx, 'edited', actor, edited, tx);
      },
      ctx.log,
    );
  }

  /**
   * delete-message: marks the message deleted, or with `permanent` removes it (with the
   * action messages that carry its content). Either way answers the `deleted` action message,
   * stored in the same transaction; after a permanent delete its `on` keeps no content.
   */
  async delete(ctx: ActorContext, rawId: string, permanent: boolean): Promise<Message> {
    const actor = ctx.actor;
    const { appId } = ctx;
    return withTransaction(
      this.deps.db,
      'delete_message',
      async (tx) => {
        // A soft-deleted message may still be deleted permanently.
        const row = await this.lockMessage(ctx, rawId, 'deleted', tx, { allowDeleted: permanent });
        await this.requirePermission(ctx, actor, row, rawId, 'delete', tx);
        const id = String(row.id);
        const deleted = row.deleted_at === null ? (await this.deps.messages.markDeleted(appId, id, actor?.uid ?? APP_SENDER, tx))! : row;
        if (!permanent) return this.actionAbout(ctx, 'deleted', actor, deleted, tx);
        const removed = await this.deps.messages.deletePermanently(appId, row.conversation_id, id, tx);
        await this.deps.conversations.moveLastMessageBack(appId, row.conversation_id, removed, tx);
        if (row.parent_id !== null) await this.deps.messages.removeReply(appId, String(row.parent_id), tx);
        return this.actionAbout(ctx, 'deleted', actor, extended(deleted, { data: {}, tags: [], mentioned_uids: [] }), tx);
      },
      ctx.log,
    );
  }

  /** send-bot-message: a send whose sender is the uid in the path (any active user). */
  async sendAsBot(ctx: RequestContext, rawUid: string, input: SendMessageInput): Promise<Message | MultiSendResult> {
    return this.deps.messagesService.send(extended(ctx, { onBehalfOf: normalizeId(rawUid) }), input);
  }

  private async actionAbout(ctx: RequestContext, action: 'edited' | 'deleted', actor: UserRow | undefined, row: MessageRow, tx: Executor): Promise<Message> {
    const [message] = await this.deps.history.render(ctx, [row], { withTags: true }, tx);
    return this.deps.actions.onMessage(ctx.appId, action, actor, row, message!, tx);
  }

  /**
   * The message, locked for the rest of the transaction. Its conversation is locked first, as
   * sends lock it, so edits, deletes and sends of one conversation take turns in one order.
   */
  private async lockMessage(
    ctx: RequestContext,
    rawId: string,
    action: 'edited' | 'deleted',
    tx: Executor,
    options: { allowDeleted?: boolean } = {},
  ): Promise<MessageRow> {
    const notFound = () => new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id: rawId } });
    const id = parseMessageId(rawId);
    const found = id === undefined ? undefined : await this.deps.messages.get(ctx.appId, id, tx);
    if (!found) throw notFound();
    await this.deps.conversations.lockOrCreate(ctx.appId, found.conversation_id, found.receiver_type, tx);
    const row = await this.deps.messages.getForUpdate(ctx.appId, id!, tx);
    if (!row) throw notFound();
    const refuse = (reason: string) => new AppError('ERR_MESSAGE_ACTION_NOT_ALLOWED', { params: { id: rawId, action, reason } });
    if (row.category === 'action') throw refuse('action messages record what happened and stay as they are');
    if (row.deleted_at !== null && !options.allowDeleted) throw refuse('it is deleted');
    return row;
  }

  /**
   * The app may edit and delete any message. A user must see the message (else it is not
   * found, as for get-message-details) and be its sender; a group's moderators, admins and
   * owner may also delete its messages. The user's role may deny the action (`editMessage`,
   * `deleteMessage`), and deleting others' messages to some scopes (`deleteMessage.denyForScopes`);
   * in a group, their scope may deny editing (`editMessage`). The role is checked first, then
   * the scope, as the vendor's RBAC docs say.
   */
  private async requirePermission(
    ctx: RequestContext,
    actorRow: UserRow | undefined,
    row: MessageRow,
    rawId: string,
    action: 'edit' | 'delete',
    tx: Executor,
  ): Promise<void> {
    const uid = ctx.onBehalfOf;
    if (uid === undefined || !actorRow) return;
    const own = row.sender === uid;
    let actor: GroupActor | undefined;
    if (row.receiver_type === 'user') {
      if (!own && row.receiver !== uid) throw new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id: rawId } });
    } else {
      const group = await this.deps.groups.get(ctx.appId, row.receiver, tx);
      actor = group ? await groupActor(this.deps.members, ctx.appId, group, uid, tx) : undefined;
      if (!own && !actor?.membership) throw new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id: rawId } });
    }
    const permission = action === 'edit' ? 'editMessage' : 'deleteMessage';
    const denyForScopes = `${permission}.denyForScopes`;
    const role = await this.deps.rbac.roleValues(ctx, actorRow.role, [permission, denyForScopes], tx);
    if (role.get(permission) === 'deny') throw permissionDenied(permission, { role: actorRow.role });
    const scope = actor?.membership?.scope;
    if (action === 'edit' && scope) await this.deps.rbac.requireScopeAllows(ctx, row.receiver, scope, 'editMessage', tx);
    if (own) return;
    if (action === 'delete' && actor && actor.rank >= SCOPE_RANK.moderator) {
      if (scope && asList(role.get(denyForScopes)).includes(scope)) throw permissionDenied(denyForScopes, { role: actorRow.role });
      return;
    }
    throw new AppError('ERR_MESSAGE_NOT_A_SENDER', { params: { uid, id: rawId, action } });
  }
}
