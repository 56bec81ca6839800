/**
 * The `parley admin keys ...` and `parley webhooks ...` commands (docs/management-api.md; the
 * delivery log, redelivery and secret rotation: docs/webhooks.md), run by cli.ts against the
 * database, as `apps` and `keys` are, through the services the management API's routes use.
 */
import type { Services } from './container.js';
import type { RequestContext } from './domain/context.js';
import { UNIX_SECONDS_MAX } from './domain/normalize.js';
import { isDeliveryId } from './domain/webhooks.js';
import type { CreatedManagementKey } from './services/management.service.js';
import type { Delivery } from './services/webhook-deliveries.service.js';
import type { Webhook } from './services/webhooks.service.js';

export interface ManagementFlags {
  json?: boolean;
  name?: string;
  app?: string;
  id?: string;
  url?: string;
  triggers?: string;
  'basic-auth'?: string;
  retry?: boolean;
  disabled?: boolean;
  status?: string;
  limit?: string;
  since?: string;
  overlap?: string;
}

/** What the commands need from cli.ts: a context for an app, and its usage error. */
export interface CommandIo {
  context(appId: string): RequestContext;
  usage(message: string): Error;
}

export const MANAGEMENT_USAGE = `  admin keys create [--name NAME] [--json]
                                 Create a management credential (the key and secret headers of
                                 the management API); --json prints {"key": ..., "secret": ...}
  admin keys list [--json]
  admin keys revoke KEY          Revoke a management credential at once
  webhooks create --app APPID --id ID --url URL [--name NAME] [--triggers a,b,...]
      [--basic-auth USER:PASSWORD] [--retry] [--disabled] [--json]
  webhooks list --app APPID [--json]
  webhooks delete --app APPID ID
  webhooks deliveries --app APPID ID [--status pending|delivered|failed] [--limit 100] [--json]
                                 The webhook's deliveries, newest first (docs/webhooks.md)
  webhooks redeliver --app APPID ID (DELIVERY_ID | --since UNIX_SECONDS) [--json]
                                 Deliver one delivery again, or every failed one since then
  webhooks rotate-secret --app APPID ID [--overlap 86400] [--json]
                                 A new signing secret, shown once; the old one keeps signing
                                 beside it for --overlap seconds`;

/** The usage errors of `admin keys`, which need no database: cli.ts checks them before opening it. */
export function adminKeysUsage(io: Pick<CommandIo, 'usage'>, sub: string | undefined, key: string | undefined): void {
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke') throw io.usage(`Unknown command: admin keys ${sub ?? ''}`);
  if (sub === 'revoke' && !key) throw io.usage('admin keys revoke needs the key to revoke: parley admin keys revoke KEY');
}

/** `parley admin keys create|list|revoke`. */
export async function adminKeysCommand(services: Services, io: CommandIo, sub: string | undefined, flags: ManagementFlags, key: string | undefined): Promise<number> {
  adminKeysUsage(io, sub, key);
  const ctx = io.context('');
  if (sub === 'create') {
    const created = await services.management.createKey(ctx, { name: flags.name });
    // Tooling reads this line: exactly one JSON object on stdout.
    if (flags.json) console.log(JSON.stringify({ key: created.key, secret: created.secret }));
    else console.log(managementKeyLines(created).join('\n'));
    return 0;
  }
  if (sub === 'list') {
    const keys = await services.management.listKeys(ctx);
    if (flags.json) console.log(JSON.stringify(keys));
    else if (!keys.length) console.log('No management credentials. Create one with: parley admin keys create');
    else for (const row of keys) console.log(`${row.key}\t${new Date(row.createdAt * 1000).toISOString()}\t${row.name}`);
    return 0;
  }
  if (sub === 'revoke') {
    if (!key) throw io.usage('admin keys revoke needs the key to revoke: parley admin keys revoke KEY');
    if (!(await services.management.revokeKey(ctx, key))) {
      console.error(`parley: no management credential has the key ${key}.`);
      return 1;
    }
    console.log(`Revoked the management credential ${key}.`);
    return 0;
  }
  throw io.usage(`Unknown command: admin keys ${sub ?? ''}`);
}

/** The lines that show a new credential (its secret is not shown again). */
export function managementKeyLines(created: CreatedManagementKey): string[] {
  return ["A management credential (the management API's key and secret headers). Keep the secret: it is not shown again.", `  Key       ${created.key}`, `  Secret    ${created.secret}`];
}

/** `parley webhooks create|list|delete|deliveries|redeliver|rotate-secret --app APPID`. */
export async function webhooksCommand(services: Services, io: CommandIo, sub: string | undefined, flags: ManagementFlags, id: string | undefined, deliveryId?: string): Promise<number> {
  if (!flags.app) throw io.usage('--app is required.');
  const ctx = io.context(flags.app.toLowerCase());
  if (sub === 'create') {
    if (!flags.id) throw io.usage('--id is required.');
    if (!flags.url) throw io.usage('--url is required.');
    const auth = flags['basic-auth'];
    const colon = auth?.indexOf(':') ?? -1;
    if (auth !== undefined && colon < 1) throw io.usage('--basic-auth must be USER:PASSWORD.');
    const triggers = (flags.triggers ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    const created = await services.webhooks.create(
      ctx,
      {
        id: flags.id,
        name: flags.name ?? flags.id,
        webhookURL: flags.url,
        useBasicAuth: auth !== undefined,
        username: auth?.slice(0, colon),
        password: auth?.slice(colon + 1),
        enabled: !flags.disabled,
        retryOnFailure: flags.retry ?? false,
      },
      triggers,
    );
    const subscribed = (await services.webhooks.listTriggers(ctx, created.id)).data.map((trigger) => trigger.id);
    if (flags.json) {
      console.log(JSON.stringify(Object.assign({}, created, { triggers: subscribed })));
      return 0;
    }
    console.log(
      [
        `Created the webhook ${created.id} of app ${ctx.appId}: ${created.webhookURL}${created.enabled ? '' : ' (disabled)'}`,
        `  Triggers        ${subscribed.join(', ') || 'none yet (add them with the add-triggers operation)'}`,
        `  Signing secret  ${created.signingSecret}   (keep it: it is not shown again)`,
      ].join('\n'),
    );
    return 0;
  }
  if (sub === 'list') {
    const rows: Array<Webhook & { triggers: string[] }> = [];
    for (let page = 1; ; page++) {
      const { data, meta } = await services.webhooks.list(ctx, { page, perPage: 100 });
      for (const webhook of data) {
        const triggers = (await services.webhooks.listTriggers(ctx, webhook.id)).data.map((trigger) => trigger.id);
        rows.push(Object.assign({}, webhook, { triggers }));
      }
      if (page >= meta.pagination.total_pages) break;
    }
    if (flags.json) console.log(JSON.stringify(rows));
    else if (!rows.length) console.log(`No webhooks in app ${ctx.appId}.`);
    else for (const row of rows) console.log(`${row.id}\t${row.enabled ? 'enabled' : 'disabled'}\t${row.webhookURL}\t${row.triggers.join(',')}`);
    return 0;
  }
  if (sub === 'delete') {
    if (!id) throw io.usage('webhooks delete needs the webhook id: parley webhooks delete --app APPID ID');
    await services.webhooks.delete(ctx, id);
    console.log(`Deleted the webhook ${id} of app ${ctx.appId}.`);
    return 0;
  }
  if (sub === 'deliveries') return deliveriesCommand(services, io, ctx, flags, id);
  if (sub === 'redeliver') return redeliverCommand(services, io, ctx, flags, id, deliveryId);
  if (sub === 'rotate-secret') return rotateSecretCommand(services, io, ctx, flags, id);
  throw io.usage(`Unknown command: webhooks ${sub ?? ''}`);
}

const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

/** `parley webhooks deliveries --app APPID ID [--status S] [--limit N] [--json]`: the delivery log, newest first. */
async function deliveriesCommand(services: Services, io: CommandIo, ctx: RequestContext, flags: ManagementFlags, id: string | undefined): Promise<number> {
  if (!id) throw io.usage('webhooks deliveries needs the webhook id: parley webhooks deliveries --app APPID ID');
  const status = DELIVERY_STATUSES.find((value) => value === flags.status);
  if (flags.status !== undefined && !status) throw io.usage(`--status must be ${DELIVERY_STATUSES.join(', ')}.`);
  const limit = integerFlag(io, flags.limit, 'limit', 1, 1000);
  const { data, meta } = await services.webhookDeliveries.list(ctx, id, { status, limit });
  if (flags.json) console.log(JSON.stringify(data));
  else if (!data.length) console.log(`No ${status ? `${status} ` : ''}deliveries for the webhook ${id} of app ${ctx.appId}.`);
  else {
    for (const delivery of data) console.log(deliveryLine(delivery));
    if (meta.next) console.log(`(the newest ${data.length}; --limit shows up to 1000)`);
  }
  return 0;
}

/** A delivery in a line: id, status, trigger, attempts, last HTTP status, last attempt, last error (`-`: none). */
function deliveryLine(delivery: Delivery): string {
  const at = delivery.lastAttemptAt === null ? '-' : new Date(delivery.lastAttemptAt * 1000).toISOString();
  return [delivery.id, delivery.status, delivery.trigger, delivery.attempts, delivery.lastResponseCode ?? '-', at, delivery.lastError ?? '-'].join('\t');
}

/** `parley webhooks redeliver --app APPID ID DELIVERY_ID`, or `--since UNIX_SECONDS` for every failed one since then. */
async function redeliverCommand(services: Services, io: CommandIo, ctx: RequestContext, flags: ManagementFlags, id: string | undefined, deliveryId: string | undefined): Promise<number> {
  const usage = 'parley webhooks redeliver --app APPID ID DELIVERY_ID, or --app APPID ID --since UNIX_SECONDS';
  if (!id) throw io.usage(`webhooks redeliver needs the webhook id: ${usage}`);
  if ((deliveryId === undefined) === (flags.since === undefined)) throw io.usage(`webhooks redeliver needs a delivery id or --since (not both): ${usage}`);
  if (deliveryId !== undefined && !isDeliveryId(deliveryId)) throw io.usage(`${deliveryId} is not a delivery id (the digits 'webhooks deliveries' lists).`);
  const result =
    deliveryId !== undefined
      ? await services.webhookDeliveries.redeliver(ctx, id, deliveryId)
      : await services.webhookDeliveries.redeliverFailed(ctx, id, integerFlag(io, flags.since, 'since', 0, UNIX_SECONDS_MAX)!);
  if (flags.json) console.log(JSON.stringify(result));
  else console.log(result.message);
  return 0;
}

/** `parley webhooks rotate-secret --app APPID ID [--overlap SECONDS] [--json]`: prints the new secret, once. */
async function rotateSecretCommand(services: Services, io: CommandIo, ctx: RequestContext, flags: ManagementFlags, id: string | undefined): Promise<number> {
  if (!id) throw io.usage('webhooks rotate-secret needs the webhook id: parley webhooks rotate-secret --app APPID ID [--overlap SECONDS]');
  const overlap = integerFlag(io, flags.overlap, 'overlap', 0, 7 * 86_400);
  const rotated = await services.webhooks.rotateSecret(ctx, id, overlap);
  if (flags.json) {
    console.log(JSON.stringify(rotated));
    return 0;
  }
  const until = rotated.previousSecretExpiresAt * 1000;
  console.log(
    [
      `A new signing secret for the webhook ${id} of app ${ctx.appId}. Keep it: it is not shown again.`,
      `  Signing secret  ${rotated.signingSecret}`,
      until > Date.now()
        ? `  The previous secret also signs deliveries until ${new Date(until).toISOString()} (deliveries carry a v1= signature with each).`
        : '  The previous secret no longer signs deliveries.',
    ].join('\n'),
  );
  return 0;
}

/** An integer flag from `min` to `max`, or undefined when not given. */
function integerFlag(io: CommandIo, raw: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^[0-9]+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) throw io.usage(`--${flag} must be an integer from ${min} to ${max}.`);
  return value;
}
