import { sql, type Selectable } from 'kysely';
import type { AuthTokensTable } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { pageOffset, type PageRequest } from '../domain/pagination.js';
import { CredentialCache } from './credential-cache.js';

export type AuthTokenRow = Selectable<AuthTokensTable>;

/** A token is named by its hash (the plain token, hashed) or by its hint (the masked form). */
export type AuthTokenRef = { tokenHash: string } | { tokenHint: string };

/** Whose token a hash is, and whether that user is active (a client authenticating by it). */
export interface AuthTokenOwner {
  uid: string;
  active: boolean;
}

/**
 * The cache of token lookups (see CredentialCache): a token of an active user is a hit, an
 * unknown token or one of a deactivated user a refusal. Made by the composition root.
 */
export function authTokenCache(ttlMs: number, maxEntries = 10_000): CredentialCache<AuthTokenOwner> {
  return new CredentialCache<AuthTokenOwner>(ttlMs, maxEntries, (owner) => owner.active);
}

export class AuthTokensRepository {
  constructor(
    private readonly db: Executor,
    /** Lookups by hash (findByHash), forgotten here when a token is deleted; none cached by default. */
    private readonly owners: CredentialCache<AuthTokenOwner> = authTokenCache(0),
  ) {}

  /** Inserts a token; undefined when the user already has a token with the same hint. */
  async create(appId: string, values: { uid: string; tokenHash: string; tokenHint: string }, tx: Executor = this.db): Promise<AuthTokenRow | undefined> {
    return tx
      .insertInto('auth_tokens')
      .values({ app_id: appId, uid: values.uid, token_hash: values.tokenHash, token_hint: values.tokenHint })
      .onConflict((oc) => oc.columns(['app_id', 'uid', 'token_hint']).doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  async get(appId: string, uid: string, ref: AuthTokenRef, tx: Executor = this.db): Promise<AuthTokenRow | undefined> {
    let query = tx.selectFrom('auth_tokens').selectAll().where('app_id', '=', appId).where('uid', '=', uid);
    query = 'tokenHash' in ref ? query.where('token_hash', '=', ref.tokenHash) : query.where('token_hint', '=', ref.tokenHint);
    return query.executeTakeFirst();
  }

  /**
   * The token with this hash, whoever's it is, with whether its user is active (a client
   * authenticating by it): one round trip, none while the pair is cached (see CredentialCache).
   */
  async findByHash(appId: string, tokenHash: string): Promise<AuthTokenOwner | undefined> {
    return this.owners.lookup(appId, tokenHash, () =>
      this.db
        .selectFrom('auth_tokens as t')
        .innerJoin('users as u', (join) => join.onRef('u.app_id', '=', 't.app_id').onRef('u.uid', '=', 't.uid'))
        .select(['t.uid', sql<boolean>`u.deactivated_at is null`.as('active')])
        .where('t.app_id', '=', appId)
        .where('t.token_hash', '=', tokenHash)
        .executeTakeFirst(),
    );
  }

  /** Whether the token was found valid lately on this node (see CredentialCache.knownValid). */
  knownValid(appId: string, tokenHash: string): boolean {
    return this.owners.knownValid(appId, tokenHash);
  }

  /** A user's tokens, newest first. */
  async list(appId: string, uid: string, page: PageRequest, tx: Executor = this.db): Promise<{ rows: AuthTokenRow[]; total: number }> {
    const base = tx.selectFrom('auth_tokens').where('app_id', '=', appId).where('uid', '=', uid);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('created_at', 'desc').orderBy('token_hint', 'desc').limit(page.perPage).offset(pageOffset(page)).execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  async update(appId: string, tokenHash: string, values: { platform?: string; userAgent?: string; appInfoJson?: string }, tx: Executor = this.db): Promise<AuthTokenRow | undefined> {
    const set: Record<string, unknown> = { updated_at: new Date() };
    if (values.platform !== undefined) set.platform = values.platform;
    if (values.userAgent !== undefined) set.user_agent = values.userAgent;
    if (values.appInfoJson !== undefined) set.app_info = values.appInfoJson;
    return tx.updateTable('auth_tokens').set(set).where('app_id', '=', appId).where('token_hash', '=', tokenHash).returningAll().executeTakeFirst();
  }

  async delete(appId: string, tokenHash: string, tx: Executor = this.db): Promise<boolean> {
    const result = await tx.deleteFrom('auth_tokens').where('app_id', '=', appId).where('token_hash', '=', tokenHash).executeTakeFirst();
    this.owners.invalidate(appId, tokenHash);
    return result.numDeletedRows > 0n;
  }

  async deleteAllOf(appId: string, uid: string, tx: Executor = this.db): Promise<number> {
    const rows = await tx.deleteFrom('auth_tokens').where('app_id', '=', appId).where('uid', '=', uid).returning('token_hash').execute();
    for (const row of rows) this.owners.invalidate(appId, row.token_hash);
    return rows.length;
  }

  /** Keeps a user's newest `keep` tokens and deletes the rest (the vendor's rolling limit). */
  async pruneOldest(appId: string, uid: string, keep: number, tx: Executor = this.db): Promise<void> {
    const stale = tx.selectFrom('auth_tokens').select('token_hash').where('app_id', '=', appId).where('uid', '=', uid).orderBy('created_at', 'desc').orderBy('token_hint', 'desc').offset(keep);
    const pruned = await tx.deleteFrom('auth_tokens').where('app_id', '=', appId).where('uid', '=', uid).where('token_hash', 'in', stale).returning('token_hash').execute();
    for (const row of pruned) this.owners.invalidate(appId, row.token_hash);
  }
}
