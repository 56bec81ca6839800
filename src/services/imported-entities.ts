import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { AppError } from '../domain/errors.js';
import type { PasswordHasher } from '../domain/passwords.js';
import type { GroupMembersRepository } from '../repositories/group-members.repository.js';
import type { GroupRow, GroupsRepository } from '../repositories/groups.repository.js';
import { DEFAULT_ROLE, type RolesRepository } from '../repositories/roles.repository.js';
import type { NewUser, UsersRepository } from '../repositories/users.repository.js';
import { roleNotFound } from './roles.service.js';

import { chunks, distinct, failure, firstOfEach, guidExists, sortBy, type PreparedGroup, type RecordResult } from './import-records.js';

/**
 * What several kinds of import record create on the way: the users of *Details objects, groups
 * with their owners, and the check that a named role exists.
 */
export class ImportedEntities {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      users: UsersRepository;
      groups: GroupsRepository;
      members: GroupMembersRepository;
      roles: RolesRepository;
      /** Told how many rows a bulk write stored (the embedded engine vacuums after many). */
      noteBulkWrite: (rows: number) => void;
      /** Hashes the imported groups' passwords after every request's own (bulk priority). */
      passwords: PasswordHasher;
    },
  ) {}

  /** Candidates whose role exists (or who name none); the others are answered ERR_ROLE_NOT_FOUND. */
  async withExistingRoles<C extends { key: string }>(
    ctx: RequestContext,
    candidates: C[],
    roleOf: (candidate: C) => string | undefined | Array<string | undefined>,
    // biome-ignore lint/suspicious/noExplicitAny: results of every record kind
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
  async createDetailUsers(ctx: RequestContext, details: Array<NewUser | undefined>): Promise<void> {
    const users = firstOfEach(
      details.filter((user): user is NewUser => user !== undefined),
      (user) => user.uid,
      () => {},
    );
    for (const chunk of chunks(sortBy(users, (user) => user.uid))) await this.deps.users.insertMany(ctx.appId, chunk);
  }

  /**
   * Creates groups (unique guids): each with its owner, who must exist, as an admin member
   * joined at the group's createdAt, as create-group makes the owner its first admin. Answers,
   * per guid, the stored group, or why it was not created.
   */
  async createGroups(ctx: RequestContext, prepared: PreparedGroup[]): Promise<Map<string, GroupRow | AppError>> {
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
          const inserted = await this.deps.groups.insertMany(
            ctx.appId,
            insertable.map((p) => p.group),
            tx,
          );
          const ownerships = inserted.flatMap((row) => (row.owner ? [{ guid: row.guid, uid: row.owner, scope: 'admin' as const, joinedAt: row.created_at }] : []));
          await this.deps.members.insertAcrossGroups(ctx.appId, ownerships, tx);
          // Read again: membersCount counts the owners' memberships (kept by a trigger).
          const rows = new Map(
            (
              await this.deps.groups.getMany(
                ctx.appId,
                inserted.map((row) => row.guid),
                tx,
              )
            ).map((row) => [row.guid, row]),
          );
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

/** What every kind's import call needs (DataImportService, MessageImportService). */
export interface ImportCallDeps {
  db: Kysely<DB>;
  users: UsersRepository;
  /** Told how many rows a bulk write stored (the embedded engine vacuums after many). */
  noteBulkWrite: (rows: number) => void;
  /** Records accepted per call. */
  maxRecords: number;
  /** The users, groups and roles that records create or name. */
  entities: ImportedEntities;
}
