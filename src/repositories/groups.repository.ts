import { sql, type Selectable } from 'kysely';
import type { GroupsTable, GroupType, MemberScope } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { pageOffset, type PageRequest } from '../domain/pagination.js';
import { anyOf, escapeLike } from './sql-helpers.js';

export type GroupRow = Selectable<GroupsTable>;

/** A group as seen by one user: their membership, if any. */
export interface GroupWithViewer extends GroupRow {
  viewer_scope: MemberScope | null;
  viewer_joined_at: Date | null;
}

export interface NewGroup {
  guid: string;
  name: string;
  type: GroupType;
  passwordHash: string | null;
  icon?: string | null;
  description?: string | null;
  metadataJson?: string | null;
  tags?: string[];
  owner: string | null;
  createdAt?: Date;
}

export interface GroupChanges {
  name?: string;
  type?: GroupType;
  passwordHash?: string | null;
  icon?: string | null;
  description?: string | null;
  metadataJson?: string | null;
  tags?: string[];
  owner?: string | null;
}

export interface GroupListFilter {
  searchKey?: string;
  searchIn?: Array<'name' | 'guid'>;
  types?: GroupType[];
  /** Groups having at least one of these tags. */
  tags?: string[];
  /** Only groups this user is a member of. */
  joinedBy?: string;
  /** With `updatedAt`: groups changed after (append) or before (prepend) it. */
  updated?: { affix: 'append' | 'prepend'; at: Date };
  sortBy: 'name' | 'guid' | 'createdAt';
  sortOrder: 'asc' | 'desc';
}

const NAME_ORDER = sql<string>`lower(groups.name) collate "C"`;

export class GroupsRepository {
  constructor(private readonly db: Executor) {}

  async create(appId: string, group: NewGroup, tx: Executor = this.db): Promise<GroupRow> {
    return tx
      .insertInto('groups')
      .values({
        app_id: appId,
        guid: group.guid,
        name: group.name,
        type: group.type,
        password_hash: group.passwordHash,
        icon: group.icon ?? null,
        description: group.description ?? null,
        metadata: group.metadataJson ?? null,
        tags: group.tags ?? [],
        owner: group.owner,
        created_at: group.createdAt ?? new Date(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /**
   * Inserts groups in one statement (the data import): the rows travel as one JSON parameter.
   * guids that exist already, or repeat in `groups`, are skipped. Returns the rows inserted.
   */
  async insertMany(appId: string, groups: NewGroup[], tx: Executor = this.db): Promise<GroupRow[]> {
    if (groups.length === 0) return [];
    const records = groups.map((group) => {
      const fields = JSON.stringify({
        guid: group.guid,
        name: group.name,
        type: group.type,
        password_hash: group.passwordHash,
        icon: group.icon ?? null,
        description: group.description ?? null,
        tags: group.tags ?? [],
        owner: group.owner,
        created_at: group.createdAt?.toISOString() ?? null,
      });
      // metadata is already JSON text: spliced in as is, keeping its key order.
      return `${fields.slice(0, -1)},"metadata":${group.metadataJson ?? 'null'}}`;
    });
    const result = await sql<GroupRow>`
      insert into groups (app_id, guid, name, type, password_hash, icon, description, metadata, tags, owner, created_at)
      select ${appId}, guid, name, type, password_hash, icon, description, metadata, tags, owner, coalesce(created_at, now())
      from json_to_recordset(${`[${records.join(',')}]`}::json) as r(
        guid text, name text, type text, password_hash text, icon text, description text, metadata json,
        tags text[], owner text, created_at timestamptz)
      on conflict (app_id, guid) do nothing
      returning *`.execute(tx);
    return result.rows;
  }

  /**
   * The given groups that exist, their rows locked until the transaction ends, in guid order
   * (so concurrent callers cannot deadlock): member changes of these groups serialise on them.
   */
  async getManyForUpdate(appId: string, guids: string[], tx: Executor): Promise<GroupRow[]> {
    if (guids.length === 0) return [];
    return tx.selectFrom('groups').selectAll().where('app_id', '=', appId).where('guid', 'in', guids).orderBy('guid').forNoKeyUpdate().execute();
  }

  async get(appId: string, guid: string, tx: Executor = this.db): Promise<GroupRow | undefined> {
    return tx.selectFrom('groups').selectAll().where('app_id', '=', appId).where('guid', '=', guid).executeTakeFirst();
  }

  /** Groups by guid; unknown guids are absent. */
  async getMany(appId: string, guids: string[], tx: Executor = this.db): Promise<GroupRow[]> {
    if (guids.length === 0) return [];
    return tx.selectFrom('groups').selectAll().where('app_id', '=', appId).where('guid', '=', anyOf(guids)).execute();
  }

  /** The group, its row locked until the transaction ends (member changes serialise on it). */
  async getForUpdate(appId: string, guid: string, tx: Executor): Promise<GroupRow | undefined> {
    return tx.selectFrom('groups').selectAll().where('app_id', '=', appId).where('guid', '=', guid).forUpdate().executeTakeFirst();
  }

  async list(appId: string, filter: GroupListFilter, page: PageRequest, viewer: string | undefined, tx: Executor = this.db): Promise<{ rows: GroupWithViewer[]; total: number }> {
    let query = tx
      .selectFrom('groups')
      .leftJoin('group_members as viewer', (join) =>
        join
          .onRef('viewer.app_id', '=', 'groups.app_id')
          .onRef('viewer.guid', '=', 'groups.guid')
          .on('viewer.uid', '=', viewer ?? ''),
      )
      .where('groups.app_id', '=', appId);
    if (filter.types?.length) query = query.where('groups.type', 'in', filter.types);
    if (filter.tags?.length) query = query.where(sql<boolean>`groups.tags && ${sql.val(filter.tags)}::text[]`);
    if (filter.joinedBy !== undefined) query = query.where('viewer.uid', 'is not', null);
    if (filter.updated) {
      const changed = sql`coalesce(groups.updated_at, groups.created_at)`;
      query = query.where(changed, filter.updated.affix === 'append' ? '>' : '<', filter.updated.at);
    }
    if (filter.searchKey) {
      const prefix = `${escapeLike(filter.searchKey.toLowerCase())}%`;
      const fields = filter.searchIn?.length ? filter.searchIn : ['name', 'guid'];
      query = query.where((eb) => eb.or(fields.map((field) => (field === 'guid' ? eb('groups.guid', 'like', prefix) : eb(NAME_ORDER, 'like', prefix)))));
    }
    const order = filter.sortOrder;
    const sorted =
      filter.sortBy === 'guid'
        ? query.orderBy('groups.guid', order)
        : filter.sortBy === 'createdAt'
          ? query.orderBy('groups.created_at', order).orderBy('groups.guid', order)
          : query.orderBy(NAME_ORDER, order).orderBy('groups.guid', order);
    const [rows, count] = await Promise.all([
      sorted.selectAll('groups').select(['viewer.scope as viewer_scope', 'viewer.joined_at as viewer_joined_at']).limit(page.perPage).offset(pageOffset(page)).execute(),
      query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows as GroupWithViewer[], total: Number(count.n) };
  }

  async update(appId: string, guid: string, changes: GroupChanges, tx: Executor = this.db): Promise<GroupRow | undefined> {
    const set: Record<string, unknown> = { updated_at: new Date() };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.type !== undefined) set.type = changes.type;
    if (changes.passwordHash !== undefined) set.password_hash = changes.passwordHash;
    if (changes.icon !== undefined) set.icon = changes.icon;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.metadataJson !== undefined) set.metadata = changes.metadataJson;
    if (changes.tags !== undefined) set.tags = changes.tags;
    if (changes.owner !== undefined) set.owner = changes.owner;
    return tx.updateTable('groups').set(set).where('app_id', '=', appId).where('guid', '=', guid).returningAll().executeTakeFirst();
  }

  /** Deletes a group; its members and bans go with it (foreign keys). */
  async delete(appId: string, guid: string, tx: Executor = this.db): Promise<boolean> {
    const result = await tx.deleteFrom('groups').where('app_id', '=', appId).where('guid', '=', guid).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
