import type { Executor } from '../db/transaction.js';
import { extended } from '../domain/objects.js';
import type { RateLimitOverrides, RateLimits } from '../domain/rate-limits.js';
import type { AppRow, AppWithKey } from './app-rows.js';
import { CredentialCache } from './credential-cache.js';

export type { AppRow, AppWithKey } from './app-rows.js';

export class AppsRepository {
  constructor(
    private readonly db: Executor,
    private readonly credentials: CredentialCache = new CredentialCache(0),
  ) {}

  async create(appId: string, values: { name: string; region: string }, tx: Executor = this.db): Promise<AppRow> {
    // Requests for the app before it existed were refused and remembered (see CredentialCache).
    this.credentials.invalidate(appId);
    const row = await tx.insertInto('apps').values({ id: appId, name: values.name, region: values.region }).returningAll().executeTakeFirstOrThrow();
    this.credentials.invalidate(appId);
    return row;
  }

  /** Whether the pair was found to be one of the app's keys lately on this node (see CredentialCache.knownValid). */
  knownKey(appId: string, keyHash: string): boolean {
    return this.credentials.knownValid(appId, keyHash);
  }

  async get(appId: string, tx: Executor = this.db): Promise<AppRow | undefined> {
    return tx.selectFrom('apps').selectAll().where('id', '=', appId).executeTakeFirst();
  }

  /**
   * Locks the app's row until the transaction ends: per-app limits (API keys) are counted
   * under it, so concurrent creates cannot pass the limit together.
   */
  async lock(appId: string, tx: Executor): Promise<boolean> {
    const row = await tx.selectFrom('apps').select('id').where('id', '=', appId).forUpdate().executeTakeFirst();
    return row !== undefined;
  }

  async list(tx: Executor = this.db): Promise<AppRow[]> {
    return tx.selectFrom('apps').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  async count(tx: Executor = this.db): Promise<number> {
    const row = await tx
      .selectFrom('apps')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * The app, its own rate limits and, if the hash is one of its keys, that key: one round trip
   * per request, none while the pair is cached (see CredentialCache).
   */
  async getWithKey(appId: string, keyHash: string): Promise<AppWithKey | undefined> {
    return this.credentials.lookup(appId, keyHash, async () => {
      const row = await this.db
        .selectFrom('apps')
        .leftJoin('api_keys', (join) => join.onRef('api_keys.app_id', '=', 'apps.id').on('api_keys.key_hash', '=', keyHash))
        .leftJoin('app_rate_limits as l', 'l.app_id', 'apps.id')
        .select(['apps.id', 'apps.name', 'apps.region', 'apps.created_at', 'api_keys.key_hash', 'api_keys.scope'])
        .select(['l.app_id as limits_app_id', 'l.core', 'l.standard', 'l.import', 'l.send_per_user', 'l.unread_per_user'])
        .where('apps.id', '=', appId)
        .executeTakeFirst();
      if (!row) return undefined;
      const { id, name, region, created_at, key_hash, scope } = row;
      return {
        app: { id, name, region, created_at },
        key: key_hash && scope ? { key_hash, scope } : undefined,
        limits: row.limits_app_id === null ? undefined : overridesOf(row),
      };
    });
  }

  /** The app's own rate limits; undefined when it has none. */
  async getRateLimits(appId: string, tx: Executor = this.db): Promise<RateLimitOverrides | undefined> {
    const row = await tx.selectFrom('app_rate_limits').select(['core', 'standard', 'import', 'send_per_user', 'unread_per_user']).where('app_id', '=', appId).executeTakeFirst();
    return row && overridesOf(row);
  }

  /**
   * Sets the given classes of the app's own limits (the others stay as they are) and forgets the
   * app's cached credentials, so this node applies them to its next request; other nodes do
   * within the cache's lifetime.
   */
  async setRateLimits(appId: string, limits: Partial<RateLimits>, tx: Executor = this.db): Promise<RateLimitOverrides> {
    this.credentials.invalidate(appId);
    // Column by column, from the classes the service checked.
    const set: { core?: number; standard?: number; import?: number; send_per_user?: number; unread_per_user?: number; updated_at: Date } = { updated_at: new Date() };
    if (limits.core !== undefined) set.core = limits.core;
    if (limits.standard !== undefined) set.standard = limits.standard;
    if (limits.import !== undefined) set.import = limits.import;
    if (limits.send_per_user !== undefined) set.send_per_user = limits.send_per_user;
    if (limits.unread_per_user !== undefined) set.unread_per_user = limits.unread_per_user;
    const row = await tx
      .insertInto('app_rate_limits')
      .values(extended(set, { app_id: appId }))
      .onConflict((oc) => oc.column('app_id').doUpdateSet(set))
      .returning(['core', 'standard', 'import', 'send_per_user', 'unread_per_user'])
      .executeTakeFirstOrThrow();
    // Again, in case a request cached the old limits while the write ran.
    this.credentials.invalidate(appId);
    return overridesOf(row);
  }

  /** Removes the app's own limits: the deployment's apply again. */
  async deleteRateLimits(appId: string, tx: Executor = this.db): Promise<void> {
    this.credentials.invalidate(appId);
    await tx.deleteFrom('app_rate_limits').where('app_id', '=', appId).execute();
    this.credentials.invalidate(appId);
  }
}

function overridesOf(row: RateLimitOverrides): RateLimitOverrides {
  return { core: row.core, standard: row.standard, import: row.import, send_per_user: row.send_per_user, unread_per_user: row.unread_per_user };
}
