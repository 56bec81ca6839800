import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import type { ApiKeyScope, RequestContext } from '../domain/context.js';
import { AppError, badRequest } from '../domain/errors.js';
import { APP_ID_PATTERN } from '../domain/normalize.js';
import { pageMeta, pageOffset, type PageMeta } from '../domain/pagination.js';
import { sha256Hex } from '../domain/secrets.js';
import { toUnix } from '../domain/time.js';
import type { AppSettingsRepository } from '../repositories/app-settings.repository.js';
import type { AppKeyRow, ManagedAppRow, ManagementAppsRepository } from '../repositories/management-apps.repository.js';
import type { ManagementKeysRepository } from '../repositories/management-keys.repository.js';
import type { AppsService } from './apps.service.js';

/** A management credential of the deployment, as listed (the secret is never shown again). */
export interface ManagementKey {
  key: string;
  name: string;
  createdAt: number;
}

export interface CreatedManagementKey extends ManagementKey {
  /** Shown once, when the credential is made; stored as its SHA-256 digest. */
  secret: string;
}

export interface ManagedAppKey {
  apiKey: string;
  name: string;
  scope: ApiKeyScope;
  createdBy?: string;
}

/** An app as the vendor's management API shows it (its `appSchema`). */
export interface ManagedApp {
  id: string;
  name: string;
  region: string;
  /** `deleting` while a delete that began has not finished (see deleteApp). */
  state: 'active' | 'deleting';
  createdAt: number;
  appRegion: { id: string; name: string; description: string };
  /** By key: plain on create-app (shown once), masked in list-apps. */
  apiKeys: Record<string, ManagedAppKey>;
}

export interface AppUsage {
  success: true;
  message: string;
  usage: { from: number; to: number; newUsers: number; newGroups: number; messages: number };
}

const REGION_NAMES: Record<string, string> = { us: 'USA', eu: 'Europe', in: 'India' };

/** A management credential's key, as createKey makes them. */
const MANAGEMENT_KEY = /^[0-9a-f]{32}$/;

/** Rows deleted per statement when an app is deleted. */
const PURGE_BATCH = 5_000;

/** A setting's key: what the vendor's keys are made of (`core.conversations.updateOnGroupActions`). */
const SETTING_KEY = /^[A-Za-z0-9_.-]{1,100}$/;
export const SETTINGS_PER_APP = 500;

/**
 * The vendor's management API, but for webhooks (WebhooksService): the deployment's management
 * credentials, its apps (create, list, delete, usage) and their settings. A deployment-level
 * service: `ctx.appId` names the app of the app-scoped operations, and is empty otherwise.
 */
/** The path's app id (`ctx.appId`), if it can name an app; else ERR_APP_NOT_FOUND (shared by the management services). */
export function managedAppId(ctx: RequestContext): string {
  if (!APP_ID_PATTERN.test(ctx.appId)) throw appNotFound(ctx.appId);
  return ctx.appId;
}

/** The path's app, which must exist in this region and not be being deleted (shared by the management services). */
export async function requireActiveApp(apps: ManagementAppsRepository, region: string, ctx: RequestContext): Promise<string> {
  const appId = managedAppId(ctx);
  const app = await apps.get(appId, region);
  if (!app || app.deleting) throw appNotFound(appId);
  return appId;
}

export class ManagementService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      keys: ManagementKeysRepository;
      apps: ManagementAppsRepository;
      settings: AppSettingsRepository;
      appsService: AppsService;
      /** This deployment's region: it serves apps of this region only. */
      region: string;
      /**
       * How long other nodes may still accept a deleted key from their credential cache: a delete
       * sweeps the app's rows once more after this, before removing the app.
       */
      settleMs: number;
      noteBulkWrite: (rows: number) => void;
    },
  ) {}

  // --- credentials -------------------------------------------------------------------------

  /** Checks the `key` and `secret` headers against the deployment's management credentials. */
  async authenticate(_ctx: RequestContext, key: string | undefined, secret: string | undefined): Promise<void> {
    if (!key || !secret) throw new AppError('AUTH_ERR_EMPTY_AUTH_HEADER');
    // Only what createKey makes is looked up: any other text is refused without a query, and so
    // is a pair refused lately (see ManagementKeysRepository.matches).
    if (!MANAGEMENT_KEY.test(key) || !(await this.deps.keys.matches(key, sha256Hex(secret)))) {
      throw new AppError('AUTH_ERR_APIKEY_NOT_FOUND', { message: 'The key and secret are not a management credential of this deployment.' });
    }
  }

  /** A new credential: 16 random bytes of key and 32 of secret, hex; the secret is stored hashed. */
  async createKey(_ctx: RequestContext, input: { name?: string } = {}): Promise<CreatedManagementKey> {
    const name = input.name?.trim() || 'Management key';
    if (name.length > 100) throw badRequest({ name: 'must be at most 100 characters' });
    for (;;) {
      const key = crypto.randomBytes(16).toString('hex');
      const secret = crypto.randomBytes(32).toString('hex');
      const row = await this.deps.keys.create({ key, secretHash: sha256Hex(secret), name });
      if (row) return { key, secret, name: row.name, createdAt: toUnix(row.created_at) };
    }
  }

  async listKeys(_ctx: RequestContext): Promise<ManagementKey[]> {
    return (await this.deps.keys.list()).map((row) => ({ key: row.key, name: row.name, createdAt: toUnix(row.created_at) }));
  }

  /** Revokes a credential at once, on every node (credentials are not cached). False when there is none. */
  async revokeKey(_ctx: RequestContext, key: string): Promise<boolean> {
    return this.deps.keys.delete(key);
  }

  async countKeys(): Promise<number> {
    return this.deps.keys.count();
  }

  // --- apps --------------------------------------------------------------------------------

  /** create-app: a Parley app like any other, with a fullAccess and an authOnly key. */
  async createApp(ctx: RequestContext, input: { name: string; region: string; version?: string; skipSampleData?: boolean }): Promise<ManagedApp> {
    if (input.region !== this.deps.region) {
      throw badRequest({ region: `must be ${this.deps.region}: this deployment serves the region ${this.deps.region} only` });
    }
    if (input.version !== undefined && !/^v?3(\.0)?$/.test(input.version)) throw badRequest({ version: 'must be "3": Parley serves the v3 API' });
    // skipSampleData changes nothing: Parley never adds sample users or groups.
    const created = await this.deps.appsService.create(ctx, { name: input.name });
    const keys: AppKeyRow[] = [
      { app_id: created.appId, key_hint: created.apiKey, name: 'Rest API Key', scope: 'fullAccess' },
      { app_id: created.appId, key_hint: created.authKey, name: 'Auth Key', scope: 'authOnly' },
    ];
    const row: ManagedAppRow = { id: created.appId, name: created.name, region: created.region, created_at: new Date(created.createdAt * 1000), deleting: false };
    return this.appView(row, keys, 'app_system');
  }

  /** list-apps: the apps of this deployment's region, oldest first, with their keys masked. */
  async listApps(_ctx: RequestContext, query: { searchKey?: string; page?: number; perPage?: number }): Promise<{ data: ManagedApp[]; meta: PageMeta }> {
    const page = { page: query.page ?? 1, perPage: query.perPage ?? 25 };
    const { rows, total } = await this.deps.apps.list(this.deps.region, { search: query.searchKey, limit: page.perPage, offset: pageOffset(page) });
    const keys = new Map<string, AppKeyRow[]>();
    for (const key of await this.deps.apps.keysOf(rows.map((row) => row.id))) {
      const list = keys.get(key.app_id);
      if (list) list.push(key);
      else keys.set(key.app_id, [key]);
    }
    const data = rows.map((row) => this.appView(row, keys.get(row.id) ?? []));
    return { data, meta: pageMeta(page, total, data.length) };
  }

  /**
   * delete-app: deletes the app and all its data now (the vendor schedules it). Its keys go
   * first, in one transaction with its mark, so no request authenticates for it from then on;
   * then its rows, a batch per statement; then, once other nodes' cached keys have expired and a
   * last sweep found nothing left, the app itself. Interrupted, the app stays listed as
   * `deleting` and the next delete finishes it.
   */
  async deleteApp(ctx: RequestContext): Promise<{ success: true; scheduledToDeleteAt: number }> {
    const appId = this.appIdOf(ctx);
    const begun = Date.now();
    await withTransaction(
      this.deps.db,
      'begin_app_deletion',
      async (tx) => {
        if (!(await this.deps.apps.get(appId, this.deps.region, tx))) throw appNotFound(appId);
        await this.deps.apps.beginDeletion(appId, tx);
      },
      ctx.log,
    );
    let rows = await this.deps.apps.purge(appId, PURGE_BATCH);
    const settle = this.deps.settleMs - (Date.now() - begun);
    if (settle > 0) {
      await new Promise((resolve) => setTimeout(resolve, settle));
      rows += await this.deps.apps.purge(appId, PURGE_BATCH);
    }
    await withTransaction(this.deps.db, 'finish_app_deletion', (tx) => this.deps.apps.finishDeletion(appId, tx), ctx.log);
    this.deps.noteBulkWrite(rows);
    ctx.log.info({ appId, rows }, 'app deleted');
    return { success: true, scheduledToDeleteAt: toUnix(new Date()) };
  }

  /**
   * fetch-multi-tenant-usage: what the app did in a billing cycle, here a calendar month (UTC):
   * the current one so far, or the previous one. The vendor e-mails its figures; Parley answers
   * with them (`usage`), counted from the rows stored now (what was deleted since is not counted).
   */
  async usage(ctx: RequestContext, input: { usePreviousBillingCycle?: boolean }, now = new Date()): Promise<AppUsage> {
    const appId = await this.requireActiveApp(ctx);
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const [from, to] = input.usePreviousBillingCycle ? [new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)), monthStart] : [monthStart, now];
    const counts = await this.deps.apps.usage(appId, from, to);
    const day = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');
    return {
      success: true,
      message: `Usage of the app ${appId} from ${day(from)} to ${day(to)}: ${counts.users} users and ${counts.groups} groups created, ${counts.messages} messages sent.`,
      usage: { from: toUnix(from), to: toUnix(to), newUsers: counts.users, newGroups: counts.groups, messages: counts.messages },
    };
  }

  // --- settings ----------------------------------------------------------------------------

  /** map-settings: sets each key to its value; answers per key. */
  async mapSettings(ctx: RequestContext, settings: Record<string, boolean> | undefined): Promise<Record<string, { success: true; message: string }>> {
    const entries = Object.entries(settings ?? {});
    if (entries.length === 0) throw badRequest({ settings: 'must map at least one setting key to true or false' });
    const badKey = entries.find(([key]) => !SETTING_KEY.test(key));
    if (badKey) throw badRequest({ [`settings.${badKey[0].slice(0, 100)}`]: 'is not a setting key: 1-100 letters, digits, dots, underscores or hyphens' });
    const appId = this.appIdOf(ctx);
    await withTransaction(
      this.deps.db,
      'map_settings',
      async (tx) => {
        if (!(await this.deps.apps.lockActive(appId, this.deps.region, tx))) throw appNotFound(appId);
        const keys = entries.map(([key]) => key);
        const added = keys.length - (await this.deps.settings.countExisting(appId, keys, tx));
        if ((await this.deps.settings.count(appId, tx)) + added > SETTINGS_PER_APP) {
          throw new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: SETTINGS_PER_APP, what: 'settings per app' } });
        }
        await this.deps.settings.upsert(
          appId,
          entries.map(([key, value]) => ({ key, value })),
          tx,
        );
      },
      ctx.log,
    );
    const answer: Record<string, { success: true; message: string }> = {};
    for (const [key] of entries) answer[key] = { success: true, message: 'Added setting(s) successfully.' };
    return answer;
  }

  /** list-settings: the app's settings, by key. */
  async listSettings(ctx: RequestContext): Promise<Record<string, boolean>> {
    const appId = await this.requireActiveApp(ctx);
    const data: Record<string, boolean> = {};
    for (const row of await this.deps.settings.list(appId)) data[row.key] = row.value;
    return data;
  }

  /** unmap-settings: removes the named settings, or all of them when none is named. */
  async unmapSettings(ctx: RequestContext, keys: readonly string[] | undefined): Promise<{ success: true; message: string }> {
    const appId = await this.requireActiveApp(ctx);
    const removed = await this.deps.settings.delete(appId, keys);
    return { success: true, message: `Removed ${removed} setting(s) successfully.` };
  }

  // --- shared ------------------------------------------------------------------------------

  /** The app `ctx.appId`, which must exist in this region and not be being deleted. */
  async requireActiveApp(ctx: RequestContext): Promise<string> {
    return requireActiveApp(this.deps.apps, this.deps.region, ctx);
  }

  private appIdOf(ctx: RequestContext): string {
    return managedAppId(ctx);
  }

  private appView(row: ManagedAppRow, keys: readonly AppKeyRow[], createdBy?: string): ManagedApp {
    const apiKeys: Record<string, ManagedAppKey> = {};
    for (const key of keys) {
      apiKeys[key.key_hint] = createdBy ? { apiKey: key.key_hint, name: key.name, scope: key.scope, createdBy } : { apiKey: key.key_hint, name: key.name, scope: key.scope };
    }
    return {
      id: row.id,
      name: row.name,
      region: row.region,
      state: row.deleting ? 'deleting' : 'active',
      createdAt: toUnix(row.created_at),
      appRegion: { id: row.region, name: REGION_NAMES[row.region] ?? row.region, description: `Served by this Parley deployment (region ${row.region}).` },
      apiKeys,
    };
  }
}

export function appNotFound(appId: string): AppError {
  // A value that cannot be an app id is not echoed back whole.
  return new AppError('ERR_APP_NOT_FOUND', { params: { appId: appId.slice(0, 100) } });
}
