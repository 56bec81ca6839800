import type { Selectable } from 'kysely';
import type { ManagementKeysTable } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { digestsEqual } from '../domain/secrets.js';
import { RefusalCache } from './credential-cache.js';

export type ManagementKeyRow = Selectable<ManagementKeysTable>;

/** The deployment's management credentials (docs/management-api.md): not rows of any app. */
export class ManagementKeysRepository {
  constructor(
    private readonly db: Executor,
    /**
     * Pairs of key and secret digest refused lately: sent again, they are refused without a
     * query. Accepted pairs are never cached, so a revoked credential is refused at once on
     * every node; a revocation only turns acceptances into refusals, so no refusal goes stale
     * but by a create, which forgets the key's.
     */
    private readonly refusals = new RefusalCache<true>(),
  ) {}

  /** Inserts a credential; undefined when the key is taken (the caller draws another). */
  async create(values: { key: string; secretHash: string; name: string }, tx: Executor = this.db): Promise<ManagementKeyRow | undefined> {
    const pairs = { prefix: `${values.key}\u0000` };
    this.refusals.forget(pairs);
    const row = await tx
      .insertInto('management_keys')
      .values({ key: values.key, secret_hash: values.secretHash, name: values.name })
      .onConflict((oc) => oc.column('key').doNothing())
      .returningAll()
      .executeTakeFirst();
    this.refusals.forget(pairs);
    return row;
  }

  /** Whether `key` is a credential whose secret has the digest `secretHash`: one query, none for a pair refused lately. */
  async matches(key: string, secretHash: string): Promise<boolean> {
    const pair = `${key}\u0000${secretHash}`;
    if (this.refusals.get(pair) !== undefined) return false;
    const generation = this.refusals.generation;
    const row = await this.get(key);
    if (row !== undefined && digestsEqual(row.secret_hash, secretHash)) return true;
    this.refusals.add(pair, true, generation);
    return false;
  }

  async get(key: string, tx: Executor = this.db): Promise<ManagementKeyRow | undefined> {
    return tx.selectFrom('management_keys').selectAll().where('key', '=', key).executeTakeFirst();
  }

  async list(tx: Executor = this.db): Promise<ManagementKeyRow[]> {
    return tx.selectFrom('management_keys').selectAll().orderBy('created_at').orderBy('key').execute();
  }

  async count(tx: Executor = this.db): Promise<number> {
    const row = await tx
      .selectFrom('management_keys')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async delete(key: string, tx: Executor = this.db): Promise<boolean> {
    const result = await tx.deleteFrom('management_keys').where('key', '=', key).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
