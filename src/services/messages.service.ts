import type { Kysely } from 'kysely';
import { UniqueViolation } from '../db/driver-errors.js';
import type { DB, MemberScope, ReceiverType } from '../db/schema.js';
import { withTransaction, type Executor } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { conversationKeysOf, groupConversationKey, userConversationKey } from '../domain/conversation-id.js';
import { AppError, badRequest, uidFailure } from '../domain/errors.js';
import { cursorId, MEDIA_TYPES, MESSAGE_TYPES, mentionedUids, parseMessageId, SENDABLE_CATEGORIES } from '../domain/messages.js';
import { LIMITS, normalizeId, normalizeIds, normalizeTags } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import type { BlockRelation } from '../repositories/blocked-users.repository.js';
import type { ConversationStatesRepository } from '../repositories/conversation-states.repository.js';
import type { GroupMembersRepository } from '../repositories/group-members.repository.js';
import type { GroupRow, GroupsRepository } from '../repositories/groups.repository.js';
import type { ConversationStateRow } from '../repositories/conversation-states.repository.js';
import type { MessageBatchesRepository } from '../repositories/message-batches.repository.js';
import type { MessageCursor, MessageFilter, MessagePage, MessageRow, MessagesRepository, NewMessage, PageCheck, PageReads, PageVersion, SendFacts } from '../repositories/messages.repository.js';
import type { ReactionCount, ReactionsRepository } from '../repositories/reactions.repository.js';
import type { UserRow, UsersRepository } from '../repositories/users.repository.js';
import { guidNotFound } from './group-access.js';
import { permissionDenied } from './rbac.service.js';
import { loadReceipts, receiptsFrom, sourceReceipt, withReceipt } from './receipts.js';
import type { UsersService } from './users.service.js';
import { toMessage, type Message } from './views/messages.view.js';
import { againIfDeletedMeanwhile } from './deleted-meanwhile.js';

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
  mentionsWithBlockedInfo?: boolean;
  hasReactions?: boolean;
  unread?: boolean;
  undelivered?: boolean;
}

type CursorMeta = { affix: 'append' | 'prepend'; id: string; sentAt: number };
/**
 * A page of a list; a page of one conversation also with its version and what that version is
 * read from (see MessagesRepository.pageVersion), so that a copy of it can be checked later.
 */
export type { PageCheck, PageVersion };
export interface VersionedPage {
  page: { data: Message[]; meta: MessageListMeta };
  versioned?: PageVersion;
}
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
  /** What dataJson holds. */
  data: Record<string, unknown>;
  tags: string[];
  mentioned: string[];
  muid: string | null;
}

/** Where a message goes; a thread reply also names its parent. */
export type Target = { receiverType: ReceiverType; receiver: string; parentId?: string };

export class MessagesService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      messages: MessagesRepository;
      users: UsersRepository;
      groups: GroupsRepository;
      members: GroupMembersRepository;
      reactions: ReactionsRepository;
      states: ConversationStatesRepository;
      batches: MessageBatchesRepository;
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
    // A reply's parent and the receivers of a multi-send are checked against a known sender.
    if (thread || input.multipleReceivers) await this.deps.usersService.requireActor(ctx);
    if (thread) {
      const target = await thread();
      const facts = await this.deps.messages.sendFacts(ctx.appId, sender, target.receiverType, target.receiver);
      requireSender(facts, sender);
      // A retried send answers its first message, whatever changed since.
      const first = prepared.muid === null ? undefined : await this.firstWithMuid(ctx, sender, prepared.muid);
      return first ?? this.sendReply(ctx, sender, target, prepared, facts);
    }
    if (!input.multipleReceivers) return this.sendNow(ctx, sender, targets[0]!, prepared);
    // The receivers' sends go together (one statement for them all), each with its own result.
    // Each commits on its own, so a failure of one is that receiver's answer: once another's
    // message is stored, the call must not answer as if nothing was (a 5xx). Only when every
    // receiver's send failed with nothing stored may a server failure be the call's answer.
    let serverFailure: unknown;
    const outcomes = await Promise.all(
      targets.map(async (target): Promise<SendResult> => {
        try {
          return { success: true, data: await this.sendNow(ctx, sender, target, prepared) };
        } catch (error) {
          if (error instanceof AppError && error.status < 500) return uidFailure(error);
          ctx.log.error({ err: error, receiver: target.receiver, receiverType: target.receiverType }, 'the send to one of several receivers failed');
          serverFailure ??= error;
          return uidFailure(error instanceof AppError ? error : new AppError('ERR_EXCEPTION'));
        }
      }),
    );
    if (serverFailure !== undefined && !outcomes.some((outcome) => outcome.success)) throw serverFailure;
    const result: MultiSendResult = { uids: {}, guids: {} };
    targets.forEach((target, n) => ((target.receiverType === 'user' ? result.uids : result.guids)[target.receiver] = outcomes[n]!));
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

  /**
   * A send (not a reply): checked and stored in one statement with the sends of the same moment
   * (MessageBatchesRepository.send), then answered from what that statement read.
   */
  private async sendNow(ctx: RequestContext, sender: string, target: Target, prepared: Prepared): Promise<Message> {
    const message = await this.newMessage(ctx.appId, sender, target, prepared);
    // Twice at most: an earlier message found by its muid may be deleted before it is read.
    for (let attempt = 1; ; attempt++) {
      // A sender or receiver deleted meanwhile: the statement, run again, finds them gone.
      const outcome = await this.storeOrFirst(ctx, message, () => againIfDeletedMeanwhile(() => this.deps.batches.send(ctx.appId, message)));
      if ('first' in outcome) return outcome.first;
      const { facts, row, firstId } = outcome.stored;
      requireSender(facts, sender);
      if (row) return this.renderSent(ctx, row, facts);
      // A retried send answers its first message, whatever changed since.
      if (firstId !== undefined) {
        const first = await this.deps.messages.get(ctx.appId, firstId);
        if (first) return (await this.render(ctx, [first], { withTags: true }))[0]!;
        if (attempt < 2) continue;
      }
      this.checkReceiver(sender, target, facts);
      throw new Error('a send was refused by the database but passes the checks');
    }
  }

  /** A thread reply: stored in a transaction, so a parent deleted meanwhile takes it back. */
  private async sendReply(ctx: RequestContext, sender: string, target: Target, prepared: Prepared, facts: SendFacts): Promise<Message> {
    this.checkReceiver(sender, target, facts);
    const message = await this.newMessage(ctx.appId, sender, target, prepared);
    requirePermitted(extended(facts, await this.deps.messages.replyDenial(ctx.appId, message)), target);
    const outcome = await this.storeOrFirst(ctx, message, () =>
      withTransaction(this.deps.db, 'send_reply', (tx) => this.storeInConversation(ctx.appId, message, tx), ctx.log),
    );
    return 'first' in outcome ? outcome.first : this.renderSent(ctx, outcome.stored, facts);
  }

  private async newMessage(appId: string, sender: string, target: Target, prepared: Prepared): Promise<NewMessage> {
    // Field by field, not `{ ...prepared, ... }`: see domain/objects.ts.
    const mentionedUids = await this.activeMentions(appId, prepared.mentioned);
    return {
      conversationId: conversationIdOf(sender, target),
      sender,
      receiver: target.receiver,
      receiverType: target.receiverType,
      category: prepared.category,
      type: prepared.type,
      dataJson: prepared.dataJson,
      data: prepared.data,
      tags: prepared.tags,
      mentionedUids,
      muid: prepared.muid,
      parentId: target.parentId,
    };
  }

  /** Stores a message; when a concurrent send with the same muid committed first, that one is the answer. */
  private async storeOrFirst<T>(ctx: RequestContext, message: NewMessage, store: () => Promise<T>): Promise<{ stored: T } | { first: Message }> {
    try {
      return { stored: await store() };
    } catch (error) {
      if (error instanceof UniqueViolation && message.muid !== null) {
        const first = await this.firstWithMuid(ctx, message.sender, message.muid);
        if (first) return { first };
      }
      throw error;
    }
  }

  /** The sender's message with this muid, rendered, if there is one. */
  private async firstWithMuid(ctx: RequestContext, sender: string, muid: string): Promise<Message | undefined> {
    const first = await this.deps.messages.getByMuid(ctx.appId, sender, muid);
    return first && (await this.render(ctx, [first], { withTags: true }))[0];
  }

  /**
   * A message just stored, with the people its checks read. It has no reactions or receipts
   * yet, so unless it mentions others nothing more is read: it is rendered at once, its
   * entities made for it alone (the shared ones serve answers that name the same people often).
   */
  private async renderSent(ctx: RequestContext, row: MessageRow, facts: SendFacts): Promise<Message> {
    const users = new Map([[facts.sender!.uid, facts.sender!]]);
    if (facts.receiverUser) users.set(facts.receiverUser.uid, facts.receiverUser);
    if (row.mentioned_uids.every((uid) => users.has(uid))) {
      const groups = new Map(facts.group ? [[facts.group.guid, facts.group]] : []);
      return toMessage(row, users, groups, { withTags: true, shareEntities: false });
    }
    const known = { users: [...users.values()], groups: facts.group ? [facts.group] : [] };
    return (await this.render(ctx, [row], { withTags: true, known, justStored: true }))[0]!;
  }

  /**
   * Stores a message in its conversation (see MessagesRepository.store), alone or inside the
   * caller's transaction. Every message enters a conversation here: sends, replies and action
   * messages. A reply whose parent is gone answers ERR_MESSAGE_ID_NOT_FOUND (the caller's
   * transaction then takes the reply back); a muid used before raises UniqueViolation. (A send
   * goes with the sends of the same moment instead: see sendNow.)
   */
  async storeInConversation(appId: string, message: NewMessage, tx: Executor): Promise<MessageRow> {
    const { row, parentFound } = await this.deps.messages.store(appId, message, tx);
    if (message.parentId !== undefined && !parentFound) throw new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id: message.parentId } });
    return row;
  }

  /**
   * Several action messages of one change to a group (e.g. 25 members added), in order, in
   * the caller's transaction: the batch form of storeInConversation, one INSERT for them all.
   */
  async storeActionsInGroup(appId: string, guid: string, messages: Array<Pick<NewMessage, 'sender' | 'type' | 'dataJson'>>, tx: Executor): Promise<MessageRow[]> {
    if (messages.length === 0) return [];
    const actions = messages.map((message) => extended(message, { category: 'action' }));
    return this.deps.messages.storeManyInGroup(appId, guid, groupConversationKey(guid), actions, tx);
  }

  /** The mentioned users who are active: only they are kept as mentions. */
  async activeMentions(appId: string, uids: string[], tx?: Executor): Promise<string[]> {
    if (uids.length === 0) return [];
    return (await this.deps.users.getMany(appId, uids, tx)).filter((user) => user.deactivated_at === null).map((user) => user.uid);
  }

  /** The receiver's rules, on the facts read for the send (MessageBatchesRepository.send applies the same). */
  private checkReceiver(sender: string, target: Target, facts: SendFacts): void {
    if (target.receiverType === 'user') {
      const uid = target.receiver;
      if (!facts.receiverUser || facts.receiverUser.deactivated_at !== null) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid } });
      if (facts.senderBlockedReceiver) throw new AppError('ERR_BLOCKED_RECEIVER', { params: { uid: sender, receiver: uid } });
      if (facts.receiverBlockedSender) throw new AppError('ERR_BLOCKED_SENDER', { params: { uid: sender, receiver: uid } });
      requirePermitted(facts, target);
      return;
    }
    requireMembership(facts, sender, target.receiver);
    requirePermitted(facts, target);
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
    return (await this.requireVisibleWithScope(ctx, rawId)).row;
  }

  /**
   * requireVisible, with the onBehalfOf user's scope in the group of a group message (whose
   * permissions govern what they do there), read with the membership that makes it visible.
   */
  async requireVisibleWithScope(ctx: RequestContext, rawId: string): Promise<{ row: MessageRow; scope?: MemberScope }> {
    const notFound = () => new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id: rawId } });
    const id = parseMessageId(rawId);
    const row = id === undefined ? undefined : await this.deps.messages.get(ctx.appId, id);
    if (!row) throw notFound();
    const viewer = ctx.onBehalfOf;
    if (viewer === undefined) return { row };
    if (row.receiver_type === 'user') {
      if (row.sender !== viewer && row.receiver !== viewer) throw notFound();
      return { row };
    }
    const membership = await this.deps.members.get(ctx.appId, row.receiver, viewer);
    if (!membership) throw notFound();
    return { row, scope: membership.scope };
  }

  /** list-all-messages: the app's messages, or with onBehalfOf those of that user's conversations. */
  async listAll(ctx: RequestContext, input: ListMessagesInput): Promise<{ data: Message[]; meta: MessageListMeta }> {
    await this.deps.usersService.requireActor(ctx);
    const filter = this.filterOf(ctx, input);
    // The vendor's id may name several conversations: those the onBehalfOf user can be part
    // of, of the receiver type asked for (docs/conversations.md).
    if (input.conversationId !== undefined) {
      filter.conversationIn = conversationKeysOf(input.conversationId, { viewer: ctx.onBehalfOf, type: input.receiverType });
    }
    if (input.receiverType !== undefined) filter.receiverType = input.receiverType;
    if (ctx.onBehalfOf !== undefined) filter.visibleTo = ctx.onBehalfOf;
    return (await this.page(ctx, filter, input, {})).page;
  }

  /** user-list-user-messages: the conversation between the onBehalfOf user and `uid`. */
  async listWithUser(ctx: RequestContext, rawUid: string, input: ListMessagesInput): Promise<VersionedPage> {
    const viewer = ctx.onBehalfOf;
    if (viewer === undefined) throw badRequest({ onBehalfOf: 'is required: it names the other side of the conversation' });
    const uid = normalizeId(rawUid);
    const uids = uid === viewer ? [viewer] : [viewer, uid];
    // Both sides are read with the page and checked before it is shown: the viewer must be
    // active; the other may be deactivated (they keep their history), while a permanently
    // deleted user is gone.
    const check = (users: UserRow[]) => {
      const viewerRow = users.find((user) => user.uid === viewer);
      if (!viewerRow || viewerRow.deactivated_at !== null) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid: viewer } });
      if (!users.some((user) => user.uid === uid)) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid } });
    };
    const filter = await this.filterAfterChecks(ctx, input, async () => check(await this.deps.users.getMany(ctx.appId, uids)));
    filter.conversationId = userConversationKey(viewer, uid);
    filter.receiverType = 'user';
    // Receipts are the receiver's, marks the viewer's: both sides' states.
    const conversation = versionable(filter, input) ? { id: filter.conversationId, stateUids: uids } : undefined;
    return this.page(ctx, filter, input, { uids, conversation }, (page) => check(page.users));
  }

  /** user-list-group-messages: a group's messages, as its onBehalfOf member sees them. */
  async listInGroup(ctx: RequestContext, rawGuid: string, input: ListMessagesInput): Promise<VersionedPage> {
    const guid = normalizeId(rawGuid);
    const viewer = ctx.onBehalfOf;
    // The group, and the viewer with their membership (as a send checks them), are read with
    // the page and checked before it is shown.
    const check = (facts: SendFacts) => {
      if (viewer === undefined) {
        if (!facts.group) throw guidNotFound(guid);
        return;
      }
      if (!facts.sender || facts.sender.deactivated_at !== null) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid: viewer } });
      requireMembership(facts, viewer, guid);
    };
    const filter = await this.filterAfterChecks(ctx, input, async () =>
      check(viewer === undefined ? { sender: undefined, group: await this.deps.groups.get(ctx.appId, guid) } : await this.deps.messages.sendFacts(ctx.appId, viewer, 'group', guid)),
    );
    filter.conversationId = groupConversationKey(guid);
    filter.receiverType = 'group';
    const reads: PageReads = viewer === undefined ? { guids: [guid] } : { uids: [viewer], guids: [guid], membership: { uid: viewer, guid } };
    // A group message's receipts and marks are the viewer's.
    if (versionable(filter, input)) reads.conversation = { id: filter.conversationId, stateUids: viewer === undefined ? [] : [viewer] };
    return this.page(ctx, filter, input, reads, (page) =>
      check({
        sender: page.users.find((user) => user.uid === viewer),
        group: page.groups.find((group) => group.guid === guid),
        isMember: page.isMember,
        isBanned: page.isBanned,
      }),
    );
  }

  /**
   * The list's filters; when they are refused, the checks of the path's user or group come
   * first, as they did when those were read before the page.
   */
  private async filterAfterChecks(ctx: RequestContext, input: ListMessagesInput, checks: () => Promise<void>): Promise<MessageFilter> {
    try {
      return this.filterOf(ctx, input);
    } catch (error) {
      await checks();
      throw error;
    }
  }

  /** The filters every message list shares. */
  private filterOf(ctx: RequestContext, input: ListMessagesInput): MessageFilter {
    const viewer = ctx.onBehalfOf;
    const needsViewer = (field: string) => badRequest({ [field]: 'needs the onBehalfOf header' });
    if (input.myMentionsOnly && viewer === undefined) throw needsViewer('myMentionsOnly');
    if (input.hideMessagesFromBlockedUsers && viewer === undefined) throw needsViewer('hideMessagesFromBlockedUsers');
    if (input.mentionsWithBlockedInfo && viewer === undefined) throw needsViewer('mentionsWithBlockedInfo');
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

  /**
   * The version a conversation's page has now, read from what its `check` names (see
   * MessagesRepository.pageVersion): while it is the version the page was read with, the page
   * (with the checks it passed) reads the same.
   */
  async pageVersion(ctx: RequestContext, check: PageCheck): Promise<string> {
    return this.deps.messages.pageVersion(ctx.appId, check);
  }

  /**
   * A page of a list, read in one statement with everything it is shown with (see
   * MessagesRepository.readPage); `check` sees what was read before anything is shown.
   */
  private async page(
    ctx: RequestContext,
    filter: MessageFilter,
    input: ListMessagesInput,
    reads: Omit<PageReads, 'viewer'>,
    check?: (page: MessagePage) => void,
  ): Promise<VersionedPage> {
    const cursor: MessageCursor = {
      affix: affixOf(input),
      id: input.id === undefined ? undefined : cursorId(input.id),
      limit: input.limit ?? input.perPage ?? LIMITS.messageLimitDefault,
    };
    const { page: read, versioned } = await this.deps.messages.readPage(ctx.appId, filter, cursor, extended(reads, { viewer: ctx.onBehalfOf }));
    check?.(read);
    const mentionBlocks = input.mentionsWithBlockedInfo ? await this.mentionBlocks(ctx, read.rows) : undefined;
    const data = await this.render(ctx, read.rows, { withTags: input.withTags ?? false, mentionsWithTagInfo: input.mentionsWithTagInfo, mentionBlocks, read });
    const meta: MessageListMeta = { current: { limit: cursor.limit, count: data.length } };
    const first = data[0];
    const last = data[data.length - 1];
    if (first && last) {
      meta.previous = { affix: 'prepend', id: first.id, sentAt: first.sentAt };
      meta.next = { affix: 'append', id: last.id, sentAt: last.sentAt };
    }
    return { page: { data, meta }, versioned };
  }

  /** mentionsWithBlockedInfo: the blocks between the onBehalfOf user and the users these messages mention, in one read. */
  private async mentionBlocks(ctx: RequestContext, rows: MessageRow[]): Promise<Map<string, BlockRelation> | undefined> {
    return this.deps.usersService.blockRelations(ctx, [...new Set(rows.flatMap((row) => row.mentioned_uids))]);
  }

  /**
   * Messages with their entities, mentions, reactions and receipts, from one read each of users,
   * groups, reactions and receipts. `known`: users and groups the caller has just read, so
   * only the others are read. `justStored`: the messages have no reactions or receipts yet.
   * `read`: everything was read with the rows (MessagesRepository.readPage), nothing more is.
   */
  async render(
    ctx: RequestContext,
    rows: MessageRow[],
    options: {
      withTags: boolean;
      mentionsWithTagInfo?: boolean;
      mentionBlocks?: Map<string, BlockRelation>;
      known?: { users: UserRow[]; groups: GroupRow[] };
      justStored?: boolean;
      read?: { users: UserRow[]; groups: GroupRow[]; reactions: Map<string, ReactionCount[]>; states: ConversationStateRow[] };
    },
    tx?: Executor,
  ): Promise<Message[]> {
    if (rows.length === 0) return [];
    const read = options.read;
    if (read) {
      const userByUid = new Map(read.users.map((user) => [user.uid, user]));
      const groupByGuid = new Map(read.groups.map((group) => [group.guid, group]));
      const receipts = receiptsFrom(read.states, ctx.onBehalfOf);
      return rows.map((row) => withReceipt(toMessage(row, userByUid, groupByGuid, options, read.reactions.get(String(row.id))), receipts(row)));
    }
    const fresh = options.justStored;
    const userByUid = new Map(options.known?.users.map((user) => [user.uid, user]));
    const groupByGuid = new Map(options.known?.groups.map((group) => [group.guid, group]));
    const uids = new Set<string>();
    const guids = new Set<string>();
    for (const row of rows) {
      uids.add(row.sender);
      if (row.receiver_type === 'user') uids.add(row.receiver);
      else guids.add(row.receiver);
      for (const uid of row.mentioned_uids) uids.add(uid);
    }
    const [users, groups, reactions, receipts] = await Promise.all([
      this.deps.users.getMany(ctx.appId, [...uids].filter((uid) => !userByUid.has(uid)), tx),
      this.deps.groups.getMany(ctx.appId, [...guids].filter((guid) => !groupByGuid.has(guid)), tx),
      fresh ? new Map() : this.deps.reactions.counts(ctx.appId, rows.map((row) => String(row.id)), ctx.onBehalfOf, tx),
      fresh ? sourceReceipt : loadReceipts(this.deps.states, ctx.appId, rows, ctx.onBehalfOf, tx),
    ]);
    for (const user of users) userByUid.set(user.uid, user);
    for (const group of groups) groupByGuid.set(group.guid, group);
    return rows.map((row) => withReceipt(toMessage(row, userByUid, groupByGuid, options, reactions.get(String(row.id))), receipts(row)));
  }
}

/**
 * Whether a conversation's page can be versioned by its conversation (see
 * MessagesRepository.pageVersion): all its filters read the conversation's messages, their
 * reactions and the viewer's marks, except hiding the senders the viewer blocked, which reads
 * their blocks, as mentionsWithBlockedInfo does; such a page is read each time.
 */
function versionable(filter: MessageFilter, input: ListMessagesInput): filter is MessageFilter & { conversationId: string } {
  return filter.conversationId !== undefined && filter.hideSendersBlockedBy === undefined && filter.visibleTo === undefined && !input.mentionsWithBlockedInfo;
}

/** The sender of `facts` exists and is active. */
/** The role and scope permissions of a send, as its statement decided them (see send-permissions.ts). */
function requirePermitted(facts: SendFacts, target: Target): void {
  const deniedBy = facts.deniedBy;
  if (!deniedBy) return;
  if (deniedBy.startsWith('scope:')) {
    // A scope's permission applies only through a membership, so the scope was read.
    throw permissionDenied(deniedBy.slice('scope:'.length), { scope: facts.memberScope!, guid: target.receiver });
  }
  throw permissionDenied(deniedBy, { role: facts.sender!.role });
}

function requireSender(facts: SendFacts, uid: string): void {
  if (!facts.sender || facts.sender.deactivated_at !== null) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid } });
}

function conversationIdOf(sender: string, target: Target): string {
  return target.receiverType === 'user' ? userConversationKey(sender, target.receiver) : groupConversationKey(target.receiver);
}

/** The group of `facts` exists and has `uid` as a member (not banned); returns it. */
function requireMembership(facts: SendFacts, uid: string, guid: string): GroupRow {
  if (!facts.group) throw guidNotFound(guid);
  if (!facts.isMember) {
    if (facts.isBanned) throw new AppError('ERR_BANNED_GROUPMEMBER', { params: { uid, guid } });
    throw new AppError('ERR_GROUP_NOT_JOINED', { params: { uid, guid } });
  }
  return facts.group;
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
    data,
    tags: normalizeTags(input.tags ?? []),
    mentioned,
    muid: input.muid ?? null,
  };
}
