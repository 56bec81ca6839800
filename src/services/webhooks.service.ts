import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { UniqueViolation } from '../db/driver-errors.js';
import type { DB } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { isTrigger } from '../domain/events.js';
import { AppError, badRequest } from '../domain/errors.js';
import { pageMeta, pageOffset, type PageMeta } from '../domain/pagination.js';
import { toUnix } from '../domain/time.js';
import { TRIGGER_DESCRIPTIONS, WEBHOOK_ID_PATTERN, WEBHOOK_LIMITS, WEBHOOK_TRIGGERS, urlControlProblem, webhookUrlProblem } from '../domain/webhooks.js';
import type { ManagementAppsRepository } from '../repositories/management-apps.repository.js';
import type { WebhookDeliveriesRepository } from '../repositories/webhook-deliveries.repository.js';
import type { WebhookChanges, WebhookRow, WebhooksRepository } from '../repositories/webhooks.repository.js';
import { appNotFound, managedAppId, requireActiveApp } from './management.service.js';

/** A webhook as the management API answers it (the password is never shown). */
export interface Webhook {
  id: string;
  name: string;
  webhookURL: string;
  useBasicAuth: boolean;
  username?: string;
  enabled: boolean;
  retryOnFailure: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface CreatedWebhook extends Webhook {
  /** Signs the webhook's deliveries (32 random bytes, hex): shown by create-webhook only. */
  signingSecret: string;
}

export interface WebhookInput {
  id: string;
  name: string;
  webhookURL: string;
  useBasicAuth?: boolean;
  username?: string;
  password?: string;
  enabled?: boolean;
  retryOnFailure?: boolean;
}

export type WebhookUpdate = Partial<Omit<WebhookInput, 'id'>>;

type Result = { success: true; message: string };

/**
 * An app's webhooks, as the vendor's management API manages them: the webhook itself and the
 * triggers it subscribes to. Every operation is scoped to `ctx.appId`: another app's webhook id
 * answers ERR_WEBHOOK_NOT_FOUND.
 */
export class WebhooksService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      webhooks: WebhooksRepository;
      deliveries: WebhookDeliveriesRepository;
      apps: ManagementAppsRepository;
      region: string;
      /** PARLEY_WEBHOOK_ALLOW_PRIVATE: http URLs and private or loopback hosts are allowed. */
      allowPrivate: boolean;
    },
  ) {}

  /** create-webhook; `triggers` (the CLI's --triggers) are subscribed in the same statement. */
  async create(ctx: RequestContext, input: WebhookInput, triggers: readonly string[] = []): Promise<CreatedWebhook> {
    if (!WEBHOOK_ID_PATTERN.test(input.id)) {
      throw badRequest({ id: `must be 1-${WEBHOOK_LIMITS.idLength} letters, digits, underscores or hyphens` });
    }
    const name = this.checkedName(input.name);
    const url = this.checkedUrl(input.webhookURL);
    const useBasicAuth = input.useBasicAuth ?? false;
    checkBasicAuth(useBasicAuth, input.username, input.password);
    const subscribed = checkedTriggers(triggers, true);
    const appId = this.appIdOf(ctx);
    const signingSecret = crypto.randomBytes(32).toString('hex');
    try {
      const row = await withTransaction(
        this.deps.db,
        'create_webhook',
        async (tx) => {
          if (!(await this.deps.apps.lockActive(appId, this.deps.region, tx))) throw appNotFound(appId);
          if ((await this.deps.webhooks.count(appId, tx)) >= WEBHOOK_LIMITS.perApp) {
            throw new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: WEBHOOK_LIMITS.perApp, what: 'webhooks per app' } });
          }
          // The app's deliveries start at the end of its log (the first webhook starts them).
          await this.deps.deliveries.startCursor(appId, tx);
          // Field by field: a body may hold more fields than its type names.
          return this.deps.webhooks.create(
            appId,
            {
              id: input.id,
              name,
              url,
              useBasicAuth,
              username: input.username ?? null,
              password: input.password ?? null,
              enabled: input.enabled ?? true,
              retryOnFailure: input.retryOnFailure ?? false,
              triggers: subscribed,
              signingSecret,
            },
            tx,
          );
        },
        ctx.log,
      );
      const created: CreatedWebhook = Object.assign(toWebhook(row), { signingSecret: row.signing_secret });
      return created;
    } catch (error) {
      if (error instanceof UniqueViolation) throw badRequest({ id: `a webhook with the id ${input.id} already exists in the app ${appId}` });
      throw error;
    }
  }

  /** list-webhooks: the app's webhooks, oldest first; `searchKey` is part of the name, any case. */
  async list(ctx: RequestContext, query: { searchKey?: string; page?: number; perPage?: number }): Promise<{ data: Webhook[]; meta: PageMeta }> {
    const appId = await this.requireApp(ctx);
    const page = { page: query.page ?? 1, perPage: query.perPage ?? 100 };
    const { rows, total } = await this.deps.webhooks.list(appId, { nameContains: query.searchKey, limit: page.perPage, offset: pageOffset(page) });
    return { data: rows.map(toWebhook), meta: pageMeta(page, total, rows.length) };
  }

  async get(ctx: RequestContext, id: string): Promise<Webhook> {
    return toWebhook(await this.findRow(ctx, id));
  }

  /** update-webhook: changes the fields given; the URL and Basic auth are checked as on create. */
  async update(ctx: RequestContext, id: string, changes: WebhookUpdate): Promise<Webhook> {
    const current = await this.findRow(ctx, id);
    const set: WebhookChanges = {};
    if (changes.name !== undefined) set.name = this.checkedName(changes.name);
    if (changes.webhookURL !== undefined) set.url = this.checkedUrl(changes.webhookURL);
    if (changes.useBasicAuth !== undefined) set.useBasicAuth = changes.useBasicAuth;
    if (changes.username !== undefined) set.username = changes.username;
    if (changes.password !== undefined) set.password = changes.password;
    if (changes.enabled !== undefined) set.enabled = changes.enabled;
    if (changes.retryOnFailure !== undefined) set.retryOnFailure = changes.retryOnFailure;
    checkBasicAuth(set.useBasicAuth ?? current.use_basic_auth, set.username ?? current.username ?? undefined, set.password ?? current.password ?? undefined);
    if (Object.keys(set).length === 0) return toWebhook(current);
    const row = await this.deps.webhooks.update(current.app_id, current.id, set);
    if (!row) throw webhookNotFound(ctx.appId, id);
    return toWebhook(row);
  }

  async delete(ctx: RequestContext, id: string): Promise<Result> {
    const row = await this.findRow(ctx, id);
    const deleted = await withTransaction(
      this.deps.db,
      'delete_webhook',
      async (tx) => {
        if (!(await this.deps.webhooks.delete(row.app_id, row.id, tx))) return false;
        // Its deliveries go with it (a webhook made later with the same id starts afresh).
        await this.deps.deliveries.deleteOfWebhook(row.app_id, row.id, tx);
        return true;
      },
      ctx.log,
    );
    if (!deleted) throw webhookNotFound(ctx.appId, id);
    return { success: true, message: 'Deleted Webhook successfully.' };
  }

  /** add-triggers: subscribes the webhook to the triggers (those it has already stay); answers per trigger. */
  async addTriggers(ctx: RequestContext, id: string, triggerIds: readonly string[]): Promise<Record<string, Result>> {
    const triggers = checkedTriggers(triggerIds);
    const row = await this.findRow(ctx, id);
    if (!(await this.deps.webhooks.addTriggers(row.app_id, row.id, triggers))) throw webhookNotFound(ctx.appId, id);
    const answer: Record<string, Result> = {};
    for (const trigger of triggers) answer[trigger] = { success: true, message: 'Triggers has been added successfully.' };
    return answer;
  }

  /** list-triggers: the triggers the webhook subscribes to, with what each means. */
  async listTriggers(ctx: RequestContext, id: string): Promise<{ data: Array<{ id: string; description: string }>; meta: PageMeta }> {
    const row = await this.findRow(ctx, id);
    const data = row.triggers.filter(isTrigger).map((trigger) => ({ id: trigger, description: TRIGGER_DESCRIPTIONS[trigger] }));
    return { data, meta: pageMeta({ page: 1, perPage: 100 }, data.length, data.length) };
  }

  /** remove-triggers: unsubscribes the webhook from the triggers (one it does not have is no error). */
  async removeTriggers(ctx: RequestContext, id: string, triggerIds: readonly string[]): Promise<Result> {
    const triggers = checkedTriggers(triggerIds);
    const row = await this.findRow(ctx, id);
    if (!(await this.deps.webhooks.removeTriggers(row.app_id, row.id, triggers))) throw webhookNotFound(ctx.appId, id);
    return { success: true, message: 'Removed trigger successfully.' };
  }

  /**
   * Makes a new signing secret (shown this once); the old one keeps signing beside it for
   * `overlapSeconds`, so receivers can switch without refusing deliveries.
   */
  async rotateSecret(ctx: RequestContext, id: string, overlapSeconds = 86_400): Promise<{ signingSecret: string; previousSecretExpiresAt: number }> {
    const current = await this.findRow(ctx, id);
    const signingSecret = crypto.randomBytes(32).toString('hex');
    const until = new Date(Date.now() + overlapSeconds * 1000);
    if (!(await this.deps.webhooks.rotateSecret(current.app_id, current.id, signingSecret, until))) throw webhookNotFound(ctx.appId, id);
    return { signingSecret, previousSecretExpiresAt: toUnix(until) };
  }

  /** The webhook `id` of the app `ctx.appId` (its row, also for the delivery log); not found when either is not there. */
  async findRow(ctx: RequestContext, id: string): Promise<WebhookRow> {
    const appId = await this.requireApp(ctx);
    const row = WEBHOOK_ID_PATTERN.test(id) ? await this.deps.webhooks.get(appId, id) : undefined;
    if (!row) throw webhookNotFound(appId, id);
    return row;
  }

  private async requireApp(ctx: RequestContext): Promise<string> {
    return requireActiveApp(this.deps.apps, this.deps.region, ctx);
  }

  private appIdOf(ctx: RequestContext): string {
    return managedAppId(ctx);
  }

  private checkedName(raw: string): string {
    const name = raw.trim();
    if (!name || name.length > WEBHOOK_LIMITS.nameLength) throw badRequest({ name: `must be 1-${WEBHOOK_LIMITS.nameLength} characters` });
    return name;
  }

  private checkedUrl(raw: string): string {
    const url = raw.trim();
    // Control characters are refused as sent, at the ends too (where trim would drop some).
    const problem = urlControlProblem(raw) ?? webhookUrlProblem(url, this.deps.allowPrivate);
    if (problem) throw badRequest({ webhookURL: problem });
    return url;
  }
}

/** Basic auth needs both a user name and a password (given now or stored before). */
function checkBasicAuth(useBasicAuth: boolean, username: string | undefined, password: string | undefined): void {
  if (!useBasicAuth) return;
  const details: Record<string, string> = {};
  if (!username) details.username = 'is required when useBasicAuth is true';
  if (!password) details.password = 'is required when useBasicAuth is true';
  if (Object.keys(details).length) throw badRequest(details);
}

/** The distinct trigger names, all of them known; else ERR_TRIGGER_NOT_FOUND naming the others. */
function checkedTriggers(names: readonly string[], allowEmpty = false): string[] {
  const distinct = [...new Set(names)];
  if (distinct.length === 0 && !allowEmpty) throw badRequest({ triggerIds: 'must name at least one trigger' });
  const unknown = distinct.filter((name) => !isTrigger(name));
  if (unknown.length) {
    const shown = unknown.slice(0, 5).map((name) => name.slice(0, 60));
    throw new AppError('ERR_TRIGGER_NOT_FOUND', {
      params: { triggers: shown.join(', ') + (unknown.length > shown.length ? ', ...' : ''), known: WEBHOOK_TRIGGERS.join(', ') },
      details: { triggerIds: `unknown trigger(s): ${shown.join(', ')}` },
    });
  }
  return distinct.sort();
}

function webhookNotFound(appId: string, id: string): AppError {
  return new AppError('ERR_WEBHOOK_NOT_FOUND', { params: { id: id.slice(0, 100), appId } });
}

function toWebhook(row: WebhookRow): Webhook {
  const webhook: Webhook = {
    id: row.id,
    name: row.name,
    webhookURL: row.url,
    useBasicAuth: row.use_basic_auth,
    enabled: row.enabled,
    retryOnFailure: row.retry_on_failure,
    createdAt: toUnix(row.created_at),
    updatedAt: toUnix(row.updated_at),
  };
  if (row.username !== null) webhook.username = row.username;
  return webhook;
}
