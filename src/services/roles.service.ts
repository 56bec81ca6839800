import type { Kysely } from 'kysely';
import { UniqueViolation } from '../db/driver-errors.js';
import type { DB } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { AppError, badRequest } from '../domain/errors.js';
import { LIMITS, metadataJson, normalizeId } from '../domain/normalize.js';
import { pageMeta, type PageMeta, type PageRequest } from '../domain/pagination.js';
import { FEATURE_BY_KEY, featureKey } from '../domain/permissions.js';
import { toUnix, toUnixOrUndefined } from '../domain/time.js';
import { DEFAULT_ROLE, type RoleChanges, type RoleRow, type RolesRepository } from '../repositories/roles.repository.js';

export type RoleSettingValue = 'all' | 'friendsOnly';
export interface RoleSettings {
  listUsers?: RoleSettingValue;
  sendMessagesTo?: RoleSettingValue;
}

export interface Role {
  role: string;
  name: string;
  description?: string;
  metadata?: Record<string, unknown>;
  settings?: RoleSettings;
  createdAt: number;
  updatedAt?: number;
}

export interface CreateRoleInput {
  role: string;
  name: string;
  description?: string;
  metadata?: Record<string, unknown>;
  settings?: RoleSettings;
}

export type UnsettableRoleField = 'settings' | 'description' | 'metadata';

export interface UpdateRoleInput {
  name?: string;
  description?: string;
  metadata?: Record<string, unknown>;
  settings?: RoleSettings;
  unset?: UnsettableRoleField[];
}

export interface RestrictedFeature {
  title: string;
  description: string;
  key: string;
  path: string;
  createdAt: number;
}

export type FeatureResults = Record<string, { success: true; message: string }>;

export class RolesService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      roles: RolesRepository;
    },
  ) {}

  async create(ctx: RequestContext, input: CreateRoleInput): Promise<Role> {
    const role = normalizeId(input.role);
    const values = {
      role,
      name: input.name,
      description: input.description,
      metadataJson: metadataJson(input.metadata),
      settingsJson: settingsJson(input.settings),
    };
    try {
      return await withTransaction(
        this.deps.db,
        'create_role',
        async (tx) => {
          // The default role's row serialises role creation in the app, so the limit holds
          // under concurrent creates.
          await this.deps.roles.getForUpdate(ctx.appId, DEFAULT_ROLE, tx);
          if (await this.deps.roles.exists(ctx.appId, role, tx)) throw roleExists(role);
          if ((await this.deps.roles.count(ctx.appId, tx)) >= LIMITS.rolesPerApp) {
            throw new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: LIMITS.rolesPerApp, what: 'roles per app' } });
          }
          return toRole(await this.deps.roles.create(ctx.appId, values, tx));
        },
        ctx.log,
      );
    } catch (error) {
      if (error instanceof UniqueViolation) throw roleExists(role);
      throw error;
    }
  }

  async list(ctx: RequestContext, page: PageRequest): Promise<{ data: Role[]; meta: PageMeta }> {
    const { rows, total } = await this.deps.roles.list(ctx.appId, page);
    return { data: rows.map(toRole), meta: pageMeta(page, total, rows.length) };
  }

  async get(ctx: RequestContext, rawRole: string): Promise<Role> {
    const role = normalizeId(rawRole);
    const row = await this.deps.roles.get(ctx.appId, role);
    if (!row) throw roleNotFound(role);
    return toRole(row);
  }

  async update(ctx: RequestContext, rawRole: string, input: UpdateRoleInput): Promise<Role> {
    const role = normalizeId(rawRole);
    const unset = new Set(input.unset ?? []);
    const changes: RoleChanges = {
      name: input.name,
      description: unset.has('description') ? null : input.description,
      metadataJson: unset.has('metadata') ? null : metadataJson(input.metadata),
      settingsJson: unset.has('settings') ? null : settingsJson(input.settings),
    };
    const row = await this.deps.roles.update(ctx.appId, role, changes);
    if (!row) throw roleNotFound(role);
    return toRole(row);
  }

  /** The default role cannot be deleted, nor a role that users hold. */
  async delete(ctx: RequestContext, rawRole: string): Promise<{ success: true; message: string }> {
    const role = normalizeId(rawRole);
    if (role === DEFAULT_ROLE) throw new AppError('ERR_ROLE_DELETE_DENIED');
    return withTransaction(
      this.deps.db,
      'delete_role',
      async (tx) => {
        if (!(await this.deps.roles.getForUpdate(ctx.appId, role, tx))) throw roleNotFound(role);
        const holders = await this.deps.roles.countHolders(ctx.appId, role, tx);
        if (holders > 0) throw new AppError('ERR_ROLE_DELETE_FAILED', { params: { role, count: holders } });
        await this.deps.roles.delete(ctx.appId, role, tx);
        return { success: true as const, message: `Role ${role} has been deleted successfully.` };
      },
      ctx.log,
    );
  }

  async restrictFeatures(ctx: RequestContext, rawRole: string, rawFeatures: string[]): Promise<FeatureResults> {
    const role = normalizeId(rawRole);
    const features = featureKeys(rawFeatures, 'featuresToRestrict');
    if (features.length === 0) throw badRequest({ featuresToRestrict: 'must name at least one feature' });
    return withTransaction(
      this.deps.db,
      'restrict_features',
      async (tx) => {
        if (!(await this.deps.roles.getForUpdate(ctx.appId, role, tx))) throw roleNotFound(role);
        await this.deps.roles.addFeatures(ctx.appId, role, features, tx);
        return Object.fromEntries(features.map((key) => [key, { success: true as const, message: `The feature ${key} has been restricted successfully.` }]));
      },
      ctx.log,
    );
  }

  async listRestrictedFeatures(ctx: RequestContext, rawRole: string): Promise<{ data: RestrictedFeature[]; meta: PageMeta }> {
    const role = normalizeId(rawRole);
    if (!(await this.deps.roles.exists(ctx.appId, role))) throw roleNotFound(role);
    const rows = await this.deps.roles.listFeatures(ctx.appId, role);
    const data = rows.flatMap((row) => {
      const feature = FEATURE_BY_KEY.get(row.feature);
      return feature ? [{ title: feature.title, description: feature.description, key: feature.key, path: feature.path, createdAt: toUnix(row.created_at) }] : [];
    });
    return { data, meta: pageMeta({ page: 1, perPage: LIMITS.perPageDefault }, data.length, data.length) };
  }

  /** Allows the given features again, or all of them with `allowAll`. */
  async allowFeatures(ctx: RequestContext, rawRole: string, input: { featuresToAllow?: string[]; allowAll?: boolean }): Promise<{ success: true; message: string }> {
    const role = normalizeId(rawRole);
    const features = input.allowAll ? undefined : featureKeys(input.featuresToAllow ?? [], 'featuresToAllow');
    if (features?.length === 0) throw badRequest({ featuresToAllow: 'must name at least one feature, unless allowAll is true' });
    if (!(await this.deps.roles.exists(ctx.appId, role))) throw roleNotFound(role);
    await this.deps.roles.removeFeatures(ctx.appId, role, features);
    return { success: true, message: 'The feature has been allowed successfully.' };
  }
}

/** Feature keys as sent (`listUsers` or `u.listUsers`), canonical and de-duplicated; unknown ones refused. */
function featureKeys(raw: string[], field: string): string[] {
  const unknown = raw.filter((key) => featureKey(key) === undefined);
  if (unknown.length > 0) throw badRequest({ [field]: `holds unknown features: ${unknown.join(', ')}` });
  return [...new Set(raw.map((key) => featureKey(key)!))];
}

function settingsJson(settings: RoleSettings | undefined): string | undefined {
  return settings === undefined ? undefined : JSON.stringify(settings);
}

export function roleNotFound(role: string): AppError {
  return new AppError('ERR_ROLE_NOT_FOUND', { params: { role } });
}

function roleExists(role: string): AppError {
  return new AppError('ERR_ROLE_ALREADY_EXISTS', { params: { role } });
}

function toRole(row: RoleRow): Role {
  const role: Role = { role: row.role, name: row.name, createdAt: toUnix(row.created_at) };
  if (row.description !== null) role.description = row.description;
  if (row.metadata !== null && row.metadata !== undefined) role.metadata = row.metadata as Record<string, unknown>;
  if (row.settings !== null && row.settings !== undefined) role.settings = row.settings as RoleSettings;
  const updatedAt = toUnixOrUndefined(row.updated_at);
  if (updatedAt !== undefined) role.updatedAt = updatedAt;
  return role;
}
