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
import type { Message } from './views/messages.view.js';
import { permissionDenied, type RbacService } from './rbac.service.js';
import type { ActorContext } from './actor.js';
import type { UsersService } from './users.service.js';
import type { EventsRepository } from '../repositories/events.repository.js';
import type { ModerationHolds } from './moderation/holds.service.js';
import { withStatus, type Moderator } from './moderation/moderator.js';

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
      /** Moderation (docs/moderation.md): an edit is moderated as a send is. */
      moderator: Pick<Moderator, 'moderate' | 'moderates'>;
      holds: Pick<ModerationHolds, 'holdEdit'>;
      events: EventsRepository;
    },
  ) {}

  /**
   * update-message: the keys given in `data` replace the stored ones (the others stay), `tags`
   * replaces the tags; the result must pass the rules of a send, and is moderated as a send is
   * (docs/moderation.md). Answers the `edited` action message, stored in the same transaction.
   */
  async update(ctx: RequestContext, rawId: string, input: UpdateMessageInput): Promise<Message> {
    if (input.data === undefined && input.tags === undefined) throw badRequest({ data: 'or tags is required: they are what an edit changes' });
    // Read after the body's check, so that a bad body is answered as such whoever onBehalfOf names.
    const actor = (await this.deps.usersService.withActor(ctx)).actor;
    const { appId } = ctx;
    // An app that moderates has the edit moderated before the transaction: its set-up may have
    // to be read and its hook is an HTTP call, neither of which may wait holding the
    // conversation's lock (nor, on the embedded database, its one connection). The transaction
    // then goes on only if the message is as it was moderated.
    const moderates = await this.deps.moderator.moderates(ctx);
    for (let attempt = 1; ; attempt++) {
      const before = moderates ? await this.moderatedEdit(ctx, actor, rawId, input) : undefined;
      const answer = await withTransaction(
        this.deps.db,
        'update_message',
        async (tx) => {
          const row = await this.lockMessage(ctx, rawId, 'edited', tx);
          await this.requirePermission(ctx, actor, row, rawId, 'edit', tx);
          // Changed meanwhile by another edit: moderated again (each round, one of the racing edits goes through).
          if (before && !sameContent(row, before.seen)) return undefined;
          const moderated = before?.moderated;
          // A dropMessage rule refused the edit above; a message held for review stays held.
          const content = !moderated || moderated.outcome === 'unmoderated' ? edited(row, input) : row.held ? withStatus(before!.prepared, 'pending') : moderated.prepared;
          const mentionedUids = await this.deps.messagesService.activeMentions(appId, content.mentioned, tx);
          const edit = { dataJson: content.dataJson, tags: content.tags, mentionedUids, editedBy: actor?.uid ?? APP_SENDER };
          const changed = (await this.deps.messages.edit(appId, String(row.id), edit, tx))!;
          if (!row.held && moderated?.outcome === 'held') {
            await this.deps.holds.holdEdit(ctx, changed, moderated.heldBy, moderated.eventData, tx);
            changed.held = true;
          } else if (!row.held && moderated?.outcome === 'approved') {
            await this.deps.events.record(appId, [{ trigger: 'moderation_engine_approved', conversationId: row.conversation_id, messageId: String(row.id), data: {} }], tx);
          }
          return this.actionAbout(ctx, 'edited', actor, changed, tx);
        },
        ctx.log,
      );
      if (answer) return answer;
      // Changed by another edit meanwhile: its content is moderated again.
      if (attempt >= MAX_EDIT_ROUNDS) throw new AppError('ERR_MISSION_FAILED', { message: 'The message kept changing while it was being edited. Retry.' });
    }
  }

  /** The edit's content, from the message as it is now (checked as the transaction will check it), moderated. */
  private async moderatedEdit(ctx: RequestContext, actor: UserRow | undefined, rawId: string, input: UpdateMessageInput) {
    const seen = await this.editable(ctx, rawId, 'edited', this.deps.db);
    await this.requirePermission(ctx, actor, seen, rawId, 'edit', this.deps.db);
    const prepared = edited(seen, input);
    const moderated = await this.deps.moderator.moderate(ctx, prepared, {
      kind: 'edit',
      id: String(seen.id),
      sender: seen.sender,
      receiver: seen.receiver,
      receiverType: seen.receiver_type,
      conversationId: seen.conversation_id,
    });
    return { seen, prepared, moderated };
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
  private async lockMessage(ctx: RequestContext, rawId: string, action: 'edited' | 'deleted', tx: Executor, options: { allowDeleted?: boolean } = {}): Promise<MessageRow> {
    const found = await this.editable(ctx, rawId, action, tx, { allowDeleted: true, unlocked: true });
    // A held message's conversation may not exist yet: it is not created for it.
    if (found.held) await this.deps.conversations.lockIfExists(ctx.appId, found.conversation_id, tx);
    else await this.deps.conversations.lockOrCreate(ctx.appId, found.conversation_id, found.receiver_type, tx);
    return this.editable(ctx, rawId, action, tx, options);
  }

  /**
   * The message as the onBehalfOf user (or the app) sees it, row-locked unless `unlocked`:
   * a message held for moderation review is its sender's alone (repositories/message-visibility.ts).
   * Action messages, and deleted ones unless `allowDeleted`, cannot be changed.
   */
  private async editable(ctx: RequestContext, rawId: string, action: 'edited' | 'deleted', tx: Executor, options: { allowDeleted?: boolean; unlocked?: boolean } = {}): Promise<MessageRow> {
    const id = parseMessageId(rawId);
    const viewer = ctx.onBehalfOf ?? null;
    const row =
      id === undefined ? undefined : options.unlocked ? await this.deps.messages.getVisible(ctx.appId, id, viewer ?? undefined, tx) : await this.deps.messages.getForUpdate(ctx.appId, id, tx, viewer);
    if (!row) throw new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id: rawId } });
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
  private async requirePermission(ctx: RequestContext, actorRow: UserRow | undefined, row: MessageRow, rawId: string, action: 'edit' | 'delete', tx: Executor): Promise<void> {
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

/** Rounds of a moderated edit racing other edits of its message (each round, one of them goes through). */
const MAX_EDIT_ROUNDS = 10;

/** The content of `row` after the edit `input` (prepare's rules of a send). */
function edited(row: MessageRow, input: UpdateMessageInput) {
  const { entities: _entities, mentions: _mentions, ...stored } = (row.data ?? {}) as Record<string, unknown>;
  return prepare({ category: row.category, type: row.type, data: extended(stored, input.data ?? {}) as MessageDataInput, tags: input.tags ?? row.tags });
}

/** Whether the message's content and hold are as they were when it was moderated. */
function sameContent(a: MessageRow, b: MessageRow): boolean {
  return a.held === b.held && JSON.stringify(a.data) === JSON.stringify(b.data) && JSON.stringify(a.tags) === JSON.stringify(b.tags);
}
