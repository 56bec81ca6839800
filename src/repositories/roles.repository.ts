import type { Selectable } from 'kysely';
import type { RolesTable } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { pageOffset, type PageRequest } from '../domain/pagination.js';

export type RoleRow = Selectable<RolesTable>;

export const DEFAULT_ROLE = 'default';

export interface NewRole {
  role: string;
  name: string;
  description?: string | null;
  /** Already serialised JSON, so key order is kept. */
  metadataJson?: string | null;
  settingsJson?: string | null;
}

export interface RoleChanges {
  name?: string;
  description?: string | null;
  metadataJson?: string | null;
  settingsJson?: string | null;
}

export class RolesRepository {
  constructor(private readonly db: Executor) {}

  /** Inserts a role; an existing id rejects with UniqueViolation. */
  async create(appId: string, role: NewRole, tx: Executor = this.db): Promise<RoleRow> {
    return tx
      .insertInto('roles')
      .values({
        app_id: appId,
        role: role.role,
        name: role.name,
        description: role.description ?? null,
        metadata: role.metadataJson ?? null,
        settings: role.settingsJson ?? null,
        created_at: new Date(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** The app's `default` role, created with the app. */
  async createDefault(appId: string, tx: Executor = this.db): Promise<void> {
    await tx
      .insertInto('roles')
      .values({ app_id: appId, role: DEFAULT_ROLE, name: 'Default Role', description: 'This role gives full access', created_at: new Date() })
      .onConflict((oc) => oc.columns(['app_id', 'role']).doNothing())
      .execute();
  }

  async get(appId: string, role: string, tx: Executor = this.db): Promise<RoleRow | undefined> {
    return tx.selectFrom('roles').selectAll().where('app_id', '=', appId).where('role', '=', role).executeTakeFirst();
  }

  async exists(appId: string, role: string, tx: Executor = this.db): Promise<boolean> {
    const row = await tx.selectFrom('roles').select('role').where('app_id', '=', appId).where('role', '=', role).executeTakeFirst();
    return row !== undefined;
  }

  /** Which of the given roles exist. */
  async existing(appId: string, roles: string[], tx: Executor = this.db): Promise<Set<string>> {
    if (roles.length === 0) return new Set();
    const rows = await tx.selectFrom('roles').select('role').where('app_id', '=', appId).where('role', 'in', roles).execute();
    return new Set(rows.map((row) => row.role));
  }

  /** The role, its row locked until the transaction ends. */
  async getForUpdate(appId: string, role: string, tx: Executor): Promise<RoleRow | undefined> {
    return tx.selectFrom('roles').selectAll().where('app_id', '=', appId).where('role', '=', role).forUpdate().executeTakeFirst();
  }

  async list(appId: string, page: PageRequest, tx: Executor = this.db): Promise<{ rows: RoleRow[]; total: number }> {
    const [rows, total] = await Promise.all([
      tx.selectFrom('roles').selectAll().where('app_id', '=', appId).orderBy('role').limit(page.perPage).offset(pageOffset(page)).execute(),
      this.count(appId, tx),
    ]);
    return { rows, total };
  }

  async count(appId: string, tx: Executor = this.db): Promise<number> {
    const row = await tx
      .selectFrom('roles')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', appId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async update(appId: string, role: string, changes: RoleChanges, tx: Executor = this.db): Promise<RoleRow | undefined> {
    const set: Record<string, unknown> = { updated_at: new Date() };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.metadataJson !== undefined) set.metadata = changes.metadataJson;
    if (changes.settingsJson !== undefined) set.settings = changes.settingsJson;
    return tx.updateTable('roles').set(set).where('app_id', '=', appId).where('role', '=', role).returningAll().executeTakeFirst();
  }

  /** Deletes a role; its restricted features and permissions go with it (foreign keys). */
  async delete(appId: string, role: string, tx: Executor = this.db): Promise<boolean> {
    const result = await tx.deleteFrom('roles').where('app_id', '=', appId).where('role', '=', role).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** How many users (deactivated ones too) hold the role. Scans the app's users: deleting a role is rare. */
  async countHolders(appId: string, role: string, tx: Executor = this.db): Promise<number> {
    const row = await tx
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', appId)
      .where('role', '=', role)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async listFeatures(appId: string, role: string, tx: Executor = this.db): Promise<Array<{ feature: string; created_at: Date }>> {
    return tx.selectFrom('role_restricted_features').select(['feature', 'created_at']).where('app_id', '=', appId).where('role', '=', role).orderBy('feature').execute();
  }

  /** Restricts features; those already restricted keep their time. */
  async addFeatures(appId: string, role: string, features: string[], tx: Executor = this.db): Promise<void> {
    if (features.length === 0) return;
    const now = new Date();
    await tx
      .insertInto('role_restricted_features')
      .values(features.map((feature) => ({ app_id: appId, role, feature, created_at: now })))
      .onConflict((oc) => oc.columns(['app_id', 'role', 'feature']).doNothing())
      .execute();
  }

  /** Allows features again: the given ones, or all of them when `features` is undefined. */
  async removeFeatures(appId: string, role: string, features: string[] | undefined, tx: Executor = this.db): Promise<void> {
    let query = tx.deleteFrom('role_restricted_features').where('app_id', '=', appId).where('role', '=', role);
    if (features !== undefined) {
      if (features.length === 0) return;
      query = query.where('feature', 'in', features);
    }
    await query.execute();
  }
}
