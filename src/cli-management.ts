/**
 * The `parley admin keys ...` and `parley webhooks ...` commands (docs/management-api.md), run by
 * cli.ts against the database, as `apps` and `keys` are.
 */
import type { Services } from './container.js';
import type { RequestContext } from './domain/context.js';
import type { CreatedManagementKey } from './services/management.service.js';
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
  webhooks delete --app APPID ID`;

/** `parley admin keys create|list|revoke`. */
export async function adminKeysCommand(services: Services, io: CommandIo, sub: string | undefined, flags: ManagementFlags, key: string | undefined): Promise<number> {
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
  return [
    'A management credential (the management API\'s key and secret headers). Keep the secret: it is not shown again.',
    `  Key       ${created.key}`,
    `  Secret    ${created.secret}`,
  ];
}

/** `parley webhooks create|list|delete --app APPID`. */
export async function webhooksCommand(services: Services, io: CommandIo, sub: string | undefined, flags: ManagementFlags, id: string | undefined): Promise<number> {
  if (!flags.app) throw io.usage('--app is required.');
  const ctx = io.context(flags.app.toLowerCase());
  if (sub === 'create') {
    if (!flags.id) throw io.usage('--id is required.');
    if (!flags.url) throw io.usage('--url is required.');
    const auth = flags['basic-auth'];
    const colon = auth?.indexOf(':') ?? -1;
    if (auth !== undefined && colon < 1) throw io.usage('--basic-auth must be USER:PASSWORD.');
    const triggers = (flags.triggers ?? '').split(',').map((name) => name.trim()).filter(Boolean);
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
  throw io.usage(`Unknown command: webhooks ${sub ?? ''}`);
}
