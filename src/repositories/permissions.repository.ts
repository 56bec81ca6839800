import { sql } from 'kysely';
import type { MemberScope } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';

/** A permission explicitly set on a role, or on a scope of a group. */
export interface PermissionRow {
  permission: string;
  value: unknown;
  created_at: Date;
  updated_at: Date | null;
}

export interface PermissionEntry {
  permission: string;
  /** Already serialised JSON. */
  valueJson: string;
}

/** Role permissions (RBAC) and group scope permissions (SBAC): only those explicitly set. */
export class PermissionsRepository {
  constructor(private readonly db: Executor) {}

  /** The permissions set on a role; only `permissions` when given. */
  async listForRole(appId: string, role: string, permissions?: string[], tx: Executor = this.db): Promise<PermissionRow[]> {
    let query = tx.selectFrom('role_permissions').select(['permission', 'value', 'created_at', 'updated_at']).where('app_id', '=', appId).where('role', '=', role);
    if (permissions) query = query.where('permission', 'in', permissions);
    return query.orderBy('permission').execute();
  }

  async upsertForRole(appId: string, role: string, entries: PermissionEntry[], tx: Executor = this.db): Promise<void> {
    if (entries.length === 0) return;
    const now = new Date();
    // Translated: the service answers a foreign key violation (the role deleted meanwhile) as not found.
    await tx
      .insertInto('role_permissions')
      .values(entries.map((entry) => ({ app_id: appId, role, permission: entry.permission, value: entry.valueJson, created_at: now })))
      .onConflict((oc) => oc.columns(['app_id', 'role', 'permission']).doUpdateSet({ value: sql`excluded.value`, updated_at: now }))
      .execute();
  }

  async deleteForRole(appId: string, role: string, permission: string, tx: Executor = this.db): Promise<void> {
    await tx.deleteFrom('role_permissions').where('app_id', '=', appId).where('role', '=', role).where('permission', '=', permission).execute();
  }

  /** The permissions set on a scope of a group; only `permissions` when given. */
  async listForScope(appId: string, guid: string, scope: MemberScope, permissions?: string[], tx: Executor = this.db): Promise<PermissionRow[]> {
    let query = tx.selectFrom('group_scope_permissions').select(['permission', 'value', 'created_at', 'updated_at']).where('app_id', '=', appId).where('guid', '=', guid).where('scope', '=', scope);
    if (permissions) query = query.where('permission', 'in', permissions);
    return query.orderBy('permission').execute();
  }

  async upsertForScope(appId: string, guid: string, scope: MemberScope, entries: PermissionEntry[], tx: Executor = this.db): Promise<void> {
    if (entries.length === 0) return;
    const now = new Date();
    // Translated: the service answers a foreign key violation (the group deleted meanwhile) as not found.
    await tx
      .insertInto('group_scope_permissions')
      .values(entries.map((entry) => ({ app_id: appId, guid, scope, permission: entry.permission, value: entry.valueJson, created_at: now })))
      .onConflict((oc) => oc.columns(['app_id', 'guid', 'scope', 'permission']).doUpdateSet({ value: sql`excluded.value`, updated_at: now }))
      .execute();
  }

  async deleteForScope(appId: string, guid: string, scope: MemberScope, permission: string, tx: Executor = this.db): Promise<void> {
    await tx.deleteFrom('group_scope_permissions').where('app_id', '=', appId).where('guid', '=', guid).where('scope', '=', scope).where('permission', '=', permission).execute();
  }
}
