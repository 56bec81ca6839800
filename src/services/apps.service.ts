import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { UniqueViolation } from '../db/driver-errors.js';
import type { DB } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import type { Credential, RequestContext } from '../domain/context.js';
import { AppError, badRequest } from '../domain/errors.js';
import { APP_ID_PATTERN } from '../domain/normalize.js';
import { effectiveLimits, MAX_RATE_LIMIT, RATE_LIMIT_CLASSES, type RateLimits } from '../domain/rate-limits.js';
import { digestsEqual, sha256Hex } from '../domain/secrets.js';
import { toUnix } from '../domain/time.js';
import type { AppsRepository } from '../repositories/apps.repository.js';
import type { RolesRepository } from '../repositories/roles.repository.js';
import type { ApiKeysService } from './api-keys.service.js';

export interface App {
  appId: string;
  name: string;
  region: string;
  createdAt: number;
}

export interface CreatedApp extends App {
  /** A fullAccess key ("Rest API Key"). */
  apiKey: string;
  /** An authOnly key ("Auth Key"). */
  authKey: string;
}

/** An app's rate limits: those in force, and which of them are the app's own. */
export interface AppRateLimits {
  appId: string;
  /** Requests a minute per class; 0 is off. */
  limits: RateLimits;
  /** The classes the app sets itself; the others are the deployment's. */
  overrides: Partial<RateLimits>;
}

export class AppsService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      apps: AppsRepository;
      apiKeys: ApiKeysService;
      roles: RolesRepository;
      /** This deployment's region: it serves apps of this region only. */
      region: string;
      /** This deployment's rate limits (PARLEY_RATE_LIMITS), for the classes an app does not set. */
      rateLimits: RateLimits;
    },
  ) {}

  /**
   * Creates an app with one fullAccess and one authOnly key, and its `default` role; without
   * `appId`, one is generated.
   * A deployment-level operation: `ctx.appId` is not used.
   */
  async create(ctx: RequestContext, input: { name: string; appId?: string }): Promise<CreatedApp> {
    const appId = input.appId?.toLowerCase() || crypto.randomBytes(8).toString('hex');
    if (!APP_ID_PATTERN.test(appId)) {
      throw badRequest({ appId: 'must be 1-63 lower-case letters, digits or dashes, not starting or ending with a dash' });
    }
    const name = input.name.trim();
    if (!name || name.length > 100) throw badRequest({ name: 'must be 1-100 characters' });
    try {
      return await withTransaction(
        this.deps.db,
        'create_app',
        async (tx) => {
          const app = await this.deps.apps.create(appId, { name, region: this.deps.region }, tx);
          const rest = await this.deps.apiKeys.insert(appId, { name: 'Rest API Key', scope: 'fullAccess' }, tx);
          const auth = await this.deps.apiKeys.insert(appId, { name: 'Auth Key', scope: 'authOnly' }, tx);
          await this.deps.roles.createDefault(appId, tx);
          return { appId, name: app.name, region: app.region, createdAt: toUnix(app.created_at), apiKey: rest.apiKey, authKey: auth.apiKey };
        },
        ctx.log,
      );
    } catch (error) {
      if (error instanceof UniqueViolation) throw badRequest({ appId: `an app with id ${appId} already exists` });
      throw error;
    }
  }

  async list(): Promise<App[]> {
    const rows = await this.deps.apps.list();
    return rows.map((row) => ({ appId: row.id, name: row.name, region: row.region, createdAt: toUnix(row.created_at) }));
  }

  async count(): Promise<number> {
    return this.deps.apps.count();
  }

  /** Hashes of the keys sent lately: every request sends its key, and hashing costs more than a lookup. */
  private readonly keyHashes = new Map<string, string>();

  private hashOf(apiKey: string): string {
    let hash = this.keyHashes.get(apiKey);
    if (hash === undefined) {
      hash = sha256Hex(apiKey);
      if (this.keyHashes.size >= 1_000) this.keyHashes.clear();
      this.keyHashes.set(apiKey, hash);
    }
    return hash;
  }

  /**
   * Checks that `ctx.appId` is an app of this region and that `apiKey` is one of its keys.
   * One query; the key is looked up by its hash and the hashes compared in constant time.
   * `beforeLookup` runs first unless the key was found valid lately on this node (it may
   * refuse: the caller's limit on failed authentications), so a key in use pays nothing for it.
   */
  async authenticate(ctx: RequestContext, apiKey: string | undefined, beforeLookup?: () => Promise<void>): Promise<Credential> {
    const keyHash = this.hashOf(apiKey ?? '');
    if (beforeLookup !== undefined && !this.deps.apps.knownKey(ctx.appId, keyHash)) await beforeLookup();
    const found = await this.deps.apps.getWithKey(ctx.appId, keyHash);
    if (!found || found.app.region !== this.deps.region) {
      throw new AppError('AUTH_ERR_INVALID_APPID', { params: { appId: ctx.appId, region: this.deps.region } });
    }
    if (!apiKey) throw new AppError('AUTH_ERR_EMPTY_APIKEY');
    if (!found.key || !digestsEqual(found.key.key_hash, keyHash)) throw new AppError('AUTH_ERR_APIKEY_NOT_FOUND');
    return { keyHash, scope: found.key.scope, limits: found.limits };
  }

  /**
   * The credential of a request that a management credential authenticated (checked before: see
   * ManagementService.authenticate) for the app `ctx.appId`, on the operations that take one
   * instead of an apiKey: full access, with the app's own rate limits. The app must be of this region.
   */
  async managementCredential(ctx: RequestContext, key: string): Promise<Credential> {
    return { keyHash: `management:${key}`, scope: 'fullAccess', limits: await this.appLimits(ctx), kind: 'management' };
  }

  /**
   * The credential of a request that a user's auth token authenticated (checked before: see
   * AuthTokensService.authenticate) for the app `ctx.appId`: the app's own rate limits; what
   * it may do is the client access table's (http/plugins/client-access.ts). The app must be of this region.
   */
  async tokenCredential(ctx: RequestContext, tokenHash: string): Promise<Credential> {
    return { keyHash: tokenHash, scope: 'fullAccess', limits: await this.appLimits(ctx), kind: 'authToken' };
  }

  /** Throws AUTH_ERR_INVALID_APPID unless the app is one of this region: read as a key's lookup is, and cached with it. */
  async requireServed(appId: string): Promise<void> {
    await this.appLimits({ appId });
  }

  /** The app's own rate limits, read as a key's lookup is (and cached with it); the app must be of this region. */
  private async appLimits(ctx: Pick<RequestContext, 'appId'>): Promise<Credential['limits']> {
    const found = await this.deps.apps.getWithKey(ctx.appId, this.hashOf(''));
    if (!found || found.app.region !== this.deps.region) {
      throw new AppError('AUTH_ERR_INVALID_APPID', { params: { appId: ctx.appId, region: this.deps.region } });
    }
    return found.limits;
  }

  /** The rate limits of the app `ctx.appId`. */
  async rateLimits(ctx: RequestContext): Promise<AppRateLimits> {
    await this.requireApp(ctx);
    return this.rateLimitsView(ctx.appId, await this.deps.apps.getRateLimits(ctx.appId));
  }

  /**
   * Gives the app its own limits for the given classes (the others stay as they were). The node
   * that does it applies them to its next request; other nodes within the credential cache's
   * lifetime (5 s).
   */
  async setRateLimits(ctx: RequestContext, limits: Partial<RateLimits>): Promise<AppRateLimits> {
    const details: Record<string, string> = {};
    for (const [cls, value] of Object.entries(limits)) {
      if (!(RATE_LIMIT_CLASSES as readonly string[]).includes(cls)) details[cls] = `is not a rate-limit class (${RATE_LIMIT_CLASSES.join(', ')})`;
      else if (!Number.isInteger(value) || value < 0 || value > MAX_RATE_LIMIT) details[cls] = `must be a whole number from 0 (off) to ${MAX_RATE_LIMIT}`;
    }
    if (Object.keys(details).length) throw badRequest(details);
    await this.requireApp(ctx);
    if (!Object.keys(limits).length) return this.rateLimits(ctx);
    return this.rateLimitsView(ctx.appId, await this.deps.apps.setRateLimits(ctx.appId, limits));
  }

  /** Removes the app's own limits: the deployment's apply to it again. */
  async resetRateLimits(ctx: RequestContext): Promise<AppRateLimits> {
    await this.requireApp(ctx);
    await this.deps.apps.deleteRateLimits(ctx.appId);
    return this.rateLimitsView(ctx.appId, undefined);
  }

  private async requireApp(ctx: RequestContext): Promise<void> {
    const app = await this.deps.apps.get(ctx.appId);
    if (!app || app.region !== this.deps.region) {
      throw new AppError('AUTH_ERR_INVALID_APPID', { params: { appId: ctx.appId, region: this.deps.region } });
    }
  }

  private rateLimitsView(appId: string, overrides: Awaited<ReturnType<AppsRepository['getRateLimits']>>): AppRateLimits {
    const own: Partial<RateLimits> = {};
    for (const cls of RATE_LIMIT_CLASSES) {
      const value = overrides?.[cls];
      if (value !== null && value !== undefined) own[cls] = value;
    }
    return { appId, limits: effectiveLimits(this.deps.rateLimits, overrides), overrides: own };
  }
}
