import { sql, type Selectable } from 'kysely';
import type { WebhooksTable } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { escapeLike } from './sql-helpers.js';

export type WebhookRow = Selectable<WebhooksTable>;

export interface NewWebhook {
  id: string;
  name: string;
  url: string;
  useBasicAuth: boolean;
  username: string | null;
  password: string | null;
  enabled: boolean;
  retryOnFailure: boolean;
  triggers: string[];
  signingSecret: string;
}

export interface WebhookChanges {
  name?: string;
  url?: string;
  useBasicAuth?: boolean;
  username?: string;
  password?: string;
  enabled?: boolean;
  retryOnFailure?: boolean;
}

/** An app's webhooks: every statement names the app, so another app's webhook is never reached. */
export class WebhooksRepository {
  constructor(private readonly db: Executor) {}

  async create(appId: string, values: NewWebhook, tx: Executor = this.db): Promise<WebhookRow> {
    return tx
      .insertInto('webhooks')
      .values({
        app_id: appId,
        id: values.id,
        name: values.name,
        url: values.url,
        use_basic_auth: values.useBasicAuth,
        username: values.username,
        password: values.password,
        enabled: values.enabled,
        retry_on_failure: values.retryOnFailure,
        triggers: values.triggers,
        signing_secret: values.signingSecret,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async get(appId: string, id: string, tx: Executor = this.db): Promise<WebhookRow | undefined> {
    return tx.selectFrom('webhooks').selectAll().where('app_id', '=', appId).where('id', '=', id).executeTakeFirst();
  }

  async count(appId: string, tx: Executor = this.db): Promise<number> {
    const row = await tx
      .selectFrom('webhooks')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', appId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** A page of the app's webhooks, oldest first, and how many match in all. */
  async list(appId: string, filter: { nameContains?: string; limit: number; offset: number }, tx: Executor = this.db): Promise<{ rows: WebhookRow[]; total: number }> {
    let query = tx.selectFrom('webhooks').where('app_id', '=', appId);
    if (filter.nameContains) query = query.where('name', 'ilike', `%${escapeLike(filter.nameContains)}%`);
    const rows = await query.selectAll().orderBy('created_at').orderBy('id').limit(filter.limit).offset(filter.offset).execute();
    const total = await query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return { rows, total: Number(total.n) };
  }

  async update(appId: string, id: string, changes: WebhookChanges, tx: Executor = this.db): Promise<WebhookRow | undefined> {
    // Column by column, from the fields the service checked.
    const set: {
      name?: string;
      url?: string;
      use_basic_auth?: boolean;
      username?: string;
      password?: string;
      enabled?: boolean;
      retry_on_failure?: boolean;
      updated_at: Date;
    } = { updated_at: new Date() };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.url !== undefined) set.url = changes.url;
    if (changes.useBasicAuth !== undefined) set.use_basic_auth = changes.useBasicAuth;
    if (changes.username !== undefined) set.username = changes.username;
    if (changes.password !== undefined) set.password = changes.password;
    if (changes.enabled !== undefined) set.enabled = changes.enabled;
    if (changes.retryOnFailure !== undefined) set.retry_on_failure = changes.retryOnFailure;
    return tx.updateTable('webhooks').set(set).where('app_id', '=', appId).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(appId: string, id: string, tx: Executor = this.db): Promise<boolean> {
    const result = await tx.deleteFrom('webhooks').where('app_id', '=', appId).where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** A new signing secret; the current one becomes the previous, signing beside it until `previousUntil`. */
  async rotateSecret(appId: string, id: string, secret: string, previousUntil: Date, tx: Executor = this.db): Promise<boolean> {
    const result = await tx
      .updateTable('webhooks')
      .set((eb) => ({
        previous_signing_secret: eb.ref('signing_secret'),
        previous_secret_expires_at: previousUntil,
        signing_secret: secret,
        updated_at: new Date(),
      }))
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Adds triggers to the webhook's (kept sorted and distinct), in one statement. */
  async addTriggers(appId: string, id: string, triggers: readonly string[], tx: Executor = this.db): Promise<WebhookRow | undefined> {
    return tx
      .updateTable('webhooks')
      .set({
        triggers: sql<string[]>`array(select distinct t from unnest(triggers || ${[...triggers]}::text[]) as t order by t)`,
        updated_at: new Date(),
      })
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  /** Removes triggers from the webhook's, in one statement. */
  async removeTriggers(appId: string, id: string, triggers: readonly string[], tx: Executor = this.db): Promise<WebhookRow | undefined> {
    return tx
      .updateTable('webhooks')
      .set({
        triggers: sql<string[]>`array(select t from unnest(triggers) as t where t <> all(${[...triggers]}::text[]) order by t)`,
        updated_at: new Date(),
      })
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }
}
