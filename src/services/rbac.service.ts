import type { Kysely } from 'kysely';
import { ForeignKeyViolation } from '../db/driver-errors.js';
import type { DB, GroupType, MemberScope } from '../db/schema.js';
import { withTransaction, type Executor } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { AppError, badRequest } from '../domain/errors.js';
import { LIMITS, normalizeId } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import { pageMeta, type PageMeta } from '../domain/pagination.js';
import {
  asList,
  checkPermissionValue,
  ROLE_PERMISSION_BY_ID,
  ROLE_PERMISSIONS,
  SCOPE_PERMISSION_BY_ID,
  SCOPE_PERMISSIONS,
  type PermissionDataType,
  type PermissionDefinition,
  type PermissionValue,
} from '../domain/permissions.js';
import { toUnix, toUnixOrUndefined } from '../domain/time.js';
import type { GroupsRepository } from '../repositories/groups.repository.js';
import type { PermissionEntry, PermissionRow, PermissionsRepository } from '../repositories/permissions.repository.js';
import type { RolesRepository } from '../repositories/roles.repository.js';
import { guidNotFound } from './group-access.js';
import { roleNotFound } from './roles.service.js';

export interface Permission {
  id: string;
  type: 'role' | 'scope';
  title: string;
  description: string;
  dataType: PermissionDataType;
  availableValues: string[];
  defaultValue: PermissionValue;
  /** The value in force: the one set, else the default. */
  value: PermissionValue;
  createdAt?: number;
  updatedAt?: number;
}

export type PermissionValues = Record<string, PermissionValue>;
/** set-*-permissions: a result per permission, and every permission set afterwards. */
export type SetPermissionsResult = Record<string, { success: true; message: string } | PermissionValues> & { permissions: PermissionValues };

/** The permissions RBAC enforces today: creating and joining groups. */
export type GroupTypeAction = 'createGroup' | 'joinGroup';

export class RbacService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      roles: RolesRepository;
      groups: GroupsRepository;
      permissions: PermissionsRepository;
    },
  ) {}

  async listRolePermissions(ctx: RequestContext, rawRole: string): Promise<{ data: Permission[]; meta: PageMeta }> {
    const role = normalizeId(rawRole);
    if (!(await this.deps.roles.exists(ctx.appId, role))) throw roleNotFound(role);
    return listed(ROLE_PERMISSIONS, 'role', await this.deps.permissions.listForRole(ctx.appId, role));
  }

  async setRolePermissions(ctx: RequestContext, rawRole: string, permissions: Record<string, unknown>): Promise<SetPermissionsResult> {
    const role = normalizeId(rawRole);
    const entries = checked(ROLE_PERMISSION_BY_ID, permissions, 'role');
    try {
      return await withTransaction(
        this.deps.db,
        'set_role_permissions',
        async (tx) => {
          if (!(await this.deps.roles.exists(ctx.appId, role, tx))) throw roleNotFound(role);
          await this.deps.permissions.upsertForRole(ctx.appId, role, entries, tx);
          const rows = await this.deps.permissions.listForRole(ctx.appId, role, undefined, tx);
          return setResult(entries, rows, (id) => `Permission with id ${id} have been mapped successfully to role ${role}.`);
        },
        ctx.log,
      );
    } catch (error) {
      // The role was deleted between the check and the insert.
      if (error instanceof ForeignKeyViolation) throw roleNotFound(role);
      throw error;
    }
  }

  async unsetRolePermission(ctx: RequestContext, rawRole: string, permission: string): Promise<{ permissions: PermissionValues }> {
    const role = normalizeId(rawRole);
    if (!ROLE_PERMISSION_BY_ID.has(permission)) throw badRequest({ permission: `${permission} is not a role permission` });
    if (!(await this.deps.roles.exists(ctx.appId, role))) throw roleNotFound(role);
    await this.deps.permissions.deleteForRole(ctx.appId, role, permission);
    return { permissions: valuesOf(await this.deps.permissions.listForRole(ctx.appId, role)) };
  }

  async listScopePermissions(ctx: RequestContext, rawGuid: string, scope: MemberScope): Promise<{ data: Permission[]; meta: PageMeta }> {
    const guid = await this.requireGroup(ctx, rawGuid);
    return listed(SCOPE_PERMISSIONS, 'scope', await this.deps.permissions.listForScope(ctx.appId, guid, scope));
  }

  async setScopePermissions(ctx: RequestContext, rawGuid: string, scope: MemberScope, permissions: Record<string, unknown>): Promise<SetPermissionsResult> {
    const entries = checked(SCOPE_PERMISSION_BY_ID, permissions, 'scope');
    const guid = normalizeId(rawGuid);
    try {
      return await withTransaction(
        this.deps.db,
        'set_scope_permissions',
        async (tx) => {
          if (!(await this.deps.groups.get(ctx.appId, guid, tx))) throw guidNotFound(guid);
          await this.deps.permissions.upsertForScope(ctx.appId, guid, scope, entries, tx);
          const rows = await this.deps.permissions.listForScope(ctx.appId, guid, scope, undefined, tx);
          return setResult(entries, rows, (id) => `Permission with id ${id} have been mapped successfully to scope ${scope} on group ${guid}.`);
        },
        ctx.log,
      );
    } catch (error) {
      if (error instanceof ForeignKeyViolation) throw guidNotFound(guid);
      throw error;
    }
  }

  async unsetScopePermission(ctx: RequestContext, rawGuid: string, scope: MemberScope, permission: string): Promise<{ permissions: PermissionValues }> {
    if (!SCOPE_PERMISSION_BY_ID.has(permission)) throw badRequest({ permission: `${permission} is not a scope permission` });
    const guid = await this.requireGroup(ctx, rawGuid);
    await this.deps.permissions.deleteForScope(ctx.appId, guid, scope, permission);
    return { permissions: valuesOf(await this.deps.permissions.listForScope(ctx.appId, guid, scope)) };
  }

  /** The values set on a role for these permissions (those not set are absent: their default applies). */
  async roleValues(ctx: RequestContext, role: string, ids: string[], tx?: Executor): Promise<Map<string, PermissionValue>> {
    return valueMap(await this.deps.permissions.listForRole(ctx.appId, role, ids, tx));
  }

  /** The values set on a scope of a group for these permissions (as roleValues). */
  async scopeValues(ctx: RequestContext, guid: string, scope: MemberScope, ids: string[], tx?: Executor): Promise<Map<string, PermissionValue>> {
    return valueMap(await this.deps.permissions.listForScope(ctx.appId, guid, scope, ids, tx));
  }

  /** A toggle (allow/deny) of a user's scope in a group: ERR_PERMISSION_DENIED when it is set to deny. */
  async requireScopeAllows(ctx: RequestContext, guid: string, scope: MemberScope, permission: string, tx?: Executor): Promise<void> {
    const values = await this.scopeValues(ctx, guid, scope, [permission], tx);
    if (values.get(permission) === 'deny') throw permissionDenied(permission, { scope, guid });
  }

  /**
   * Enforces `createGroup` / `joinGroup` and their `allowedGroupTypes` for a user of `role`
   * (the onBehalfOf user). One indexed read, which finds nothing unless they were set.
   */
  async requireGroupTypeAllowed(ctx: RequestContext, role: string, action: GroupTypeAction, type: GroupType): Promise<void> {
    const typesKey = `${action}.allowedGroupTypes`;
    const values = await this.roleValues(ctx, role, [action, typesKey]);
    if (values.get(action) === 'deny') throw permissionDenied(action, { role });
    const types = asList(values.get(typesKey));
    if (types.length > 0 && !types.includes(type)) {
      throw new AppError('ERR_PERMISSION_DENIED', {
        message: `The permission ${typesKey} of the role ${role} does not allow ${type} groups.`,
      });
    }
  }

  private async requireGroup(ctx: RequestContext, rawGuid: string): Promise<string> {
    const guid = normalizeId(rawGuid);
    if (!(await this.deps.groups.get(ctx.appId, guid))) throw guidNotFound(guid);
    return guid;
  }
}

/** ERR_PERMISSION_DENIED for a permission of a role, or of a scope in a group. */
export function permissionDenied(permission: string, holder: { role: string } | { scope: MemberScope; guid: string }): AppError {
  if ('role' in holder) return new AppError('ERR_PERMISSION_DENIED', { params: { permission, role: holder.role } });
  return new AppError('ERR_PERMISSION_DENIED', {
    message: `The permission ${permission} of the scope ${holder.scope} in the group ${holder.guid} does not allow this.`,
  });
}

/** Checks every permission of a set call; one bad name or value refuses the whole call. */
function checked(catalogue: Map<string, PermissionDefinition>, permissions: Record<string, unknown>, kind: 'role' | 'scope'): PermissionEntry[] {
  const details: Record<string, string> = {};
  const entries: PermissionEntry[] = [];
  for (const [id, raw] of Object.entries(permissions)) {
    const definition = catalogue.get(id);
    if (!definition) {
      details[`permissions.${id}`] = `is not a ${kind} permission`;
      continue;
    }
    const result = checkPermissionValue(definition, raw);
    if ('problem' in result) details[`permissions.${id}`] = result.problem;
    else entries.push({ permission: id, valueJson: JSON.stringify(result.value) });
  }
  if (Object.keys(details).length > 0) throw badRequest(details);
  if (entries.length === 0) throw badRequest({ permissions: 'must set at least one permission' });
  return entries;
}

function valueMap(rows: PermissionRow[]): Map<string, PermissionValue> {
  return new Map(rows.map((row) => [row.permission, row.value as PermissionValue]));
}

function valuesOf(rows: PermissionRow[]): PermissionValues {
  return Object.fromEntries(rows.map((row) => [row.permission, row.value as PermissionValue]));
}

function setResult(entries: PermissionEntry[], rows: PermissionRow[], message: (id: string) => string): SetPermissionsResult {
  const result: Record<string, unknown> = {};
  for (const entry of entries) result[entry.permission] = { success: true, message: message(entry.permission) };
  result.permissions = valuesOf(rows);
  return result as SetPermissionsResult;
}

function listed(catalogue: readonly PermissionDefinition[], type: 'role' | 'scope', rows: PermissionRow[]): { data: Permission[]; meta: PageMeta } {
  const set = new Map(rows.map((row) => [row.permission, row]));
  const data = catalogue.map((definition) => {
    const row = set.get(definition.id);
    const permission: Permission = extended(definition, { type, value: (row?.value as PermissionValue | undefined) ?? definition.defaultValue });
    if (row) {
      permission.createdAt = toUnix(row.created_at);
      const updatedAt = toUnixOrUndefined(row.updated_at);
      if (updatedAt !== undefined) permission.updatedAt = updatedAt;
    }
    return permission;
  });
  return { data, meta: pageMeta({ page: 1, perPage: LIMITS.perPageDefault }, data.length, data.length) };
}
