import type { Selectable } from 'kysely';
import type { ApiKeysTable } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import type { CredentialCache } from './credential-cache.js';
import { escapeLike } from './sql-helpers.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

/** A key is named by its hash (the plain key, hashed) or by its hint (the masked form). */
export type ApiKeyRef = { keyHash: string } | { keyHint: string };

export interface ApiKeyFilter {
  scope?: 'fullAccess' | 'authOnly';
  /** Case-insensitive substring of the name. */
  nameContains?: string;
}

export class ApiKeysRepository {
  constructor(
    private readonly db: Executor,
    /** Key lookups cached for authentication, forgotten here when a key changes. */
    private readonly credentials?: CredentialCache,
  ) {}

  /**
   * Inserts a key. Returns undefined, without aborting the transaction, when another key of
   * the app already has the same hint, so the caller can draw a new key.
   */
  async create(appId: string, values: { keyHash: string; keyHint: string; name: string; scope: ApiKeyRow['scope'] }, tx: Executor = this.db): Promise<ApiKeyRow | undefined> {
    // The key may have been sent, and its refusal remembered, before it existed (see CredentialCache).
    this.credentials?.invalidate(appId, values.keyHash);
    const row = await tx
      .insertInto('api_keys')
      .values({ app_id: appId, key_hash: values.keyHash, key_hint: values.keyHint, name: values.name, scope: values.scope })
      .onConflict((oc) => oc.columns(['app_id', 'key_hint']).doNothing())
      .returningAll()
      .executeTakeFirst();
    this.credentials?.invalidate(appId, values.keyHash);
    return row;
  }

  async get(appId: string, ref: ApiKeyRef, tx: Executor = this.db): Promise<ApiKeyRow | undefined> {
    let query = tx.selectFrom('api_keys').selectAll().where('app_id', '=', appId);
    query = 'keyHash' in ref ? query.where('key_hash', '=', ref.keyHash) : query.where('key_hint', '=', ref.keyHint);
    return query.executeTakeFirst();
  }

  async list(appId: string, filter: ApiKeyFilter = {}, tx: Executor = this.db): Promise<ApiKeyRow[]> {
    let query = tx.selectFrom('api_keys').selectAll().where('app_id', '=', appId);
    if (filter.scope) query = query.where('scope', '=', filter.scope);
    if (filter.nameContains) query = query.where('name', 'ilike', `%${escapeLike(filter.nameContains)}%`);
    return query.orderBy('created_at', 'desc').orderBy('key_hint').execute();
  }

  async count(appId: string, tx: Executor = this.db): Promise<number> {
    const row = await tx
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', appId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async update(appId: string, keyHash: string, values: { name?: string; scope?: ApiKeyRow['scope'] }, tx: Executor = this.db): Promise<ApiKeyRow | undefined> {
    // Column by column: only the name and the scope of a key ever change (its app, hash and
    // hint never do).
    const set: { name?: string; scope?: ApiKeyRow['scope']; updated_at: Date } = { updated_at: new Date() };
    if (values.name !== undefined) set.name = values.name;
    if (values.scope !== undefined) set.scope = values.scope;
    this.credentials?.invalidate(appId, keyHash);
    const row = await tx.updateTable('api_keys').set(set).where('app_id', '=', appId).where('key_hash', '=', keyHash).returningAll().executeTakeFirst();
    // Again, in case a request cached the old key while the update ran.
    this.credentials?.invalidate(appId, keyHash);
    return row;
  }

  async delete(appId: string, keyHash: string, tx: Executor = this.db): Promise<boolean> {
    this.credentials?.invalidate(appId, keyHash);
    const result = await tx.deleteFrom('api_keys').where('app_id', '=', appId).where('key_hash', '=', keyHash).executeTakeFirst();
    this.credentials?.invalidate(appId, keyHash);
    return result.numDeletedRows > 0n;
  }
}
