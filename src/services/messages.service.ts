import type { Kysely } from 'kysely';
import type { DB, ReceiverType } from '../db/schema.js';
import { withTransaction, type Executor } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { userConversationId } from '../domain/conversation-id.js';
import { AppError, badRequest, uidFailure } from '../domain/errors.js';
import { cursorId, groupConversationId, MEDIA_TYPES, MESSAGE_TYPES, mentionedUids, parseMessageId, SENDABLE_CATEGORIES } from '../domain/messages.js';
import { LIMITS, normalizeId, normalizeIds, normalizeTags } from '../domain/normalize.js';
import { toUnix, toUnixOrUndefined } from '../domain/time.js';
import type { BlockedUsersRepository } from '../repositories/blocked-users.repository.js';
import type { ConversationStatesRepository } from '../repositories/conversation-states.repository.js';
import type { ConversationsRepository } from '../repositories/conversations.repository.js';
import type { GroupMembersRepository } from '../repositories/group-members.repository.js';
import type { GroupRow, GroupsRepository } from '../repositories/groups.repository.js';
import type { MessageCursor, MessageFilter, MessageRow, MessagesRepository, NewMessage } from '../repositories/messages.repository.js';
import type { ReactionCount, ReactionsRepository } from '../repositories/reactions.repository.js';
import type { UserRow, UsersRepository } from '../repositories/users.repository.js';
import { guidNotFound } from './group-members.service.js';
import { loadReceipts, withReceipt } from './receipts.js';
import { toGroup } from './groups.service.js';
import { toUser, type UsersService } from './users.service.js';

export interface MessageDataInput {
  text?: string;
  attachments?: Array<Record<string, unknown>>;
  customData?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface SendMessageInput {
  receiver?: string;
  receiverType?: string;
  category?: string;
  type?: string;
  data?: MessageDataInput;
  muid?: string;
  tags?: string[];
  multipleReceivers?: { uids?: string[]; guids?: string[] };
}

export type Entity = { entity: Record<string, unknown>; entityType: 'user' | 'group' | 'message' };
/** An action message's entities (NOTES §8): who acted, on what, and for whom. */
export type ActionEntities = { by: Entity; on: Entity; for?: Entity };

export interface Message {
  id: string;
  muid?: string;
  conversationId: string;
  sender: string;
  receiverType: ReceiverType;
  receiver: string;
  category: string;
  type: string;
  data: Record<string, unknown> & { entities: { sender: Entity; receiver: Entity } | ActionEntities; mentions?: Record<string, unknown> };
  sentAt: number;
  updatedAt: number;
  tags?: string[];
  parentId?: string;
  replyCount?: number;
  editedAt?: number;
  editedBy?: string;
  deletedAt?: number;
  deletedBy?: string;
  /** Receipts (see receipts.ts). */
  deliveredAt?: number;
  readAt?: number;
}

export type SendResult = { success: true; data: Message } | { success: false; error: { code: string; message: string } };
/** multipleReceivers: the result per receiver, under its kind. */
export interface MultiSendResult {
  uids: Record<string, SendResult>;
  guids: Record<string, SendResult>;
}

export interface ListMessagesInput {
  limit?: number;
  perPage?: number;
  affix?: 'append' | 'prepend';
  id?: string;
  sentAt?: number;
  fromTimestamp?: number;
  toTimestamp?: number;
  conversationId?: string;
  receiverType?: ReceiverType;
  category?: string;
  categories?: string[];
  type?: string;
  types?: string[];
  sender?: string;
  tags?: string[];
  withTags?: boolean;
  hideReplies?: boolean;
  hideDeleted?: boolean;
  onlyDeleted?: boolean;
  searchKey?: string;
  hasAttachments?: boolean;
  attachmentTypes?: string[];
  hasMentions?: boolean;
  mentionedUids?: string[];
  myMentionsOnly?: boolean;
  hasLinks?: boolean;
  hideMessagesFromBlockedUsers?: boolean;
  mentionsWithTagInfo?: boolean;
  hasReactions?: boolean;
  unread?: boolean;
  undelivered?: boolean;
}

type CursorMeta = { affix: 'append' | 'prepend'; id: string; sentAt: number };
export interface MessageListMeta {
  current: { limit: number; count: number };
  previous?: CursorMeta;
  next?: CursorMeta;
}

/** A validated message, ready to be stored for any receiver. */
export interface Prepared {
  category: string;
  type: string;
  dataJson: string;
  tags: string[];
  mentioned: string[];
  muid: string | null;
}

/** Where a message goes; a thread reply also names its parent. */
export type Target = { receiverType: ReceiverType; receiver: string; parentId?: string };

/** Thrown inside a send's transaction to roll it back when the muid exists already. */
class DuplicateMuid extends Error {}

export class MessagesService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      messages: MessagesRepository;
      conversations: ConversationsRepository;
      users: UsersRepository;
      groups: GroupsRepository;
      members: GroupMembersRepository;
      blocked: BlockedUsersRepository;
      reactions: ReactionsRepository;
      states: ConversationStatesRepository;
      usersService: UsersService;
    },
  ) {}

  /**
   * send-message, as the onBehalfOf user. Each message commits in one transaction with its
   * conversation; a muid the sender used before answers the first message instead.
   * send-thread-message passes `thread`, which checks the parent once the sender is known and
   * gives the reply's target.
   */
  async send(ctx: RequestContext, input: SendMessageInput, thread?: () => Promise<Target>): Promise<Message | MultiSendResult> {
    const sender = ctx.onBehalfOf;
    if (sender === undefined) throw badRequest({ onBehalfOf: 'is required: it names the sender' });
    if (JSON.stringify(input).length > LIMITS.messageJsonChars) {
      throw badRequest({ body: `must be at most ${LIMITS.messageJsonChars} characters as JSON` });
    }
    const prepared = prepare(input);
    const targets = thread ? [] : this.targets(input);
    if (input.multipleReceivers && prepared.muid !== null) {
      throw badRequest({ muid: 'cannot be combined with multipleReceivers: one muid names one message' });
    }
    await this.deps.usersService.requireActor(ctx);
    if (!input.multipleReceivers) {
      const target = thread ? await thread() : targets[0]!;
      if (prepared.muid !== null) {
        const first = await this.deps.messages.getByMuid(ctx.appId, sender, prepared.muid);
        if (first) return (await this.render(ctx, [first], { withTags: true }))[0]!;
      }
      const row = await this.sendOne(ctx, sender, target, prepared);
      return (await this.render(ctx, [row], { withTags: true }))[0]!;
    }
    const result: MultiSendResult = { uids: {}, guids: {} };
    for (const target of targets) {
      const bucket = target.receiverType === 'user' ? result.uids : result.guids;
      try {
        const row = await this.sendOne(ctx, sender, target, prepared);
        bucket[target.receiver] = { success: true, data: (await this.render(ctx, [row], { withTags: true }))[0]! };
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        bucket[target.receiver] = uidFailure(error);
      }
    }
    return result;
  }

  /** The receivers of a send: `receiver`, plus those of multipleReceivers. */
  private targets(input: SendMessageInput): Target[] {
    const targets: Target[] = [];
    if (input.receiver !== undefined && input.receiver.trim() !== '') {
      if (input.receiverType !== 'user' && input.receiverType !== 'group') {
        throw new AppError('ERR_INVALID_RECEIVER_TYPE', { params: { receiverType: input.receiverType ?? '' } });
      }
      targets.push({ receiverType: input.receiverType, receiver: normalizeId(input.receiver.trim()) });
    }
    const multiple = input.multipleReceivers;
    if (multiple) {
      for (const uid of normalizeIds(multiple.uids ?? [])) targets.push({ receiverType: 'user', receiver: uid });
      for (const guid of normalizeIds(multiple.guids ?? [])) targets.push({ receiverType: 'group', receiver: guid });
    }
    if (targets.length === 0) throw new AppError('ERR_EMPTY_RECEIVER');
    if (targets.length > LIMITS.messageReceiversPerCall) {
      throw badRequest({ multipleReceivers: `at most ${LIMITS.messageReceiversPerCall} receivers per call` });
    }
    return targets;
  }

  private async sendOne(ctx: RequestContext, sender: string, target: Target, prepared: Prepared): Promise<MessageRow> {
    const { appId } = ctx;
    try {
      return await withTransaction(
        this.deps.db,
        'send_message',
        async (tx) => {
          const conversationId = await this.checkReceiver(ctx, sender, target, tx);
          const mentioned = await this.activeMentions(appId, prepared.mentioned, tx);
          const row = await this.storeInConversation(
            appId,
            {
              ...prepared,
              conversationId,
              sender,
              receiver: target.receiver,
              receiverType: target.receiverType,
              mentionedUids: mentioned,
              parentId: target.parentId,
            },
            tx,
          );
          if (!row) throw new DuplicateMuid();
          return row;
        },
        ctx.log,
      );
    } catch (error) {
      // A concurrent send with the same muid committed first: answer its message.
      if (error instanceof DuplicateMuid) return (await this.deps.messages.getByMuid(appId, sender, prepared.muid!))!;
      throw error;
    }
  }

  /**
   * Stores a message in its conversation, inside the caller's transaction: the conversation is
   * locked (created by its first message, with each side of a 1:1), the message inserted, and
   * the conversation's last message moved on (and a reply counted on its parent). Every message
   * enters a conversation here, so what a conversation keeps about its messages is kept in one
   * place. Undefined when the sender already has a message with this muid.
   */
  async storeInConversation(appId: string, message: NewMessage, tx: Executor): Promise<MessageRow | undefined> {
    const { created } = await this.deps.conversations.lockOrCreate(appId, message.conversationId, message.receiverType, tx);
    if (created && message.receiverType === 'user') {
      await this.deps.conversations.addParticipants(appId, message.conversationId, message.sender, message.receiver, tx);
    }
    const row = await this.deps.messages.create(appId, message, tx);
    if (row) await this.deps.conversations.setLastMessage(appId, message.conversationId, row.id, row.sent_at, tx);
    // A reply counts on its parent; a parent deleted meanwhile takes the reply back.
    if (row && message.parentId !== undefined && !(await this.deps.messages.addReply(appId, message.parentId, tx))) {
      throw new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id: message.parentId } });
    }
    return row;
  }

  /** The mentioned users who are active: only they are kept as mentions. */
  async activeMentions(appId: string, uids: string[], tx: Executor): Promise<string[]> {
    if (uids.length === 0) return [];
    return (await this.deps.users.getMany(appId, uids, tx)).filter((user) => user.deactivated_at === null).map((user) => user.uid);
  }

  /** The receiver's rules; returns the conversation id. */
  private async checkReceiver(ctx: RequestContext, sender: string, target: Target, tx: Executor): Promise<string> {
    const { appId } = ctx;
    if (target.receiverType === 'user') {
      const uid = target.receiver;
      if (!(await this.deps.users.getActive(appId, uid, tx))) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid } });
      const relation = (await this.deps.blocked.relations(appId, sender, [uid], tx)).get(uid);
      if (relation?.blockedByMeAt) throw new AppError('ERR_BLOCKED_RECEIVER', { params: { uid: sender, receiver: uid } });
      if (relation?.hasBlockedMeAt) throw new AppError('ERR_BLOCKED_SENDER', { params: { uid: sender, receiver: uid } });
      return userConversationId(sender, uid);
    }
    const guid = target.receiver;
    if (!(await this.deps.groups.get(appId, guid, tx))) throw guidNotFound(guid);
    await this.requireMember(appId, guid, sender, tx);
    return groupConversationId(guid);
  }

  private async requireMember(appId: string, guid: string, uid: string, tx?: Executor): Promise<void> {
    if (await this.deps.members.get(appId, guid, uid, tx)) return;
    if ((await this.deps.members.bannedAmong(appId, guid, [uid], tx)).has(uid)) {
      throw new AppError('ERR_BANNED_GROUPMEMBER', { params: { uid, guid } });
    }
    throw new AppError('ERR_GROUP_NOT_JOINED', { params: { uid, guid } });
  }

  /**
   * get-message-details. With onBehalfOf, a message of a conversation that user is not part
   * of is not found, as an unknown id is.
   */
  async get(ctx: RequestContext, rawId: string): Promise<Message> {
    await this.deps.usersService.requireActor(ctx);
    const row = await this.requireVisible(ctx, rawId);
    return (await this.render(ctx, [row], { withTags: true }))[0]!;
  }

  /** The message with this path id, if the onBehalfOf user (when given) can see it; else ERR_MESSAGE_ID_NOT_FOUND. */
  async requireVisible(ctx: RequestContext, rawId: string): Promise<MessageRow> {
    const id = parseMessageId(rawId);
    const row = id === undefined ? undefined : await this.deps.messages.get(ctx.appId, id);
    if (!row || (ctx.onBehalfOf !== undefined && !(await this.canSee(ctx.appId, ctx.onBehalfOf, row)))) {
      throw new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id: rawId } });
    }
    return row;
  }

  async canSee(appId: string, uid: string, row: MessageRow): Promise<boolean> {
    if (row.receiver_type === 'user') return row.sender === uid || row.receiver === uid;
    return (await this.deps.members.get(appId, row.receiver, uid)) !== undefined;
  }

  /** list-all-messages: the app's messages, or with onBehalfOf those of that user's conversations. */
  async listAll(ctx: RequestContext, input: ListMessagesInput): Promise<{ data: Message[]; meta: MessageListMeta }> {
    await this.deps.usersService.requireActor(ctx);
    const filter = this.filterOf(ctx, input);
    if (input.conversationId !== undefined) filter.conversationId = input.conversationId;
    if (input.receiverType !== undefined) filter.receiverType = input.receiverType;
    if (ctx.onBehalfOf !== undefined) filter.visibleTo = ctx.onBehalfOf;
    return this.page(ctx, filter, input);
  }

  /** user-list-user-messages: the conversation between the onBehalfOf user and `uid`. */
  async listWithUser(ctx: RequestContext, rawUid: string, input: ListMessagesInput): Promise<{ data: Message[]; meta: MessageListMeta }> {
    const viewer = ctx.onBehalfOf;
    if (viewer === undefined) throw badRequest({ onBehalfOf: 'is required: it names the other side of the conversation' });
    await this.deps.usersService.requireActor(ctx);
    const uid = normalizeId(rawUid);
    // Deactivated users keep their history; permanently deleted ones are gone.
    if (!(await this.deps.users.get(ctx.appId, uid))) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid } });
    const filter = this.filterOf(ctx, input);
    filter.conversationId = userConversationId(viewer, uid);
    filter.receiverType = 'user';
    return this.page(ctx, filter, input);
  }

  /** user-list-group-messages: a group's messages, as its onBehalfOf member sees them. */
  async listInGroup(ctx: RequestContext, rawGuid: string, input: ListMessagesInput): Promise<{ data: Message[]; meta: MessageListMeta }> {
    await this.deps.usersService.requireActor(ctx);
    const guid = normalizeId(rawGuid);
    if (!(await this.deps.groups.get(ctx.appId, guid))) throw guidNotFound(guid);
    if (ctx.onBehalfOf !== undefined) await this.requireMember(ctx.appId, guid, ctx.onBehalfOf);
    const filter = this.filterOf(ctx, input);
    filter.conversationId = groupConversationId(guid);
    filter.receiverType = 'group';
    return this.page(ctx, filter, input);
  }

  /** The filters every message list shares. */
  private filterOf(ctx: RequestContext, input: ListMessagesInput): MessageFilter {
    const viewer = ctx.onBehalfOf;
    const needsViewer = (field: string) => badRequest({ [field]: 'needs the onBehalfOf header' });
    if (input.myMentionsOnly && viewer === undefined) throw needsViewer('myMentionsOnly');
    if (input.hideMessagesFromBlockedUsers && viewer === undefined) throw needsViewer('hideMessagesFromBlockedUsers');
    if (input.unread && viewer === undefined) throw needsViewer('unread');
    if (input.undelivered && viewer === undefined) throw needsViewer('undelivered');
    if (input.hideDeleted && input.onlyDeleted) throw badRequest({ onlyDeleted: 'cannot be combined with hideDeleted' });
    const list = <T>(one: T | undefined, many: T[] | undefined) => {
      const all = [...(one !== undefined ? [one] : []), ...(many ?? [])];
      return all.length ? all : undefined;
    };
    const at = (seconds: number | undefined) => (seconds === undefined ? undefined : new Date(seconds * 1000));
    const affix = affixOf(input);
    const mentioning = [...(input.mentionedUids ? normalizeIds(input.mentionedUids) : []), ...(input.myMentionsOnly ? [viewer!] : [])];
    return {
      categories: list(input.category, input.categories),
      types: list(input.type, input.types),
      senders: input.sender !== undefined ? [normalizeId(input.sender)] : undefined,
      tags: input.tags,
      // `sentAt` is a cursor: after it (append) or before it (prepend).
      sentAfter: affix === 'append' ? at(input.sentAt) : undefined,
      sentBefore: affix === 'prepend' ? at(input.sentAt) : undefined,
      sentFrom: at(input.fromTimestamp),
      // As the vendor documents: toTimestamp only counts with fromTimestamp.
      sentTo: input.fromTimestamp !== undefined ? at(input.toTimestamp) : undefined,
      hideReplies: input.hideReplies || undefined,
      deleted: input.hideDeleted ? 'hide' : input.onlyDeleted ? 'only' : undefined,
      searchKey: input.searchKey || undefined,
      hasAttachments: input.hasAttachments,
      mediaTypes: input.attachmentTypes,
      hasMentions: input.hasMentions,
      mentioning: mentioning.length ? mentioning : undefined,
      hasLinks: input.hasLinks,
      hideSendersBlockedBy: input.hideMessagesFromBlockedUsers ? viewer : undefined,
      hasReactions: input.hasReactions,
      clearedFor: viewer,
      unreadBy: input.unread ? viewer : undefined,
      undeliveredBy: input.undelivered ? viewer : undefined,
    };
  }

  private async page(ctx: RequestContext, filter: MessageFilter, input: ListMessagesInput): Promise<{ data: Message[]; meta: MessageListMeta }> {
    const cursor: MessageCursor = {
      affix: affixOf(input),
      id: input.id === undefined ? undefined : cursorId(input.id),
      limit: input.limit ?? input.perPage ?? LIMITS.messageLimitDefault,
    };
    const rows = await this.deps.messages.list(ctx.appId, filter, cursor);
    const data = await this.render(ctx, rows, { withTags: input.withTags ?? false, mentionsWithTagInfo: input.mentionsWithTagInfo });
    const meta: MessageListMeta = { current: { limit: cursor.limit, count: data.length } };
    const first = data[0];
    const last = data[data.length - 1];
    if (first && last) {
      meta.previous = { affix: 'prepend', id: first.id, sentAt: first.sentAt };
      meta.next = { affix: 'append', id: last.id, sentAt: last.sentAt };
    }
    return { data, meta };
  }

  /** Messages with their entities, mentions and reactions, from one read each of users, groups and reactions. */
  async render(
    ctx: RequestContext,
    rows: MessageRow[],
    options: { withTags: boolean; mentionsWithTagInfo?: boolean },
    tx?: Executor,
  ): Promise<Message[]> {
    if (rows.length === 0) return [];
    const uids = new Set<string>();
    const guids = new Set<string>();
    for (const row of rows) {
      uids.add(row.sender);
      if (row.receiver_type === 'user') uids.add(row.receiver);
      else guids.add(row.receiver);
      for (const uid of row.mentioned_uids) uids.add(uid);
    }
    const [users, groups, reactions, receipts] = await Promise.all([
      this.deps.users.getMany(ctx.appId, [...uids], tx),
      this.deps.groups.getMany(ctx.appId, [...guids], tx),
      this.deps.reactions.counts(ctx.appId, rows.map((row) => String(row.id)), ctx.onBehalfOf, tx),
      loadReceipts(this.deps.states, ctx.appId, rows, ctx.onBehalfOf, tx),
    ]);
    const userByUid = new Map(users.map((user) => [user.uid, user]));
    const groupByGuid = new Map(groups.map((group) => [group.guid, group]));
    return rows.map((row) => withReceipt(toMessage(row, userByUid, groupByGuid, options, reactions.get(String(row.id))), receipts(row)));
  }
}

function affixOf(input: ListMessagesInput): 'append' | 'prepend' {
  // The vendor's `id` and `sentAt` read "after"; without a cursor, the newest messages.
  return input.affix ?? (input.id !== undefined || input.sentAt !== undefined ? 'append' : 'prepend');
}

/** The content rules of a message, whoever receives it (and of an edit). */
export function prepare(input: SendMessageInput): Prepared {
  const category = input.category ?? 'message';
  if (!(SENDABLE_CATEGORIES as readonly string[]).includes(category)) {
    throw new AppError('ERR_INVALID_MESSAGE_CATEGORY', { params: { category } });
  }
  let type = input.type;
  if (category === 'message') {
    type ??= 'text';
    if (!(MESSAGE_TYPES as readonly string[]).includes(type)) throw new AppError('ERR_INVALID_MESSAGE_TYPE', { params: { type, category } });
  } else if (!type?.trim()) {
    throw new AppError('ERR_EMPTY_MESSAGE_TYPE');
  }
  const { entities: _entities, mentions: _mentions, reactions: _reactions, ...data } = input.data ?? {};
  if (category === 'message' && type === 'text' && !data.text?.trim()) throw new AppError('ERR_EMPTY_MESSAGE_TEXT');
  if (category === 'message' && (MEDIA_TYPES as readonly string[]).includes(type)) {
    const hasFile = (data.attachments ?? []).some((attachment) => typeof attachment.url === 'string' && attachment.url !== '') || typeof data.url === 'string';
    if (!hasFile) throw new AppError('ERR_EMPTY_MESSAGE_FILE', { params: { type } });
  }
  if (category === 'custom' && (data.customData === undefined || data.customData === null)) throw new AppError('ERR_EMPTY_CUSTOM_DATA');
  const dataJson = JSON.stringify(data);
  if (Buffer.byteLength(dataJson, 'utf8') > LIMITS.messageDataBytes) {
    throw badRequest({ data: `must be at most ${LIMITS.messageDataBytes} bytes when serialised as JSON` });
  }
  const mentioned = mentionedUids(data.text);
  if (mentioned.length > LIMITS.mentionsPerMessage) {
    throw badRequest({ 'data.text': `may mention at most ${LIMITS.mentionsPerMessage} distinct users` });
  }
  return {
    category,
    type,
    dataJson,
    tags: normalizeTags(input.tags ?? []),
    mentioned,
    muid: input.muid ?? null,
  };
}

export function userEntity(uid: string, user: UserRow | undefined, extra: Record<string, unknown> = {}): Entity {
  // A permanently deleted user leaves only their uid.
  return { entity: user ? { ...toUser(user, { withTags: false }), ...extra } : { uid, ...extra }, entityType: 'user' };
}

export function groupEntity(guid: string, group: GroupRow | undefined): Entity {
  const entity = group ? { ...toGroup(group, undefined, { withTags: false }) } : { guid, conversationId: groupConversationId(guid) };
  return { entity, entityType: 'group' };
}

export function toMessage(
  row: MessageRow,
  users: Map<string, UserRow>,
  groups: Map<string, GroupRow>,
  options: { withTags: boolean; mentionsWithTagInfo?: boolean },
  reactions: ReactionCount[] = [],
): Message {
  const stored = (row.data ?? {}) as Record<string, unknown>;
  const data: Message['data'] = {
    ...stored,
    // An action message keeps the entities stored with it: what was acted on, as it was then.
    entities: row.category === 'action' ? (stored.entities as ActionEntities) : {
      sender: userEntity(row.sender, users.get(row.sender)),
      receiver:
        row.receiver_type === 'user'
          ? userEntity(row.receiver, users.get(row.receiver), { conversationId: row.conversation_id })
          : groupEntity(row.receiver, groups.get(row.receiver)),
    },
  };
  const mentions: Record<string, unknown> = {};
  for (const uid of row.mentioned_uids) {
    const user = users.get(uid);
    if (user) mentions[uid] = toUser(user, { withTags: options.mentionsWithTagInfo ?? false });
  }
  if (Object.keys(mentions).length) data.mentions = mentions;
  // In data, as the vendor's reaction examples show; reactedByMe only when true.
  if (reactions.length) {
    data.reactions = reactions.map(({ reaction, count, reactedByMe }) => (reactedByMe ? { reaction, count, reactedByMe } : { reaction, count }));
  }
  const message: Message = {
    id: String(row.id),
    conversationId: row.conversation_id,
    sender: row.sender,
    receiverType: row.receiver_type,
    receiver: row.receiver,
    category: row.category,
    type: row.type,
    data,
    sentAt: toUnix(row.sent_at),
    updatedAt: toUnix(row.updated_at ?? row.sent_at),
  };
  if (row.muid !== null) message.muid = row.muid;
  if (options.withTags && row.tags.length) message.tags = row.tags;
  if (row.parent_id !== null) message.parentId = String(row.parent_id);
  if (row.reply_count > 0) message.replyCount = row.reply_count;
  const editedAt = toUnixOrUndefined(row.edited_at);
  if (editedAt !== undefined) message.editedAt = editedAt;
  if (row.edited_by !== null) message.editedBy = row.edited_by;
  const deletedAt = toUnixOrUndefined(row.deleted_at);
  if (deletedAt !== undefined) message.deletedAt = deletedAt;
  if (row.deleted_by !== null) message.deletedBy = row.deleted_by;
  return message;
}
