import type { Kysely } from 'kysely';
import { ForeignKeyViolation } from '../db/driver-errors.js';
import type { DB } from '../db/schema.js';
import { withTransaction, type Executor } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { AppError } from '../domain/errors.js';
import { LIMITS, metadataJson, normalizeId } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import { pageMeta, type PageMeta, type PageRequest } from '../domain/pagination.js';
import { isMasked, maskAuthToken, newAuthToken, sha256Hex } from '../domain/secrets.js';
import { toUnix, toUnixOrUndefined } from '../domain/time.js';
import type { AuthTokenRef, AuthTokenRow, AuthTokensRepository } from '../repositories/auth-tokens.repository.js';
import type { UsersRepository } from '../repositories/users.repository.js';
import type { Revocations } from './gateway/revocations.js';

export interface AuthToken {
  uid: string;
  /** The plain token right after creation; its masked form everywhere else. */
  authToken: string;
  createdAt: number;
  updatedAt?: number;
  platform?: string;
  userAgent?: string;
  appInfo?: Record<string, unknown>;
}

export class AuthTokensService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      authTokens: AuthTokensRepository;
      users: UsersRepository;
      /** Told of tokens taken away (the gateway closes their connections: services/gateway/revocations.ts). */
      revocations?: Revocations;
    },
  ) {}

  /**
   * Issues a new token. Tokens are stored hashed, so an existing token can never be handed out
   * again: every call (with or without `force`) issues a new one.
   */
  async create(ctx: RequestContext, rawUid: string): Promise<AuthToken> {
    const uid = normalizeId(rawUid);
    const created = await withTransaction(
      this.deps.db,
      'create_auth_token',
      async (tx) => {
        if (!(await this.deps.users.getActive(ctx.appId, uid, tx))) throw uidNotFound(uid);
        return this.issue(ctx, uid, tx);
      },
      ctx.log,
    );
    // A new token may have pruned the user's oldest.
    this.deps.revocations?.revoked(ctx.appId, [uid]);
    return created;
  }

  /** Issues a token for an existing user inside the caller's transaction. */
  async issue(ctx: RequestContext, uid: string, tx: Executor): Promise<AuthToken> {
    for (;;) {
      const token = newAuthToken(uid, new Date());
      let row: AuthTokenRow | undefined;
      try {
        row = await this.deps.authTokens.create(ctx.appId, { uid, tokenHash: sha256Hex(token), tokenHint: maskAuthToken(token, uid) }, tx);
      } catch (error) {
        if (error instanceof ForeignKeyViolation) throw uidNotFound(uid);
        throw error;
      }
      if (!row) continue; // the user already has a token with this hint: draw again
      await this.deps.authTokens.pruneOldest(ctx.appId, uid, LIMITS.authTokensPerUser, tx);
      return extended(toAuthToken(row), { authToken: token });
    }
  }

  /**
   * The user a client acts as (docs/realtime.md): the active user whose token this is, for the
   * authToken header and a socket's auth frame alike. A missing token answers
   * AUTH_ERR_EMPTY_AUTH_TOKEN; a token of no user of the app, or of a deactivated one,
   * AUTH_ERR_AUTH_TOKEN_NOT_FOUND. `tokenHash` names the token for its revocation.
   * Lookups are cached briefly (authTokenCache, container.ts); a delete or flush on this node,
   * or its user's deactivation, is seen at once. `beforeLookup` runs first unless the token was
   * found valid lately on this node (it may refuse: the caller's limit on failed
   * authentications, as AppsService.authenticate's).
   */
  async authenticate(ctx: RequestContext, token: string | undefined, beforeLookup?: () => Promise<void>): Promise<{ uid: string; tokenHash: string }> {
    if (token === undefined || token.trim() === '') throw new AppError('AUTH_ERR_EMPTY_AUTH_TOKEN');
    const tokenHash = sha256Hex(token.trim());
    if (beforeLookup !== undefined && !this.deps.authTokens.knownValid(ctx.appId, tokenHash)) await beforeLookup();
    const found = await this.deps.authTokens.findByHash(ctx.appId, tokenHash);
    if (!found?.active) throw new AppError('AUTH_ERR_AUTH_TOKEN_NOT_FOUND');
    return { uid: found.uid, tokenHash };
  }

  async list(ctx: RequestContext, rawUid: string, page: PageRequest): Promise<{ data: AuthToken[]; meta: PageMeta }> {
    const uid = await this.requireUser(ctx, rawUid);
    const { rows, total } = await this.deps.authTokens.list(ctx.appId, uid, page);
    return { data: rows.map(toAuthToken), meta: pageMeta(page, total, rows.length) };
  }

  async get(ctx: RequestContext, rawUid: string, token: string): Promise<AuthToken> {
    const uid = await this.requireUser(ctx, rawUid);
    return toAuthToken(await this.find(ctx, uid, token));
  }

  async update(ctx: RequestContext, rawUid: string, token: string, changes: { platform?: string; userAgent?: string; appInfo?: Record<string, unknown> }): Promise<AuthToken> {
    const uid = await this.requireUser(ctx, rawUid);
    const row = await this.find(ctx, uid, token);
    const updated = await this.describe(ctx, row.token_hash, changes);
    if (!updated) throw tokenNotFound(uid, token);
    return updated;
  }

  /**
   * What a token's device says of itself (update-authtoken, and the client's PUT /v3/me):
   * its platform, user agent and app info. Undefined when the token is gone.
   */
  async describe(ctx: RequestContext, tokenHash: string, changes: { platform?: string; userAgent?: string; appInfo?: Record<string, unknown> }): Promise<AuthToken | undefined> {
    const appInfoJson = metadataJson(changes.appInfo, 'appInfo') ?? undefined;
    const updated = await this.deps.authTokens.update(ctx.appId, tokenHash, {
      platform: changes.platform,
      userAgent: changes.userAgent,
      appInfoJson,
    });
    return updated && toAuthToken(updated);
  }

  async delete(ctx: RequestContext, rawUid: string, token: string): Promise<{ success: true; message: string }> {
    const uid = await this.requireUser(ctx, rawUid);
    const row = await this.find(ctx, uid, token);
    if (!(await this.deps.authTokens.delete(ctx.appId, row.token_hash))) throw tokenNotFound(uid, token);
    this.deps.revocations?.revoked(ctx.appId, [uid]);
    return { success: true, message: `Auth token ${token} of uid ${uid} has been deleted successfully.` };
  }

  async flush(ctx: RequestContext, rawUid: string): Promise<{ success: true; message: string }> {
    const uid = await this.requireUser(ctx, rawUid);
    await this.deps.authTokens.deleteAllOf(ctx.appId, uid);
    this.deps.revocations?.revoked(ctx.appId, [uid]);
    return { success: true, message: `Cleared Auth Tokens successfully for uid ${uid}.` };
  }

  private async requireUser(ctx: RequestContext, rawUid: string): Promise<string> {
    const uid = normalizeId(rawUid);
    if (!(await this.deps.users.get(ctx.appId, uid))) throw uidNotFound(uid);
    return uid;
  }

  /** A token is named by its plain value or by the masked form that listings show. */
  private async find(ctx: RequestContext, uid: string, token: string): Promise<AuthTokenRow> {
    const ref: AuthTokenRef = isMasked(token) ? { tokenHint: token } : { tokenHash: sha256Hex(token) };
    const row = await this.deps.authTokens.get(ctx.appId, uid, ref);
    if (!row) throw tokenNotFound(uid, token);
    return row;
  }
}

function uidNotFound(uid: string): AppError {
  return new AppError('ERR_UID_NOT_FOUND', { params: { uid } });
}

function tokenNotFound(uid: string, token: string): AppError {
  return new AppError('ERR_AUTH_TOKEN_NOT_FOUND', { params: { uid, authToken: token } });
}

function toAuthToken(row: AuthTokenRow): AuthToken {
  const token: AuthToken = { uid: row.uid, authToken: row.token_hint, createdAt: toUnix(row.created_at) };
  const updatedAt = toUnixOrUndefined(row.updated_at);
  if (updatedAt !== undefined) token.updatedAt = updatedAt;
  if (row.platform !== null) token.platform = row.platform;
  if (row.user_agent !== null) token.userAgent = row.user_agent;
  if (row.app_info !== null && row.app_info !== undefined) token.appInfo = row.app_info as Record<string, unknown>;
  return token;
}
