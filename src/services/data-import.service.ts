import type { MemberScope } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { AppError, badRequest } from '../domain/errors.js';
import { LIMITS, normalizeId, unixSecondsToDate } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import { toUnix } from '../domain/time.js';
import { pairKey, type GroupMembersRepository } from '../repositories/group-members.repository.js';
import type { GroupsRepository } from '../repositories/groups.repository.js';
import type { NewUser } from '../repositories/users.repository.js';
import { toGroup, type Group } from './views/groups.view.js';
import { toUser, type User } from './views/users.view.js';

import {
  USERS,
  GROUPS,
  MEMBERS,
  validateUser,
  validateGroup,
  validateMember,
  recordsOf,
  check,
  attempt,
  failure,
  uidExists,
  guidExists,
  firstOfEach,
  sortBy,
  chunks,
  distinct,
  ImportCounts,
  prepareUser,
  prepareGroup,
  type RecordResult,
  type ImportedMember,
  type ImportUser,
  type ImportGroup,
  type ImportMember,
  type PreparedGroup,
} from './import-records.js';
import type { ImportCallDeps } from './imported-entities.js';

export type { ImportedMember, RecordResult } from './import-records.js';

/**
 * The data import API (docs/compatibility.md, "Data import"): users, groups and members, each record validated with the
 * REST path's rules and answered on its own, the writes set-based (one INSERT ... ON CONFLICT DO
 * NOTHING per chunk of records). The database's unique keys make a re-sent record, or two
 * importers racing on the same data, store one copy: the others answer "already exists".
 */
export class DataImportService {
  /** The records answered, for the metrics. */
  readonly records = new ImportCounts();

  constructor(
    private readonly deps: ImportCallDeps & {
      groups: GroupsRepository;
      members: GroupMembersRepository;
    },
  ) {}

  async importUsers(ctx: RequestContext, body: unknown): Promise<Record<string, RecordResult<User>>> {
    const entries = recordsOf(body, USERS, this.deps.maxRecords);
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
    candidates = await this.deps.entities.withExistingRoles(ctx, candidates, (c) => c.user.role, results);
    candidates = firstOfEach(
      candidates,
      (c) => c.user.uid,
      (c) => results.set(c.key, failure(uidExists(c.user.uid))),
    );

    for (const chunk of chunks(sortBy(candidates, (c) => c.user.uid))) {
      const rows = await this.deps.users.insertMany(
        ctx.appId,
        chunk.map((c) => c.user),
      );
      const inserted = new Map(rows.map((row) => [row.uid, row]));
      for (const { key, user } of chunk) {
        const row = inserted.get(user.uid);
        results.set(key, row ? { success: true, data: toUser(row, { withTags: true }) } : failure(uidExists(user.uid)));
      }
    }
    return this.records.answer(ctx.appId, 'users', entries, results);
  }

  async importGroups(ctx: RequestContext, body: unknown): Promise<Record<string, RecordResult<Group>>> {
    const entries = recordsOf(body, GROUPS, this.deps.maxRecords);
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
    candidates = await this.deps.entities.withExistingRoles(ctx, candidates, (c) => c.ownerDetails?.role, results);
    candidates = firstOfEach(
      candidates,
      (c) => c.prepared.group.guid,
      (c) => results.set(c.key, failure(guidExists(c.prepared.group.guid))),
    );

    await this.deps.entities.createDetailUsers(
      ctx,
      candidates.map((c) => c.ownerDetails),
    );
    const outcomes = await this.deps.entities.createGroups(
      ctx,
      candidates.map((c) => c.prepared),
    );
    for (const { key, prepared } of candidates) {
      const outcome = outcomes.get(prepared.group.guid)!;
      results.set(key, outcome instanceof AppError ? failure(outcome) : { success: true, data: toGroup(outcome, undefined, { withTags: true }) });
    }
    return this.records.answer(ctx.appId, 'groups', entries, results);
  }

  async importMembers(ctx: RequestContext, body: unknown): Promise<Record<string, RecordResult<ImportedMember>>> {
    const entries = recordsOf(body, MEMBERS, this.deps.maxRecords);
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
    candidates = await this.deps.entities.withExistingRoles(ctx, candidates, (c) => c.userDetails?.role, results);
    candidates = firstOfEach(
      candidates,
      (c) => pairKey(c.guid, c.uid),
      (c) => results.set(c.key, failure(new AppError(c.banned ? 'ERR_ALREADY_BANNED' : 'ERR_ALREADY_JOINED', { params: { uid: c.uid, guid: c.guid } }))),
    );

    // *Details first: the users, then the groups (whose owner may be one of those users).
    await this.deps.entities.createDetailUsers(
      ctx,
      candidates.map((c) => c.userDetails),
    );
    const detailGroups = firstOfEach(
      candidates.flatMap((c) => (c.groupDetails ? [c.groupDetails] : [])),
      (g) => g.group.guid,
      () => {},
    );
    const groupOutcomes = await this.deps.entities.createGroups(ctx, detailGroups);
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
          const groups = new Map((await this.deps.groups.getManyForUpdate(ctx.appId, distinct(chunk.map((c) => c.guid)), tx)).map((row) => [row.guid, row]));
          const users = await this.deps.users.lockExisting(ctx.appId, distinct(chunk.map((c) => c.uid)), tx);
          const banned = await this.deps.members.bannedPairs(
            ctx.appId,
            chunk.map((c) => ({ guid: c.guid, uid: c.uid })),
            tx,
          );
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
          const bans = await this.deps.members.banAcrossGroups(
            ctx.appId,
            toBan.map((c) => ({ guid: c.guid, uid: c.uid, bannedAt: c.joinedAt })),
            tx,
          );
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
    return this.records.answer(ctx.appId, 'members', entries, results);
  }
}
