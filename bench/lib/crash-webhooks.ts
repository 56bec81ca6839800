// The webhook part of the crash scenario (issue 22): a webhook on `message_sent` points at a
// receiver in this process; after the kills and restarts, every acknowledged message's
// `message_sent` must reach it at least once, and every copy of one message must carry the same
// X-Parley-Delivery id.
import http from 'node:http';
import type { Receiver } from '../../test/helpers/webhook-receiver.js';
import type { Target } from './crash-clients.js';

export interface WebhookCheck {
  /** Acknowledged message ids whose message_sent never arrived. */
  missing: string[];
  /** Message ids that arrived under more than one delivery id. */
  mixedDeliveryIds: string[];
  /** Message ids that arrived more than once (allowed: at least once), with the same delivery id. */
  duplicates: number;
  received: number;
}

/** The management credential of the first start's banner. */
export function parseManagementKey(output: string): { key: string; secret: string } {
  const key = /Key\s+(\S+)/.exec(output)?.[1];
  const secret = /Secret\s+(\S+)/.exec(output)?.[1];
  if (!key || !secret) throw new Error(`no management credential in:\n${output}`);
  return { key, secret };
}

/** Creates the webhook (retries on) and subscribes it to message_sent, through the management API. */
export async function createCrashWebhook(agent: http.Agent, target: Target, credential: { key: string; secret: string }, url: string): Promise<void> {
  const base = `/mgmt/apps/${target.appId}/webhooks`;
  const created = await managementPost(agent, target, credential, base, { id: 'crash-hook', name: 'crash', webhookURL: url, retryOnFailure: true });
  if (created.status !== 200) throw new Error(`create-webhook answered ${created.status}: ${created.body}`);
  const added = await managementPost(agent, target, credential, `${base}/crash-hook/triggers`, { triggerIds: ['message_sent'] });
  if (added.status !== 200) throw new Error(`add-triggers answered ${added.status}: ${added.body}`);
}

/** Waits (up to `timeoutMs`) for every id of `messageIds` to arrive, then checks the delivery ids. */
export async function checkWebhookDeliveries(receiver: Receiver, messageIds: ReadonlySet<string>, timeoutMs: number): Promise<WebhookCheck> {
  const seen = () => new Set(receiver.received.map((r) => String(r.body?.data?.message?.id)));
  await receiver.waitFor(() => [...messageIds].every((id) => seen().has(id)), timeoutMs).catch(() => undefined);
  const deliveriesOf = new Map<string, Set<string>>();
  for (const r of receiver.received) {
    const id = String(r.body?.data?.message?.id);
    const set = deliveriesOf.get(id) ?? new Set<string>();
    set.add(String(r.headers['x-parley-delivery']));
    deliveriesOf.set(id, set);
  }
  const arrived = seen();
  return {
    missing: [...messageIds].filter((id) => !arrived.has(id)),
    mixedDeliveryIds: [...deliveriesOf].filter(([, set]) => set.size > 1).map(([id]) => id),
    duplicates: receiver.received.length - deliveriesOf.size,
    received: receiver.received.length,
  };
}

function managementPost(agent: http.Agent, target: Target, credential: { key: string; secret: string }, path: string, payload: unknown): Promise<{ status: number; body: string }> {
  const body = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: '127.0.0.1',
        port: target.port,
        method: 'POST',
        path,
        headers: { key: credential.key, secret: credential.secret, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
