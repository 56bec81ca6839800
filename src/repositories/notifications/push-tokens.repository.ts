import { sql } from 'kysely';
import type { NotificationPushTokensTable } from '../../db/notification-tokens-tables.js';
import type { Executor } from '../../db/transaction.js';
import { providerKindOf, tokenTypeOf, type PushPlatform, type PushTarget } from '../../domain/notifications/push-tokens.js';
import { anyOf } from '../sql-helpers.js';

/** A push token with the masked form of the auth token it was registered with. */
export interface PushTokenRow {
  token: string;
  platform: PushPlatform;
  provider_id: string | null;
  uid: string;
  auth_token_hash: string;
  /** The auth token's masked form (auth_tokens.token_hint). */
  auth_token_hint: string;
  timezone: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The auth token a request names, found by its hash, and whether its user is active. */
export interface AuthTokenOwner {
  uid: string;
  tokenHash: string;
  tokenHint: string;
  active: boolean;
}

export interface NewPushToken {
  token: string;
  platform: PushPlatform;
  providerId: string | null;
  timezone: string | null;
}

/** Which of a user's tokens: those registered with one auth token, or all of the user's. */
export type PushTokenScope = { authTokenHash: string } | { uid: string };

/**
 * Push tokens (migration 0023): registered for a user through an auth token, one row per
 * (app, token), gone with their auth token (the foreign key's cascade); and the delivery
 * engine's reads and clean-up.
 */
export class PushTokensRepository {
  constructor(private readonly db: Executor) {}

  /**
   * The auth token whose hash this is (an auth token is stored hashed: auth-tokens.repository.ts),
   * with its user's state.
   */
  async authTokenOwner(appId: string, tokenHash: string, tx: Executor = this.db): Promise<AuthTokenOwner | undefined> {
    const row = await tx
      .selectFrom('auth_tokens as a')
      .innerJoin('users as u', (join) => join.onRef('u.app_id', '=', 'a.app_id').onRef('u.uid', '=', 'a.uid'))
      .select(['a.uid', 'a.token_hash', 'a.token_hint', 'u.deactivated_at'])
      .where('a.app_id', '=', appId)
      .where('a.token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row && { uid: row.uid, tokenHash: row.token_hash, tokenHint: row.token_hint, active: row.deactivated_at === null };
  }

  /**
   * Registers a token for the active user of the auth token `authTokenHash`, in one statement:
   * a token already registered (by anyone in the app) moves to this user and auth token, and
   * keeps its createdAt when it stays with the same user. Answers the user, or undefined when
   * the auth token is unknown or its user deactivated. Concurrent registrations of one token
   * end with one row (the primary key's upsert); the last one wins.
   */
  async upsert(appId: string, authTokenHash: string, values: NewPushToken, tx: Executor = this.db): Promise<{ uid: string } | undefined> {
    const result = await sql<{ uid: string }>`
      insert into notification_push_tokens as p (app_id, token, platform, provider_id, uid, auth_token_hash, timezone)
      select a.app_id, ${values.token}, ${values.platform}, ${values.providerId}, a.uid, a.token_hash, ${values.timezone}
      from auth_tokens a join users u on u.app_id = a.app_id and u.uid = a.uid
      where a.app_id = ${appId} and a.token_hash = ${authTokenHash} and u.deactivated_at is null
      on conflict (app_id, token) do update set
        platform = excluded.platform, provider_id = excluded.provider_id, auth_token_hash = excluded.auth_token_hash,
        timezone = excluded.timezone, uid = excluded.uid,
        created_at = case when p.uid = excluded.uid then p.created_at else excluded.created_at end,
        updated_at = excluded.updated_at
      returning p.uid`.execute(tx);
    return result.rows[0];
  }

  /** Keeps the user's `keep` most recently registered tokens and deletes the rest; answers how many went. */
  async pruneOldest(appId: string, uid: string, keep: number, tx: Executor = this.db): Promise<number> {
    const result = await sql`
      delete from notification_push_tokens p
      where p.app_id = ${appId} and p.uid = ${uid} and p.token in (
        select o.token from notification_push_tokens o
        where o.app_id = ${appId} and o.uid = ${uid}
        order by o.updated_at desc, o.token desc
        offset ${keep})`.execute(tx);
    return Number(result.numAffectedRows ?? 0);
  }

  /** The tokens of an auth token, or of a user, most recently registered first. */
  async list(appId: string, scope: PushTokenScope, tx: Executor = this.db): Promise<PushTokenRow[]> {
    let query = tx
      .selectFrom('notification_push_tokens as p')
      .innerJoin('auth_tokens as a', (join) => join.onRef('a.app_id', '=', 'p.app_id').onRef('a.token_hash', '=', 'p.auth_token_hash'))
      .select(['p.token', 'p.platform', 'p.provider_id', 'p.uid', 'p.auth_token_hash', 'a.token_hint as auth_token_hint', 'p.timezone', 'p.created_at', 'p.updated_at'])
      .where('p.app_id', '=', appId);
    query = 'uid' in scope ? query.where('p.uid', '=', scope.uid) : query.where('p.auth_token_hash', '=', scope.authTokenHash);
    const rows = await query.orderBy('p.updated_at', 'desc').orderBy('p.token', 'desc').execute();
    return rows.map(pushTokenRow);
  }

  /**
   * Deletes the tokens of an auth token or a user (only `token` of them, when given), and answers
   * them as they were.
   */
  async delete(appId: string, scope: PushTokenScope, token?: string, tx: Executor = this.db): Promise<PushTokenRow[]> {
    const owned = 'uid' in scope ? sql`p.uid = ${scope.uid}` : sql`p.auth_token_hash = ${scope.authTokenHash}`;
    const one = token === undefined ? sql`` : sql` and p.token = ${token}`;
    const result = await sql<Omit<PushTokenRow, 'platform'> & { platform: string }>`
      delete from notification_push_tokens p using auth_tokens a
      where p.app_id = ${appId} and ${owned}${one} and a.app_id = p.app_id and a.token_hash = p.auth_token_hash
      returning p.token, p.platform, p.provider_id, p.uid, p.auth_token_hash, a.token_hint as auth_token_hint,
                p.timezone, p.created_at, p.updated_at`.execute(tx);
    return result.rows.map(pushTokenRow).sort((x, y) => y.updated_at.getTime() - x.updated_at.getTime() || (x.token < y.token ? 1 : -1));
  }

  /**
   * The delivery engine's read: the tokens of these users (active ones only: a deactivated
   * user is not notified), by uid, most recently registered first. Users with none are absent.
   */
  async tokensOf(appId: string, uids: readonly string[], tx: Executor = this.db): Promise<Map<string, PushTarget[]>> {
    const targets = new Map<string, PushTarget[]>();
    if (uids.length === 0) return targets;
    const rows = await tx
      .selectFrom('notification_push_tokens as p')
      .innerJoin('users as u', (join) => join.onRef('u.app_id', '=', 'p.app_id').onRef('u.uid', '=', 'p.uid'))
      .select(['p.uid', 'p.token', 'p.platform', 'p.provider_id', 'p.updated_at'])
      .where('p.app_id', '=', appId)
      .where('p.uid', '=', anyOf([...new Set(uids)]))
      .where('u.deactivated_at', 'is', null)
      .orderBy('p.uid')
      .orderBy('p.updated_at', 'desc')
      .orderBy('p.token', 'desc')
      .execute();
    for (const row of rows) {
      const platform = row.platform as PushPlatform;
      const list = targets.get(row.uid) ?? [];
      list.push({ token: row.token, platform, kind: providerKindOf(platform), tokenType: tokenTypeOf(platform), providerId: row.provider_id, updatedAt: row.updated_at });
      if (list.length === 1) targets.set(row.uid, list);
    }
    return targets;
  }

  /**
   * Deletes a token a provider answered is no longer registered (the delivery engine's clean-up),
   * whoever holds it. With `notUpdatedSince`, only if it has not been registered again since
   * (a registration after the send began is left alone). Answers whether it went.
   */
  async removeInvalid(appId: string, token: string, notUpdatedSince?: Date, tx: Executor = this.db): Promise<boolean> {
    let query = tx.deleteFrom('notification_push_tokens').where('app_id', '=', appId).where('token', '=', token);
    if (notUpdatedSince !== undefined) query = query.where('updated_at', '<=', notUpdatedSince);
    const result = await query.executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}

function pushTokenRow(row: Omit<PushTokenRow, 'platform'> & { platform: NotificationPushTokensTable['platform'] }): PushTokenRow {
  return {
    token: row.token,
    platform: row.platform as PushPlatform,
    provider_id: row.provider_id,
    uid: row.uid,
    auth_token_hash: row.auth_token_hash,
    auth_token_hint: row.auth_token_hint,
    timezone: row.timezone,
    created_at: new Date(row.created_at),
    updated_at: new Date(row.updated_at),
  };
}
