// The servers of the notifications bench (bench/notifications.ts) and what they hold, seeded
// through the API as an app would be: bench/parley-server.ts seeds the users (seed-0 ...); here
// FCM tokens (an auth token for each user, as a device gets, then the token registered with
// it), and on the server whose app notifies, a group of `groupSize` members and its owner, and
// the app's FCM provider: a service account of the fake FCM (bench/lib/notification-fcm.ts).
import http from 'node:http';
import { startServerProcess } from './processes.js';
import { call, now, PAIRS, type Parley } from './webhook-sends.js';

/** The notified group's GUID; its owner (the sender of its messages) is seed-<groupSize>. */
export const GROUP = 'notify-group';
/** Requests of the seeding in flight at once. */
const SEEDING_CONCURRENCY = 32;
/** Memberships per data import call. */
const IMPORT_BATCH = 5_000;

/** The fake FCM's process: its control port, and where the server must send. */
export type FakeFcmProcess = Awaited<ReturnType<typeof startServerProcess<{ port: number; fcmUrl: string; origin: string }>>>;

/** Users seeded on each server: the group's members and its owner, and at least the 1:1 load's pairs. */
export function usersFor(groupSize: number): number {
  return Math.max(groupSize + 1, PAIRS * 2);
}

/**
 * A bench server (bench/parley-server.ts) on the engine given, which may send to the fake FCM:
 * the provider endpoints point there (its token URI is http on loopback, hence
 * PARLEY_WEBHOOK_ALLOW_PRIVATE). Whether it notifies is up to its app's providers.
 */
export function startNotificationServer(options: { engine: 'pglite' | 'postgres'; databaseUrl?: string; users: number; fcm: FakeFcmProcess }): Promise<Parley> {
  return startServerProcess('parley-server.ts', {
    BENCH_ENGINE: options.engine,
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    BENCH_USERS: String(options.users),
    BENCH_HISTORY: '',
    PARLEY_FCM_URL: options.fcm.info.fcmUrl,
    PARLEY_FCM_TOKEN_ORIGINS: options.fcm.info.origin,
    PARLEY_WEBHOOK_ALLOW_PRIVATE: '1',
  });
}

/** A request to the bench server as its app (onBehalfOf: as that user); the parsed answer, or an Error naming what failed. */
export function api<T = any>(agent: http.Agent, server: Parley, method: string, path: string, body?: unknown, onBehalfOf?: string): Promise<{ status: number; body: T; at: number }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: '127.0.0.1',
        port: server.info.port,
        method,
        path,
        headers: {
          appid: server.info.appId,
          apikey: server.info.apiKey,
          ...(onBehalfOf ? { onbehalfof: onBehalfOf } : {}),
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          const at = now();
          const status = res.statusCode ?? 0;
          resolve({ status, body: text ? JSON.parse(text) : undefined, at });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function ok<T = any>(what: string, answer: Promise<{ status: number; body: T }>): Promise<T> {
  const { status, body } = await answer;
  if (status !== 200) throw new Error(`${what} answered ${status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/** Runs `work` for every item, `concurrency` at a time. */
async function eachAtOnce<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/**
 * What a server holds for the bench: one FCM token for each receiver of the 1:1 load (seed-1,
 * seed-3 ... seed-<2 × PAIRS - 1>), and with `group`, the group (seed-0 ... seed-<groupSize - 1>,
 * its memberships imported in batches, and its owner seed-<groupSize>) with a token for each
 * member. The token of seed-N is `bench-fcm-token-<tag>-N`.
 */
export async function seedRecipients(server: Parley, options: { groupSize: number; group: boolean; tag: string }): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: SEEDING_CONCURRENCY });
  const { groupSize, tag } = options;
  try {
    const holders = new Set(Array.from({ length: PAIRS }, (_, p) => p * 2 + 1));
    if (options.group) {
      await ok('create the group', api(agent, server, 'POST', '/v3/groups', { guid: GROUP, name: 'Notified group', type: 'public', owner: `seed-${groupSize}` }));
      for (let from = 0; from < groupSize; from += IMPORT_BATCH) {
        const members: Record<string, { memberId: string; guid: string; uid: string }> = {};
        for (let i = from; i < Math.min(groupSize, from + IMPORT_BATCH); i++) {
          const memberId = `${GROUP}_member_seed-${i}`;
          members[memberId] = { memberId, guid: GROUP, uid: `seed-${i}` };
        }
        const imported = await ok<{ data: Record<string, { success: boolean; error?: { code: string } }> }>('import the members', api(agent, server, 'POST', '/v3/data_import/members', { members }));
        const refused = Object.values(imported.data).filter((record) => !record.success);
        if (refused.length > 0) throw new Error(`${refused.length} memberships refused, e.g. ${JSON.stringify(refused[0])}`);
      }
      for (let i = 0; i < groupSize; i++) holders.add(i);
    }
    await eachAtOnce([...holders], SEEDING_CONCURRENCY, async (n) => {
      const session = await ok<{ data: { authToken: string } }>('create an auth token', api(agent, server, 'POST', `/v3/users/seed-${n}/auth_tokens`, {}));
      const fcmToken = `bench-fcm-token-${tag}-${n}`;
      await ok('register a push token', api(agent, server, 'POST', '/v3/notifications/push/v1/tokens', { authToken: session.data.authToken, platform: 'fcm_android', fcmToken }));
    });
  } finally {
    agent.destroy();
  }
}

/** Gives the server's app an FCM provider: a new service account of the fake FCM. From now on, its sends notify. */
export async function addFcmProvider(server: Parley, fcm: FakeFcmProcess): Promise<void> {
  const account = await call(fcm.info.port, `/_account?project=bench-${server.info.appId}`);
  const agent = new http.Agent({ keepAlive: false });
  try {
    await ok('add the FCM provider', api(agent, server, 'POST', '/v3/notifications/push/v1/providers/fcm', { providerId: 'fcm-bench', serviceAccountCreds: account }));
  } finally {
    agent.destroy();
  }
}
