import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { withTransaction, type Executor } from '../db/transaction.js';
import type { ApiKeyScope, RequestContext } from '../domain/context.js';
import { AppError } from '../domain/errors.js';
import { LIMITS } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import { pageMeta, type PageMeta } from '../domain/pagination.js';
import { isMasked, maskSecret, newApiKey, sha256Hex } from '../domain/secrets.js';
import { toUnix, toUnixOrUndefined } from '../domain/time.js';
import type { ApiKeyRef, ApiKeyRow, ApiKeysRepository } from '../repositories/api-keys.repository.js';
import type { AppsRepository } from '../repositories/apps.repository.js';

export interface ApiKey {
  /** The plain key right after creation; its masked form everywhere else. */
  apiKey: string;
  name: string;
  scope: ApiKeyScope;
  createdAt: number;
  updatedAt?: number;
}

export class ApiKeysService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      apiKeys: ApiKeysRepository;
      apps: AppsRepository;
    },
  ) {}

  async create(ctx: RequestContext, input: { name: string; scope: ApiKeyScope }): Promise<ApiKey> {
    return withTransaction(
      this.deps.db,
      'create_api_key',
      async (tx) => {
        await this.deps.apps.lock(ctx.appId, tx);
        if ((await this.deps.apiKeys.count(ctx.appId, tx)) >= LIMITS.apiKeysPerApp) {
          throw new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: LIMITS.apiKeysPerApp, what: 'API keys per app' } });
        }
        return this.insert(ctx.appId, input, tx);
      },
      ctx.log,
    );
  }

  /**
   * Inserts a new random key and returns it in plain text (the only time it is shown). Used
   * by app creation too, inside its transaction.
   */
  async insert(appId: string, input: { name: string; scope: ApiKeyScope }, tx: Executor): Promise<ApiKey> {
    for (;;) {
      const key = newApiKey();
      // Field by field: a request body may hold more fields than its type names, and none but
      // the name and the scope may reach the row (a body's keyHash would choose the key).
      const row = await this.deps.apiKeys.create(appId, { keyHash: sha256Hex(key), keyHint: maskSecret(key), name: input.name, scope: input.scope }, tx);
      // No row: another key of the app shares this one's hint; draw again.
      if (row) return extended(toApiKey(row), { apiKey: key });
    }
  }

  async list(ctx: RequestContext, filter: { scope?: ApiKeyScope; searchKey?: string }): Promise<{ data: ApiKey[]; meta: PageMeta }> {
    const rows = await this.deps.apiKeys.list(ctx.appId, { scope: filter.scope, nameContains: filter.searchKey });
    return { data: rows.map(toApiKey), meta: pageMeta({ page: 1, perPage: LIMITS.perPageDefault }, rows.length, rows.length) };
  }

  async get(ctx: RequestContext, key: string): Promise<ApiKey> {
    return toApiKey(await this.find(ctx, key));
  }

  async update(ctx: RequestContext, key: string, changes: { name?: string; scope?: ApiKeyScope }): Promise<ApiKey> {
    const row = await this.find(ctx, key);
    assertNotSelf(ctx, row);
    const updated = await this.deps.apiKeys.update(ctx.appId, row.key_hash, { name: changes.name, scope: changes.scope });
    if (!updated) throw notFound(key);
    return toApiKey(updated);
  }

  async delete(ctx: RequestContext, key: string): Promise<{ success: true; message: string }> {
    const row = await this.find(ctx, key);
    assertNotSelf(ctx, row);
    if (!(await this.deps.apiKeys.delete(ctx.appId, row.key_hash))) throw notFound(key);
    return { success: true, message: `The Api Key ${key} has been deleted successfully.` };
  }

  /** A key is named by its plain value or by the masked form that listings show. */
  private async find(ctx: RequestContext, key: string): Promise<ApiKeyRow> {
    const row = await this.deps.apiKeys.get(ctx.appId, apiKeyRef(key));
    if (!row) throw notFound(key);
    return row;
  }
}

export function apiKeyRef(key: string): ApiKeyRef {
  return isMasked(key) ? { keyHint: key } : { keyHash: sha256Hex(key) };
}

function assertNotSelf(ctx: RequestContext, row: ApiKeyRow): void {
  if (ctx.credential?.keyHash === row.key_hash) throw new AppError('ERR_APIKEY_NO_SELF_ACTION');
}

function notFound(key: string): AppError {
  return new AppError('ERR_APIKEY_NOT_FOUND', { params: { apiKey: key } });
}

function toApiKey(row: ApiKeyRow): ApiKey {
  const key: ApiKey = { apiKey: row.key_hint, name: row.name, scope: row.scope, createdAt: toUnix(row.created_at) };
  const updatedAt = toUnixOrUndefined(row.updated_at);
  if (updatedAt !== undefined) key.updatedAt = updatedAt;
  return key;
}
