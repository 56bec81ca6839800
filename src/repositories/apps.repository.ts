import type { Selectable } from 'kysely';
import { translated } from '../db/driver-errors.js';
import type { AppsTable, ApiKeysTable } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { CredentialCache } from './credential-cache.js';

export type AppRow = Selectable<AppsTable>;

export interface AppWithKey {
  app: AppRow;
  /** The key's scope, when the key hash belongs to the app. */
  key: Pick<Selectable<ApiKeysTable>, 'key_hash' | 'scope'> | undefined;
}

export class AppsRepository {
  constructor(
    private readonly db: Executor,
    private readonly credentials: CredentialCache = new CredentialCache(0),
  ) {}

  async create(appId: string, values: { name: string; region: string }, tx: Executor = this.db): Promise<AppRow> {
    return translated(() =>
      tx
        .insertInto('apps')
        .values({ id: appId, name: values.name, region: values.region })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
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
    const row = await tx.selectFrom('apps').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * The app and, if the hash is one of its keys, that key: one round trip per request, none
   * while the pair is cached (see CredentialCache).
   */
  async getWithKey(appId: string, keyHash: string): Promise<AppWithKey | undefined> {
    return this.credentials.lookup(appId, keyHash, async () => {
      const row = await this.db
        .selectFrom('apps')
        .leftJoin('api_keys', (join) =>
          join.onRef('api_keys.app_id', '=', 'apps.id').on('api_keys.key_hash', '=', keyHash),
        )
        .select(['apps.id', 'apps.name', 'apps.region', 'apps.created_at', 'api_keys.key_hash', 'api_keys.scope'])
        .where('apps.id', '=', appId)
        .executeTakeFirst();
      if (!row) return undefined;
      const { key_hash, scope, ...app } = row;
      return { app, key: key_hash && scope ? { key_hash, scope } : undefined };
    });
  }
}
