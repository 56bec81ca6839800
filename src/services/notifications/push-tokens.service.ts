import { canonicalTimeZone } from '../../domain/notifications/quiet-hours.js';
import type { Kysely } from 'kysely';
import { ForeignKeyViolation } from '../../db/driver-errors.js';
import type { DB } from '../../db/schema.js';
import { withTransaction } from '../../db/transaction.js';
import type { RequestContext } from '../../domain/context.js';
import { AppError, badRequest } from '../../domain/errors.js';
import {
  PUSH_TOKEN_FIELDS,
  PUSH_TOKEN_LIMITS,
  tokenFieldOf,
  tokenTypeOf,
  type PushPlatform,
  type PushTarget,
  type PushTokenField,
  type PushTokenType,
} from '../../domain/notifications/push-tokens.js';
import { sha256Hex } from '../../domain/secrets.js';
import type { AuthTokenOwner, PushTokenRow, PushTokensRepository } from '../../repositories/notifications/push-tokens.repository.js';

export interface RegisterPushTokenInput {
  authToken: string;
  platform: PushPlatform;
  providerId?: string;
  fcmToken?: string;
  deviceToken?: string;
  voipToken?: string;
  timezone?: string;
}

/** A push token as the vendor lists it (times in ISO 8601, as its example shows). */
export interface PushTokenView {
  /** The auth token it was registered with: as the request sent it when it is that one, masked otherwise. */
  authToken: string;
  pushTokenType: PushTokenType;
  createdAt: string;
  platform: PushPlatform;
  /** Absent: sent through the app's default provider of its kind. */
  providerId?: string;
  pushToken: string;
  uid: string;
  updatedAt: string;
  timezone?: string;
}

/**
 * Users' push tokens (docs/notifications.md, "Push tokens"): registered, listed and unregistered
 * through an auth token (which names the user); and the delivery engine's reads.
 */
export class PushTokensService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      pushTokens: PushTokensRepository;
    },
  ) {}

  /**
   * notifications-push-register-token. The token comes in the platform's field (fcmToken,
   * deviceToken or voipToken). A token registered before (by this user or another of the app)
   * moves to this user and auth token; a user keeps their PUSH_TOKEN_LIMITS.tokensPerUser most
   * recently registered tokens, the others are dropped.
   */
  async register(ctx: RequestContext, input: RegisterPushTokenInput): Promise<{ success: true }> {
    const token = tokenOf(input);
    const timezone = input.timezone === undefined ? null : timeZoneOf(input.timezone);
    const tokenHash = sha256Hex(input.authToken);
    await withTransaction(
      this.deps.db,
      'register_push_token',
      async (tx) => {
        let registered: { uid: string } | undefined;
        try {
          registered = await this.deps.pushTokens.upsert(ctx.appId, tokenHash, { token, platform: input.platform, providerId: input.providerId ?? null, timezone }, tx);
        } catch (error) {
          // The auth token was deleted meanwhile.
          if (error instanceof ForeignKeyViolation) throw authTokenNotFound();
          throw error;
        }
        if (!registered) {
          const owner = await this.deps.pushTokens.authTokenOwner(ctx.appId, tokenHash, tx);
          throw owner ? new AppError('ERR_UID_NOT_FOUND', { params: { uid: owner.uid } }) : authTokenNotFound();
        }
        await this.deps.pushTokens.pruneOldest(ctx.appId, registered.uid, PUSH_TOKEN_LIMITS.tokensPerUser, tx);
      },
      ctx.log,
    );
    return { success: true };
  }

  /** notifications-push-list-tokens: the auth token's tokens, or with `all` every token of its user. */
  async list(ctx: RequestContext, authToken: string, all = false): Promise<{ pushTokens: PushTokenView[] }> {
    const owner = await this.owner(ctx, authToken);
    const rows = await this.deps.pushTokens.list(ctx.appId, all ? { uid: owner.uid } : { authTokenHash: owner.tokenHash });
    return { pushTokens: rows.map((row) => view(row, owner, authToken)) };
  }

  /**
   * notifications-push-unregister-tokens: deletes the auth token's tokens, or with `all` every
   * token of its user, and answers those it deleted.
   */
  async unregister(ctx: RequestContext, authToken: string, all = false): Promise<{ pushTokens: PushTokenView[] }> {
    const owner = await this.owner(ctx, authToken);
    const rows = await this.deps.pushTokens.delete(ctx.appId, all ? { uid: owner.uid } : { authTokenHash: owner.tokenHash });
    return { pushTokens: rows.map((row) => view(row, owner, authToken)) };
  }

  /**
   * notifications-push-delete-token: deletes one of the user's tokens (registered with any of
   * their auth tokens) and answers it; a token the user does not hold is left alone (an empty list).
   */
  async delete(ctx: RequestContext, authToken: string, pushToken: string): Promise<{ pushTokens: PushTokenView[] }> {
    const owner = await this.owner(ctx, authToken);
    const rows = await this.deps.pushTokens.delete(ctx.appId, { uid: owner.uid }, pushToken);
    return { pushTokens: rows.map((row) => view(row, owner, authToken)) };
  }

  /** For the delivery engine: the tokens of these (active) users, by uid (PushTokensRepository.tokensOf). */
  async tokensOf(ctx: RequestContext, uids: readonly string[]): Promise<Map<string, PushTarget[]>> {
    return this.deps.pushTokens.tokensOf(ctx.appId, uids);
  }

  /** For the delivery engine: a token a provider said is unregistered goes (PushTokensRepository.removeInvalid). */
  async removeInvalid(ctx: RequestContext, token: string, notUpdatedSince?: Date): Promise<boolean> {
    return this.deps.pushTokens.removeInvalid(ctx.appId, token, notUpdatedSince);
  }

  /** The auth token a request names: by its plain value (it is stored hashed). */
  private async owner(ctx: RequestContext, authToken: string): Promise<AuthTokenOwner> {
    const owner = await this.deps.pushTokens.authTokenOwner(ctx.appId, sha256Hex(authToken));
    if (!owner) throw authTokenNotFound();
    return owner;
  }
}

/** The token, from the one field the platform takes it in. */
function tokenOf(input: RegisterPushTokenInput): string {
  const field = tokenFieldOf(input.platform);
  for (const other of PUSH_TOKEN_FIELDS) {
    if (other !== field && input[other] !== undefined) {
      throw badRequest({ [other]: `is not taken by the platform ${input.platform}: send its token as ${field}` });
    }
  }
  const token = input[field as PushTokenField];
  if (token === undefined) throw badRequest({ [field]: `is required for the platform ${input.platform}` });
  return token;
}

function timeZoneOf(name: string): string {
  if (canonicalTimeZone(name) === undefined) throw badRequest({ timezone: 'is not an IANA time zone (e.g. Asia/Kolkata)' });
  return name;
}

function authTokenNotFound(): AppError {
  return new AppError('ERR_AUTH_TOKEN_NOT_FOUND', { message: 'The auth token does not exist in this app.' });
}

function view(row: PushTokenRow, owner: AuthTokenOwner, authToken: string): PushTokenView {
  const token: PushTokenView = {
    authToken: row.auth_token_hash === owner.tokenHash ? authToken : row.auth_token_hint,
    pushTokenType: tokenTypeOf(row.platform),
    createdAt: row.created_at.toISOString(),
    platform: row.platform,
    pushToken: row.token,
    uid: row.uid,
    updatedAt: row.updated_at.toISOString(),
  };
  if (row.provider_id !== null) token.providerId = row.provider_id;
  if (row.timezone !== null) token.timezone = row.timezone;
  return token;
}
