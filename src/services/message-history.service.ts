import type { MemberScope, ReceiverType } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { conversationKeysOf, groupConversationKey, userConversationKey } from '../domain/conversation-id.js';
import { AppError, badRequest } from '../domain/errors.js';
import { cursorId, parseMessageId } from '../domain/messages.js';
import { LIMITS, normalizeId, normalizeIds } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import type { BlockRelation } from '../repositories/blocked-users.repository.js';
import type { ConversationStatesRepository } from '../repositories/conversation-states.repository.js';
import type { GroupMembersRepository } from '../repositories/group-members.repository.js';
import type { GroupRow, GroupsRepository } from '../repositories/groups.repository.js';
import type { MessageRow, MessagesRepository } from '../repositories/messages.repository.js';
import type { MessageCursor, MessageFilter, MessagePage, PageCheck, PageRead, PageReads, PageResult, PageVersion } from '../repositories/message-pages.repository.js';
import type { ReactionsRepository } from '../repositories/reactions.repository.js';
import type { UserRow, UsersRepository } from '../repositories/users.repository.js';
import { guidNotFound } from './group-access.js';
import { loadReceipts, receiptsFrom, sourceReceipt, withReceipt } from './receipts.js';
import type { UsersService } from './users.service.js';
import type { ActorContext } from './actor.js';
import { toMessage, type Message } from './views/messages.view.js';
import { ShownMessage, toShownMessage } from './views/shown-messages.js';
import { requireMembership, type MembershipFacts } from './send-rules.js';

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
 * read from (see MessagePagesRepository.pageVersions), so that a copy of it can be checked later.
 */
export type { PageCheck, PageVersion };
export interface VersionedPage {
  /** Its messages rendered, or as their stored text (ShownMessage; messagePageJson writes both). */
  page: { data: Array<Message | ShownMessage>; meta: MessageListMeta };
  /** A page of one conversation's, unless asked for without it. */
  versioned?: PageVersion;
}
export interface MessageListMeta {
  current: { limit: number; count: number };
  previous?: CursorMeta;
  next?: CursorMeta;
  /** previous for prepend, next for append: the page after this one in the request's direction. */
  cursor?: CursorMeta;
}

/** Message history: one message, the lists, their pages and versions, and how rows are rendered. */
export class MessageHistoryService {
  constructor(
    private readonly deps: {
      messages: MessagesRepository;
      /** A page with everything it is shown with (MessagePagesRepository.readPage; coalesced: container.ts). */
      readPage: (item: PageRead) => Promise<PageResult>;
      /** A page's version now, checked with the checks of the same moment (coalesced: container.ts). */
      pageVersion: (item: { appId: string; check: PageCheck }) => Promise<string>;
      users: UsersRepository;
      groups: GroupsRepository;
      members: GroupMembersRepository;
      reactions: ReactionsRepository;
      states: ConversationStatesRepository;
      usersService: Pick<UsersService, 'blockRelations'>;
    },
  ) {}

  /**
   * get-message-details. With onBehalfOf, a message of a conversation that user is not part
   * of is not found, as an unknown id is.
   */
  async get(ctx: ActorContext, rawId: string): Promise<Message> {
    const row = await this.requireVisible(ctx, rawId);
    return (await this.render(ctx, [row], { withTags: true }))[0]!;
  }

  /**
   * The message with this path id, if the onBehalfOf user (when given; else the app) can see it:
   * in their conversation, and not held from them (repositories/message-visibility.ts); else
   * ERR_MESSAGE_ID_NOT_FOUND.
   */
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
    const viewer = ctx.onBehalfOf;
    const row = id === undefined ? undefined : await this.deps.messages.getVisible(ctx.appId, id, viewer);
    if (!row) throw notFound();
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
  async listAll(ctx: ActorContext, input: ListMessagesInput): Promise<{ data: Message[]; meta: MessageListMeta }> {
    const filter = this.filterOf(ctx, input);
    // The vendor's id may name several conversations: those the onBehalfOf user can be part
    // of, of the receiver type asked for (docs/conversations.md).
    if (input.conversationId !== undefined) {
      filter.conversationIn = conversationKeysOf(input.conversationId, { viewer: ctx.onBehalfOf, type: input.receiverType });
    }
    if (input.receiverType !== undefined) filter.receiverType = input.receiverType;
    if (ctx.onBehalfOf !== undefined) filter.visibleTo = ctx.onBehalfOf;
    const { data, meta } = (await this.page(ctx, filter, input, {})).page;
    // Asked without PageReads.shown: every message is read as a row and rendered.
    return { data: data.filter((message): message is Message => !(message instanceof ShownMessage)), meta };
  }

  /**
   * user-list-user-messages: the conversation between the onBehalfOf user and `uid`; with
   * `versioned: false`, without the page's version (see VersionedPage).
   */
  async listWithUser(ctx: RequestContext, rawUid: string, input: ListMessagesInput, { versioned = true } = {}): Promise<VersionedPage> {
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
    // A 1:1 conversation's messages are between its two users (its key names the pair: domain/conversation-id.ts).
    return this.page(ctx, filter, input, { uids, uidsHoldParties: true, conversation, unversioned: !versioned, shown: true }, (page) => check(page.users));
  }

  /** user-list-group-messages: a group's messages, as its onBehalfOf member sees them (`versioned`: as listWithUser). */
  async listInGroup(ctx: RequestContext, rawGuid: string, input: ListMessagesInput, { versioned = true } = {}): Promise<VersionedPage> {
    const guid = normalizeId(rawGuid);
    const viewer = ctx.onBehalfOf;
    // The group, and the viewer with their membership (as a send checks them), are read with
    // the page and checked before it is shown.
    const check = (facts: MembershipFacts) => {
      if (viewer === undefined) {
        if (!facts.group) throw guidNotFound(guid);
        return;
      }
      if (!facts.sender || facts.sender.deactivated_at !== null) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid: viewer } });
      requireMembership(facts, viewer, guid);
    };
    const filter = await this.filterAfterChecks(ctx, input, async () =>
      check(
        viewer === undefined
          ? { sender: undefined, group: await this.deps.groups.get(ctx.appId, guid) }
          : await this.deps.messages.sendFacts(ctx.appId, { sender: viewer, receiver: guid, receiverType: 'group' }, { reply: false, permissions: false }),
      ),
    );
    filter.conversationId = groupConversationKey(guid);
    filter.receiverType = 'group';
    const reads: PageReads = viewer === undefined ? { guids: [guid], shown: true } : { uids: [viewer], guids: [guid], membership: { uid: viewer, guid }, shown: true };
    reads.unversioned = !versioned;
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
      // `sentAt` is a cursor: after it (append) or before it (prepend); with an `id`, the id alone
      // is (ids are the order), or a message sent in the cursor's second would be skipped.
      sentAfter: affix === 'append' && input.id === undefined ? at(input.sentAt) : undefined,
      sentBefore: affix === 'prepend' && input.id === undefined ? at(input.sentAt) : undefined,
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
   * MessagePagesRepository.pageVersions): while it is the version the page was read with, the page
   * (with the checks it passed) reads the same.
   */
  async pageVersion(ctx: RequestContext, check: PageCheck): Promise<string> {
    return this.deps.pageVersion({ appId: ctx.appId, check });
  }

  /**
   * A page of a list, read in one statement with everything it is shown with (see
   * MessagePagesRepository.readPages); `check` sees what was read before anything is shown.
   */
  private async page(ctx: RequestContext, filter: MessageFilter, input: ListMessagesInput, reads: Omit<PageReads, 'viewer'>, check?: (page: MessagePage) => void): Promise<VersionedPage> {
    const cursor: MessageCursor = {
      affix: affixOf(input),
      id: input.id === undefined ? undefined : cursorId(input.id),
      limit: input.limit ?? input.perPage ?? LIMITS.messageLimitDefault,
    };
    const { page: read, versioned } = await this.deps.readPage({ appId: ctx.appId, filter, cursor, reads: extended(reads, { viewer: ctx.onBehalfOf }) });
    check?.(read);
    const mentionBlocks = input.mentionsWithBlockedInfo ? await this.mentionBlocks(ctx, [...read.rows, ...read.shown]) : undefined;
    const data = pageMessages(ctx, read, { withTags: input.withTags ?? false, mentionsWithTagInfo: input.mentionsWithTagInfo, mentionBlocks });
    const meta: MessageListMeta = { current: { limit: cursor.limit, count: data.length } };
    const first = data[0];
    const last = data[data.length - 1];
    if (first && last) {
      meta.previous = { affix: 'prepend', id: first.id, sentAt: first.sentAt };
      meta.next = { affix: 'append', id: last.id, sentAt: last.sentAt };
      meta.cursor = cursor.affix === 'prepend' ? meta.previous : meta.next;
    }
    return { page: { data, meta }, versioned };
  }

  /** mentionsWithBlockedInfo: the blocks between the onBehalfOf user and the users these messages mention, in one read. */
  private async mentionBlocks(ctx: RequestContext, rows: Array<Pick<MessageRow, 'mentioned_uids'>>): Promise<Map<string, BlockRelation> | undefined> {
    return this.deps.usersService.blockRelations(ctx, [...new Set(rows.flatMap((row) => row.mentioned_uids))]);
  }

  /**
   * Messages with their entities, mentions, reactions and receipts, from one read each of users,
   * groups, reactions and receipts. `known`: users and groups the caller has just read, so
   * only the others are read. `justStored`: the messages have no reactions or receipts yet.
   * (A history page reads all of them with its rows: see pageMessages.)
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
    },
    tx?: Executor,
  ): Promise<Message[]> {
    if (rows.length === 0) return [];
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
    const missingUids = [...uids].filter((uid) => !userByUid.has(uid));
    const missingGuids = [...guids].filter((guid) => !groupByGuid.has(guid));
    const ids = rows.map((row) => String(row.id));
    const [users, groups, reactions, receipts] = await Promise.all([
      this.deps.users.getMany(ctx.appId, missingUids, tx),
      this.deps.groups.getMany(ctx.appId, missingGuids, tx),
      fresh ? new Map() : this.deps.reactions.counts(ctx.appId, ids, ctx.onBehalfOf, tx),
      fresh ? sourceReceipt : loadReceipts(this.deps.states, ctx.appId, rows, ctx.onBehalfOf, tx),
    ]);
    for (const user of users) userByUid.set(user.uid, user);
    for (const group of groups) groupByGuid.set(group.guid, group);
    return rows.map((row) => withReceipt(toMessage(row, userByUid, groupByGuid, options, reactions.get(String(row.id))), receipts(row)));
  }
}

/**
 * Whether a conversation's page can be versioned by its conversation (see
 * MessagePagesRepository.pageVersions): all its filters read the conversation's messages, their
 * reactions and the viewer's marks, except hiding the senders the viewer blocked, which reads
 * their blocks, as mentionsWithBlockedInfo does; such a page is read each time.
 */
function versionable(filter: MessageFilter, input: ListMessagesInput): filter is MessageFilter & { conversationId: string } {
  return filter.conversationId !== undefined && filter.hideSendersBlockedBy === undefined && filter.visibleTo === undefined && !input.mentionsWithBlockedInfo;
}

/**
 * A page's messages with their entities, mentions, reactions and receipts, from what was read
 * with them (MessagePagesRepository.readPage, nothing more is read): those read as rows
 * rendered (toMessage), those read as their stored text made up around it (toShownMessage).
 */
function pageMessages(
  ctx: RequestContext,
  read: MessagePage,
  options: { withTags: boolean; mentionsWithTagInfo?: boolean; mentionBlocks?: Map<string, BlockRelation> },
): Array<Message | ShownMessage> {
  const userByUid = new Map(read.users.map((user) => [user.uid, user]));
  const groupByGuid = new Map(read.groups.map((group) => [group.guid, group]));
  const receipts = receiptsFrom(read.states, ctx.onBehalfOf);
  const rendered = read.rows.map((row) => withReceipt(toMessage(row, userByUid, groupByGuid, options, read.reactions.get(String(row.id))), receipts(row)));
  if (read.shown.length === 0) return rendered;
  const pairs = new Map<string, string>();
  const shown = read.shown.map((row) => toShownMessage(row, userByUid, groupByGuid, options, read.reactions.get(row.id), receipts(row), pairs));
  return inIdOrder(rendered, shown);
}

/** Two lists of messages, each in id order, as one in id order. */
function inIdOrder(a: Array<Message | ShownMessage>, b: Array<Message | ShownMessage>): Array<Message | ShownMessage> {
  const merged: Array<Message | ShownMessage> = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) merged.push(BigInt(a[i]!.id) < BigInt(b[j]!.id) ? a[i++]! : b[j++]!);
  return merged.concat(a.slice(i), b.slice(j));
}

function affixOf(input: ListMessagesInput): 'append' | 'prepend' {
  // The vendor's `id` and `sentAt` read "after"; without a cursor, the newest messages.
  return input.affix ?? (input.id !== undefined || input.sentAt !== undefined ? 'append' : 'prepend');
}
