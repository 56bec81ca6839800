import type { Static } from '@sinclair/typebox';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Kysely } from 'kysely';
import type { DB, GroupType, MemberScope } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { groupConversationKey, userConversationKey } from '../domain/conversation-id.js';
import { AppError, badRequest, type ErrorDetails } from '../domain/errors.js';
import type { ErrorCode } from '../domain/error-codes.js';
import { LIMITS, metadataJson, normalizeId, normalizeTags, unixSecondsToDate } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import type { PasswordHasher } from '../domain/passwords.js';
import { findUnstorable } from '../domain/text.js';
import { toUnix } from '../domain/time.js';
import { pairKey, type GroupMembersRepository } from '../repositories/group-members.repository.js';
import type { GroupRow, GroupsRepository, NewGroup } from '../repositories/groups.repository.js';
import type { BulkMessage, MessageImportsRepository } from '../repositories/message-imports.repository.js';
import { DEFAULT_ROLE, type RolesRepository } from '../repositories/roles.repository.js';
import type { MessageRow } from '../repositories/messages.repository.js';
import type { NewUser, UserRow, UsersRepository } from '../repositories/users.repository.js';
import { ImportGroupDetails, ImportGroupRecord, ImportMemberRecord, ImportMessageRecord, ImportUserRecord } from '../schemas/data-import.schema.js';
import { compileBodyValidator } from '../schemas/validator.js';
import { toGroup, type Group } from './views/groups.view.js';
import { prepare } from './message-content.js';
import type { MessageHistoryService } from './message-history.service.js';
import { type Message } from './views/messages.view.js';
import { roleNotFound } from './roles.service.js';
import { toUser, type User } from './views/users.view.js';

/** One record's answer, as the vendor's data import answers each record. */
export type RecordResult<T> =
  | { success: true; data: T }
  | { success: false; error: { code: string; message: string; details?: ErrorDetails } };

export interface ImportedMember {
  guid: string;
  uid: string;
  scope?: MemberScope;
  joinedAt?: number;
  isBanned?: true;
  bannedAt?: number;
}

type ImportUser = Static<typeof ImportUserRecord>;
type ImportGroupFields = Static<typeof ImportGroupDetails>;
type ImportGroup = Static<typeof ImportGroupRecord>;
type ImportMember = Static<typeof ImportMemberRecord>;
type ImportMessage = Static<typeof ImportMessageRecord>;

/** Rows per INSERT statement (and per transaction): the statement stays small, the round trips few. */
const CHUNK = 1_000;
/** Messages per transaction: a message import writes them in two statements, whatever their number. */
const MESSAGE_CHUNK = 5_000;

interface Kind {
  wrapper: 'users' | 'groups' | 'members' | 'messages';
  idField: 'uid' | 'guid' | 'memberId' | 'muid';
  formatCode: ErrorCode;
  /** Ids compared as sent (a muid), not lower-cased as uids and guids are. */
  exact?: boolean;
}
const USERS: Kind = { wrapper: 'users', idField: 'uid', formatCode: 'ERR_IMPORT_INVALID_USER_FORMAT' };
const GROUPS: Kind = { wrapper: 'groups', idField: 'guid', formatCode: 'ERR_IMPORT_INVALID_GROUP_FORMAT' };
const MEMBERS: Kind = { wrapper: 'members', idField: 'memberId', formatCode: 'ERR_IMPORT_INVALID_MEMBER_FORMAT' };
const MESSAGES: Kind = { wrapper: 'messages', idField: 'muid', formatCode: 'ERR_IMPORT_INVALID_MESSAGE_FORMAT', exact: true };

const validateUser = compileBodyValidator(ImportUserRecord);
const validateGroup = compileBodyValidator(ImportGroupRecord);
const validateMember = compileBodyValidator(ImportMemberRecord);
const validateMessage = compileBodyValidator(ImportMessageRecord);

/** A validated message record, with the users and group its *Details create. */
interface MessageCandidate {
  key: string;
  row: BulkMessage & { sentAt: Date; muid: string };
  /** Mentioned uids, kept if they name active users when stored. */
  mentioned: string[];
  users: NewUser[];
  group: PreparedGroup | undefined;
}

/** PostgreSQL's foreign_key_violation. */
const FOREIGN_KEY_VIOLATION = '23503';

/** A group ready to insert, but for its password hash (made only for groups that will be inserted). */
interface PreparedGroup {
  group: NewGroup;
  password: string | undefined;
}

/**
 * The data import API (NOTES.md §4): users, groups and members, each record validated with the
 * REST path's rules and answered on its own, the writes set-based (one INSERT ... ON CONFLICT DO
 * NOTHING per chunk of records). The database's unique keys make a re-sent record, or two
 * importers racing on the same data, store one copy: the others answer "already exists".
 */
export class DataImportService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      users: UsersRepository;
      groups: GroupsRepository;
      members: GroupMembersRepository;
      roles: RolesRepository;
      messageImports: MessageImportsRepository;
      /** Renders the imported messages as every other message. */
      history: MessageHistoryService;
      /** Told how many rows a bulk write stored (the embedded engine vacuums after many). */
      noteBulkWrite: (rows: number) => void;
      /** Records accepted per call. */
      maxRecords: number;
      /** Hashes the imported groups' passwords after every request's own (bulk priority). */
      passwords: PasswordHasher;
    },
  ) {}

  async importUsers(ctx: RequestContext, body: unknown): Promise<Record<string, RecordResult<User>>> {
    const entries = this.records(body, USERS);
    const results = new Map<string, RecordResult<User>>();
    let candidates: Array<{ key: string; user: NewUser }> = [];
    for (const [key, record] of entries) {
      const outcome = attempt(() => {
        check(validateUser, record);
        return prepareUser(record as ImportUser);
      });
      if (outcome instanceof AppError) results.set(key, failure(outcome));
      else candidates.push({ key, user: outcome });
    }
    candidates = await this.withExistingRoles(ctx, candidates, (c) => c.user.role, results);
    candidates = firstOfEach(candidates, (c) => c.user.uid, (c) => results.set(c.key, failure(uidExists(c.user.uid))));

    for (const chunk of chunks(sortBy(candidates, (c) => c.user.uid))) {
      const rows = await this.deps.users.insertMany(ctx.appId, chunk.map((c) => c.user));
      const inserted = new Map(rows.map((row) => [row.uid, row]));
      for (const { key, user } of chunk) {
        const row = inserted.get(user.uid);
        results.set(key, row ? { success: true, data: toUser(row, { withTags: true }) } : failure(uidExists(user.uid)));
      }
    }
    return inOrder(entries, results);
  }

  async importGroups(ctx: RequestContext, body: unknown): Promise<Record<string, RecordResult<Group>>> {
    const entries = this.records(body, GROUPS);
    const results = new Map<string, RecordResult<Group>>();
    let candidates: Array<{ key: string; prepared: PreparedGroup; ownerDetails: NewUser | undefined }> = [];
    for (const [key, raw] of entries) {
      const outcome = attempt(() => {
        check(validateGroup, raw);
        const record = raw as ImportGroup;
        const ownerDetails = record.groupOwnerDetails && prepareUser(record.groupOwnerDetails, 'groupOwnerDetails.');
        const prepared = prepareGroup(record, ownerDetails?.uid);
        if (ownerDetails && prepared.group.owner !== ownerDetails.uid) {
          throw badRequest({ 'groupOwnerDetails.uid': 'must be the group’s owner' });
        }
        return { key, prepared, ownerDetails };
      });
      if (outcome instanceof AppError) results.set(key, failure(outcome));
      else candidates.push(outcome);
    }
    candidates = await this.withExistingRoles(ctx, candidates, (c) => c.ownerDetails?.role, results);
    candidates = firstOfEach(candidates, (c) => c.prepared.group.guid, (c) => results.set(c.key, failure(guidExists(c.prepared.group.guid))));

    await this.createDetailUsers(ctx, candidates.map((c) => c.ownerDetails));
    const outcomes = await this.createGroups(ctx, candidates.map((c) => c.prepared));
    for (const { key, prepared } of candidates) {
      const outcome = outcomes.get(prepared.group.guid)!;
      results.set(key, outcome instanceof AppError ? failure(outcome) : { success: true, data: toGroup(outcome, undefined, { withTags: true }) });
    }
    return inOrder(entries, results);
  }

  async importMembers(ctx: RequestContext, body: unknown): Promise<Record<string, RecordResult<ImportedMember>>> {
    const entries = this.records(body, MEMBERS);
    const results = new Map<string, RecordResult<ImportedMember>>();
    interface Candidate {
      key: string;
      guid: string;
      uid: string;
      scope: MemberScope;
      banned: boolean;
      joinedAt: Date | undefined;
      userDetails: NewUser | undefined;
      groupDetails: PreparedGroup | undefined;
    }
    let candidates: Candidate[] = [];
    for (const [key, raw] of entries) {
      const outcome = attempt((): Candidate => {
        check(validateMember, raw);
        const record = raw as ImportMember;
        const guid = normalizeId(record.guid);
        const uid = normalizeId(record.uid);
        if (normalizeId(record.memberId) !== `${guid}_member_${uid}`) throw badRequest({ memberId: 'must be <guid>_member_<uid>' });
        const userDetails = record.userDetails && prepareUser(record.userDetails, 'userDetails.');
        if (userDetails && userDetails.uid !== uid) throw badRequest({ 'userDetails.uid': 'must be the member’s uid' });
        const groupDetails = record.groupDetails && prepareGroup(record.groupDetails, undefined, 'groupDetails.');
        if (groupDetails && groupDetails.group.guid !== guid) throw badRequest({ 'groupDetails.guid': 'must be the member’s guid' });
        const joinedAt = record.joinedAt === undefined ? undefined : unixSecondsToDate(record.joinedAt);
        return { key, guid, uid, scope: record.scope ?? 'participant', banned: record.isBanned ?? false, joinedAt, userDetails, groupDetails };
      });
      if (outcome instanceof AppError) results.set(key, failure(outcome));
      else candidates.push(outcome);
    }
    candidates = await this.withExistingRoles(ctx, candidates, (c) => c.userDetails?.role, results);
    candidates = firstOfEach(candidates, (c) => pairKey(c.guid, c.uid), (c) =>
      results.set(c.key, failure(new AppError(c.banned ? 'ERR_ALREADY_BANNED' : 'ERR_ALREADY_JOINED', { params: { uid: c.uid, guid: c.guid } }))),
    );

    // *Details first: the users, then the groups (whose owner may be one of those users).
    await this.createDetailUsers(ctx, candidates.map((c) => c.userDetails));
    const detailGroups = firstOfEach(candidates.flatMap((c) => (c.groupDetails ? [c.groupDetails] : [])), (g) => g.group.guid, () => {});
    const groupOutcomes = await this.createGroups(ctx, detailGroups);
    candidates = candidates.filter((c) => {
      const outcome = c.groupDetails && groupOutcomes.get(c.guid);
      // A group that exists already is fine; one its details could not create fails the record.
      if (outcome instanceof AppError && outcome.code !== 'ERR_GUID_ALREADY_EXISTS') {
        results.set(c.key, failure(outcome));
        return false;
      }
      return true;
    });

    for (const chunk of chunks(sortBy(candidates, (c) => pairKey(c.guid, c.uid)))) {
      const answers = await withTransaction(
        this.deps.db,
        'import_members',
        async (tx) => {
          const answer = new Map<string, RecordResult<ImportedMember>>();
          const refuse = (c: Candidate, error: AppError) => answer.set(c.key, failure(error));
          const groups = new Map(
            (await this.deps.groups.getManyForUpdate(ctx.appId, distinct(chunk.map((c) => c.guid)), tx)).map((row) => [row.guid, row]),
          );
          const users = await this.deps.users.lockExisting(ctx.appId, distinct(chunk.map((c) => c.uid)), tx);
          const banned = await this.deps.members.bannedPairs(ctx.appId, chunk.map((c) => ({ guid: c.guid, uid: c.uid })), tx);
          const vacancies = new Map([...groups.values()].map((group) => [group.guid, LIMITS.membersPerGroup - group.members_count]));
          const now = Date.now();
          const toAdd: Array<Candidate & { joinedAt: Date }> = [];
          const toBan: Array<Candidate & { joinedAt: Date }> = [];
          for (const c of chunk) {
            const group = groups.get(c.guid);
            if (!group) refuse(c, new AppError('ERR_GUID_NOT_FOUND', { params: { guid: c.guid } }));
            else if (!users.has(c.uid)) refuse(c, new AppError('ERR_UID_NOT_FOUND', { params: { uid: c.uid } }));
            else if (c.joinedAt && (toUnix(c.joinedAt) < toUnix(group.created_at) || c.joinedAt.getTime() > now)) {
              refuse(c, new AppError('ERR_IMPORT_INVALID_JOINEDAT', { params: { joinedAt: toUnix(c.joinedAt), createdAt: toUnix(group.created_at) } }));
            } else if (c.banned) {
              if (group.owner === c.uid) {
                refuse(c, new AppError('ERR_GROUP_NO_CLEARANCE', { message: `The owner of the group ${c.guid} cannot be banned.` }));
              } else toBan.push(extended(c, { joinedAt: c.joinedAt ?? new Date(now) }));
            } else if (banned.has(pairKey(c.guid, c.uid))) {
              refuse(c, new AppError('ERR_BANNED_GROUPMEMBER', { params: { uid: c.uid, guid: c.guid } }));
            } else if (vacancies.get(c.guid)! <= 0) {
              refuse(c, new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: LIMITS.membersPerGroup, what: `members in the group ${c.guid}` } }));
            } else {
              vacancies.set(c.guid, vacancies.get(c.guid)! - 1);
              toAdd.push(extended(c, { joinedAt: c.joinedAt ?? new Date(now) }));
            }
          }
          const added = await this.deps.members.insertAcrossGroups(ctx.appId, toAdd, tx);
          const addedRows = new Map(added.map((row) => [pairKey(row.guid, row.uid), row]));
          for (const c of toAdd) {
            const row = addedRows.get(pairKey(c.guid, c.uid));
            if (row) answer.set(c.key, { success: true, data: { guid: row.guid, uid: row.uid, scope: row.scope, joinedAt: toUnix(row.joined_at) } });
            else refuse(c, new AppError('ERR_ALREADY_JOINED', { params: { uid: c.uid, guid: c.guid } }));
          }
          // A ban ends the membership, as ban-group-user does.
          await this.deps.members.removePairs(ctx.appId, toBan, tx);
          const bans = await this.deps.members.banAcrossGroups(ctx.appId, toBan.map((c) => ({ guid: c.guid, uid: c.uid, bannedAt: c.joinedAt })), tx);
          const banRows = new Map(bans.map((row) => [pairKey(row.guid, row.uid), row]));
          for (const c of toBan) {
            const row = banRows.get(pairKey(c.guid, c.uid));
            if (row) answer.set(c.key, { success: true, data: { guid: row.guid, uid: row.uid, isBanned: true, bannedAt: toUnix(row.banned_at) } });
            else refuse(c, new AppError('ERR_ALREADY_BANNED', { params: { uid: c.uid, guid: c.guid } }));
          }
          return { answer, written: added.length + bans.length };
        },
        ctx.log,
      );
      for (const [key, result] of answers.answer) results.set(key, result);
      this.deps.noteBulkWrite(answers.written);
    }
    return inOrder(entries, results);
  }

  /**
   * Messages, in history order: the call's messages are stored in sentAt order (then the order
   * sent), so their ids, which are the order of every history, follow sentAt. Their
   * conversations are created or moved on as a send would, and the receipts given move the
   * readers' watermarks. The content rules are those of send-message (prepare); the sender and
   * receiver must exist, or be created by their *Details, but the rules of a live send
   * (membership, bans, blocks) do not apply to history. A muid the sender imported (or sent)
   * before answers ERR_IMPORT_MUID_ALREADY_EXISTS.
   */
  async importMessages(ctx: RequestContext, body: unknown): Promise<Record<string, RecordResult<Message>>> {
    const entries = this.records(body, MESSAGES);
    const results = new Map<string, RecordResult<Message>>();
    let candidates: MessageCandidate[] = [];
    const now = Date.now();
    for (const [key, raw] of entries) {
      const outcome = attempt((): MessageCandidate => {
        check(validateMessage, raw);
        const record = raw as ImportMessage;
        const {
          sender: rawSender,
          receiver: rawReceiver,
          receiverType,
          sentAt: rawSentAt,
          deliveredAt: rawDeliveredAt,
          readAt: rawReadAt,
          senderUserDetails,
          receiverUserDetails,
          receiverGroupDetails,
          receiverGroupOwnerDetails,
          mentionedUserDetails,
          ...content
        } = record;
        if (JSON.stringify(content).length > LIMITS.messageJsonChars) {
          throw badRequest({ record: `the message must be at most ${LIMITS.messageJsonChars} characters as JSON` });
        }
        const prepared = prepare(content);
        const sender = normalizeId(rawSender);
        const receiver = normalizeId(rawReceiver);
        const sentAt = unixSecondsToDate(rawSentAt);
        if (sentAt.getTime() > now) throw badRequest({ sentAt: 'must not be in the future' });
        const readAt = rawReadAt === undefined ? null : unixSecondsToDate(rawReadAt);
        // A message read was delivered, at the latest when it was read.
        const deliveredAt = rawDeliveredAt === undefined ? readAt : unixSecondsToDate(rawDeliveredAt);
        if (readAt && readAt < sentAt) throw badRequest({ readAt: 'must not be before sentAt' });
        if (deliveredAt && deliveredAt < sentAt) throw badRequest({ deliveredAt: 'must not be before sentAt' });

        const users: NewUser[] = [];
        const details = (record: Static<typeof ImportUserRecord> | undefined, field: string, uid: string | undefined) => {
          if (!record) return;
          const user = prepareUser(record, `${field}.`);
          if (uid !== undefined && user.uid !== uid) throw badRequest({ [`${field}.uid`]: `must be ${uid}` });
          users.push(user);
        };
        details(senderUserDetails, 'senderUserDetails', sender);
        if (receiverUserDetails && receiverType !== 'user') throw badRequest({ receiverUserDetails: 'is for a user receiver' });
        details(receiverUserDetails, 'receiverUserDetails', receiver);
        if ((receiverGroupDetails || receiverGroupOwnerDetails) && receiverType !== 'group') {
          throw badRequest({ receiverGroupDetails: 'is for a group receiver' });
        }
        const group = receiverGroupDetails && prepareGroup(receiverGroupDetails, undefined, 'receiverGroupDetails.');
        if (group && group.group.guid !== receiver) throw badRequest({ 'receiverGroupDetails.guid': `must be ${receiver}` });
        if (receiverGroupOwnerDetails) {
          if (!group) throw badRequest({ receiverGroupOwnerDetails: 'comes with receiverGroupDetails' });
          details(receiverGroupOwnerDetails, 'receiverGroupOwnerDetails', group.group.owner ?? undefined);
          group.group.owner ??= users[users.length - 1]!.uid;
        }
        for (const [uid, user] of Object.entries(mentionedUserDetails ?? {})) details(user, `mentionedUserDetails.${uid}`, normalizeId(uid));

        const row: MessageCandidate['row'] = {
          conversationId: receiverType === 'user' ? userConversationKey(sender, receiver) : groupConversationKey(receiver),
          sender,
          receiver,
          receiverType,
          category: prepared.category,
          type: prepared.type,
          dataJson: prepared.dataJson,
          data: prepared.data,
          tags: prepared.tags,
          mentionedUids: [],
          muid: record.muid,
          sentAt,
          deliveredAt,
          readAt,
        };
        return { key, row, mentioned: prepared.mentioned, users, group };
      });
      if (outcome instanceof AppError) results.set(key, failure(outcome));
      else candidates.push(outcome);
    }
    candidates = await this.withExistingRoles(ctx, candidates, (c) => c.users.map((user) => user.role), results);

    // *Details first: the users, then the groups (whose owner may be one of those users).
    await this.createDetailUsers(ctx, candidates.flatMap((c) => c.users));
    const detailGroups = firstOfEach(candidates.flatMap((c) => (c.group ? [c.group] : [])), (g) => g.group.guid, () => {});
    const groupOutcomes = await this.createGroups(ctx, detailGroups);
    candidates = candidates.filter((c) => {
      const outcome = c.group && groupOutcomes.get(c.group.group.guid);
      if (outcome instanceof AppError && outcome.code !== 'ERR_GUID_ALREADY_EXISTS') {
        results.set(c.key, failure(outcome));
        return false;
      }
      return true;
    });

    // History order: by sentAt, then as sent (a stable sort keeps the body's order).
    const ordered = [...candidates].sort((a, b) => a.row.sentAt.getTime() - b.row.sentAt.getTime());
    const stored: Array<{ key: string; row: MessageRow }> = [];
    const known = { users: new Map<string, UserRow>(), groups: new Map<string, GroupRow>() };
    for (const chunk of chunks(ordered, MESSAGE_CHUNK)) {
      const answers = await this.storeMessages(ctx, chunk);
      for (const user of answers.users) known.users.set(user.uid, user);
      for (const group of answers.groups) known.groups.set(group.guid, group);
      for (const [key, error] of answers.refused) results.set(key, failure(error));
      let written = 0;
      answers.insertable.forEach((c, n) => {
        const row = answers.rows[n];
        if (row) {
          stored.push({ key: c.key, row });
          written++;
        } else results.set(c.key, failure(new AppError('ERR_IMPORT_MUID_ALREADY_EXISTS', { params: { muid: c.row.muid, sender: c.row.sender } })));
      });
      this.deps.noteBulkWrite(written);
    }
    const rendered = await this.deps.history.render(ctx, stored.map((s) => s.row), {
      withTags: true,
      justStored: true,
      known: { users: [...known.users.values()], groups: [...known.groups.values()] },
    });
    stored.forEach(({ key }, n) => results.set(key, { success: true, data: rendered[n]! }));
    return inOrder(entries, results);
  }

  /**
   * One chunk of import-messages in one transaction: the records whose sender and receiver
   * exist are stored. Users are read without a lock (a key-share lock on thousands of rows costs
   * more than the rest); a user deleted meanwhile makes the insert violate a foreign key, and
   * the chunk is tried again, which then refuses that user's records.
   */
  private async storeMessages(ctx: RequestContext, chunk: MessageCandidate[]) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await withTransaction(
          this.deps.db,
          'import_messages',
          async (tx) => {
            const refused = new Map<string, AppError>();
            const uids = distinct(chunk.flatMap((c) => [c.row.sender, ...(c.row.receiverType === 'user' ? [c.row.receiver] : []), ...c.mentioned]));
            const users = await this.deps.users.getMany(ctx.appId, uids, tx);
            const userByUid = new Map(users.map((user) => [user.uid, user]));
            const groupIds = distinct(chunk.flatMap((c) => (c.row.receiverType === 'group' ? [c.row.receiver] : [])));
            const groups = await this.deps.messageImports.lockExistingGroups(ctx.appId, groupIds, tx);
            const guids = new Set(groups.map((group) => group.guid));
            const insertable = chunk.filter((c) => {
              const { sender, receiver, receiverType } = c.row;
              if (!userByUid.has(sender)) refused.set(c.key, new AppError('ERR_UID_NOT_FOUND', { params: { uid: sender } }));
              else if (receiverType === 'user' && !userByUid.has(receiver)) refused.set(c.key, new AppError('ERR_UID_NOT_FOUND', { params: { uid: receiver } }));
              else if (receiverType === 'group' && !guids.has(receiver)) refused.set(c.key, new AppError('ERR_GUID_NOT_FOUND', { params: { guid: receiver } }));
              else {
                // Mentions are kept for active users, as on send-message.
                c.row.mentionedUids = c.mentioned.filter((uid) => userByUid.get(uid)?.deactivated_at === null);
                return true;
              }
              return false;
            });
            const rows = await this.deps.messageImports.insertMany(ctx.appId, insertable.map((c) => c.row), tx);
            return { refused, insertable, rows, users, groups };
          },
          ctx.log,
        );
      } catch (error) {
        if ((error as { code?: string }).code !== FOREIGN_KEY_VIOLATION || attempt >= 3) throw error;
      }
    }
  }

  /**
   * The body's records, in order, after the checks that fail the whole call: the wrapper must
   * be an object keyed by id, each record an object whose id is its key, and at most
   * `maxRecords` of them.
   */
  private records(body: unknown, kind: Kind): Array<[string, Record<string, unknown>]> {
    const malformed = (problem: string, details: ErrorDetails) => new AppError(kind.formatCode, { params: { problem }, details });
    if (!isObject(body)) throw malformed('the body is not a JSON object', { body: 'must be an object' });
    const wrapper = body[kind.wrapper];
    if (!isObject(wrapper)) {
      throw malformed(`"${kind.wrapper}" is ${wrapper === undefined ? 'missing' : 'not an object'}`, {
        [kind.wrapper]: `must be an object keyed by ${kind.idField}`,
      });
    }
    const entries = Object.entries(wrapper);
    if (entries.length > this.deps.maxRecords) {
      throw badRequest(
        { [kind.wrapper]: `must hold at most ${this.deps.maxRecords} records per call` },
        `The request holds ${entries.length} records; at most ${this.deps.maxRecords} are accepted per call. Send them in several calls.`,
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

  /** Candidates whose role exists (or who name none); the others are answered ERR_ROLE_NOT_FOUND. */
  private async withExistingRoles<C extends { key: string }>(
    ctx: RequestContext,
    candidates: C[],
    roleOf: (candidate: C) => string | undefined | Array<string | undefined>,
    results: Map<string, RecordResult<any>>,
  ): Promise<C[]> {
    const named = (candidate: C) => [roleOf(candidate)].flat().filter((role): role is string => role !== undefined && role !== DEFAULT_ROLE);
    const existing = await this.deps.roles.existing(ctx.appId, distinct(candidates.flatMap(named)));
    return candidates.filter((candidate) => {
      const missing = named(candidate).find((role) => !existing.has(role));
      if (missing === undefined) return true;
      results.set(candidate.key, failure(roleNotFound(missing)));
      return false;
    });
  }

  /** Creates the users of *Details objects that do not exist yet (the first details of a uid win). */
  private async createDetailUsers(ctx: RequestContext, details: Array<NewUser | undefined>): Promise<void> {
    const users = firstOfEach(details.filter((user): user is NewUser => user !== undefined), (user) => user.uid, () => {});
    for (const chunk of chunks(sortBy(users, (user) => user.uid))) await this.deps.users.insertMany(ctx.appId, chunk);
  }

  /**
   * Creates groups (unique guids): each with its owner, who must exist, as an admin member
   * joined at the group's createdAt, as create-group makes the owner its first admin. Answers,
   * per guid, the stored group, or why it was not created.
   */
  private async createGroups(ctx: RequestContext, prepared: PreparedGroup[]): Promise<Map<string, GroupRow | AppError>> {
    const outcomes = new Map<string, GroupRow | AppError>();
    // Groups that exist already are answered before any password is hashed (scrypt is slow).
    const existing = new Set<string>();
    for (const chunk of chunks(prepared.map((p) => p.group.guid))) {
      for (const row of await this.deps.groups.getMany(ctx.appId, chunk)) existing.add(row.guid);
    }
    const fresh = prepared.filter((p) => {
      if (existing.has(p.group.guid)) outcomes.set(p.group.guid, guidExists(p.group.guid));
      return !existing.has(p.group.guid);
    });
    await Promise.all(
      fresh.map(async (p) => {
        if (p.group.type === 'password') p.group.passwordHash = await this.deps.passwords.hash(p.password!, 'bulk');
      }),
    );

    for (const chunk of chunks(sortBy(fresh, (p) => p.group.guid))) {
      const answer = await withTransaction(
        this.deps.db,
        'import_groups',
        async (tx) => {
          const answer = new Map<string, GroupRow | AppError>();
          const owners = await this.deps.users.lockExisting(ctx.appId, distinct(chunk.flatMap((p) => (p.group.owner ? [p.group.owner] : []))), tx);
          const insertable = chunk.filter((p) => {
            if (p.group.owner === null || owners.has(p.group.owner)) return true;
            answer.set(p.group.guid, new AppError('ERR_UID_NOT_FOUND', { params: { uid: p.group.owner } }));
            return false;
          });
          const inserted = await this.deps.groups.insertMany(ctx.appId, insertable.map((p) => p.group), tx);
          const ownerships = inserted.flatMap((row) => (row.owner ? [{ guid: row.guid, uid: row.owner, scope: 'admin' as const, joinedAt: row.created_at }] : []));
          await this.deps.members.insertAcrossGroups(ctx.appId, ownerships, tx);
          // Read again: membersCount counts the owners' memberships (kept by a trigger).
          const rows = new Map((await this.deps.groups.getMany(ctx.appId, inserted.map((row) => row.guid), tx)).map((row) => [row.guid, row]));
          for (const p of insertable) answer.set(p.group.guid, rows.get(p.group.guid) ?? guidExists(p.group.guid));
          return { answer, written: inserted.length + ownerships.length };
        },
        ctx.log,
      );
      for (const [guid, outcome] of answer.answer) outcomes.set(guid, outcome);
      this.deps.noteBulkWrite(answer.written);
    }
    return outcomes;
  }
}

/** A validated user record (or *Details object) as a row to insert. */
function prepareUser(record: ImportUser, field = ''): NewUser {
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
function prepareGroup(record: ImportGroupFields, defaultOwner: string | undefined, field = ''): PreparedGroup {
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

function time(value: number | string | undefined): Date | undefined {
  return value === undefined ? undefined : unixSecondsToDate(value);
}

/**
 * Validates a record: text PostgreSQL can store, nested at most MAX_JSON_DEPTH deep (the edge's
 * rule, applied here record by record), then its schema. A failure is ERR_BAD_REQUEST with a
 * detail per field.
 */
function check(validate: ValidateFunction, record: unknown): void {
  const unstorable = findUnstorable(record);
  if (unstorable) throw badRequest(unstorable);
  if (validate(record)) return;
  const details: ErrorDetails = {};
  const errors = (validate.errors ?? []) as ErrorObject[];
  for (const error of errors) {
    const missing = (error.params as { missingProperty?: string }).missingProperty;
    const path = [error.instancePath.replace(/^\//, '').replace(/\//g, '.'), missing].filter(Boolean).join('.') || 'record';
    // The timestamps are unions: integer or string of digits (the other unions are enums).
    if (error.keyword === 'anyOf') details[path] = path.endsWith('At') ? 'must be unix seconds (at most 10 digits), as an integer or a string of digits' : 'is not one of the allowed values';
    else details[path] ??= missing ? 'is required' : (error.message ?? 'is not valid');
  }
  throw badRequest(details);
}

function attempt<T>(work: () => T): T | AppError {
  try {
    return work();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

function failure(error: AppError): { success: false; error: { code: string; message: string; details?: ErrorDetails } } {
  return { success: false, error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } };
}

function uidExists(uid: string): AppError {
  return new AppError('ERR_UID_ALREADY_EXISTS', { params: { uid } });
}

function guidExists(guid: string): AppError {
  return new AppError('ERR_GUID_ALREADY_EXISTS', { params: { guid } });
}

/** The first item of each id, in order; `onRepeat` is told of the others. */
function firstOfEach<T>(items: T[], idOf: (item: T) => string, onRepeat: (item: T) => void): T[] {
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
function sortBy<T>(items: T[], keyOf: (item: T) => string): T[] {
  return [...items].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
}

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function distinct(values: string[]): string[] {
  return [...new Set(values)];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The results in the order of the body's records. */
function inOrder<T>(entries: Array<[string, unknown]>, results: Map<string, RecordResult<T>>): Record<string, RecordResult<T>> {
  // fromEntries defines properties, so even a key such as __proto__ stays a plain key.
  return Object.fromEntries(entries.map(([key]) => [key, results.get(key)!]));
}
