// Two `parley serve` processes on one PostgreSQL (issue 22): each event is delivered to the
// webhook's receiver exactly once whichever process stored it, and a live stream on either
// process sees every event. PostgreSQL only: PGlite is one process's database.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createCrashWebhook, parseManagementKey } from '../../bench/lib/crash-webhooks.js';
import { callServer, newDeployment, parseBanner, startServe, type Deployment, type ServerProcess } from '../helpers/cli.js';
import { TEST_ENGINE } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const MESSAGES = 200;

describe('webhooks and streams across two processes on one PostgreSQL', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only' }, () => {
  let deployment: Deployment;
  let secondDir: string;
  let receiver: Receiver;
  const servers: ServerProcess[] = [];
  let app: { appId: string; apiKey: string };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

  before(async () => {
    receiver = await startReceiver();
    deployment = await newDeployment({ PARLEY_INSECURE_HTTP: '1', PARLEY_WEBHOOK_ALLOW_PRIVATE: '1' });
    servers.push(await startServe(deployment.env));
    secondDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-e2e-'));
    servers.push(await startServe({ ...deployment.env, PARLEY_DATA_DIR: secondDir }));
    const banner = parseBanner(servers[0]!.output());
    app = { appId: banner.appId, apiKey: banner.apiKey };
    await createCrashWebhook(agent, { port: servers[0]!.port, ...app }, parseManagementKey(servers[0]!.output()), receiver.url);
    for (const uid of ['alice', 'bob']) {
      const created = await call(servers[0]!, 'POST', '/v3/users', { uid, name: uid });
      assert.equal(created.status, 200, created.body);
    }
  });
  after(async () => {
    agent.destroy();
    await Promise.all(servers.map((server) => server.stop('SIGTERM')));
    await receiver?.close();
    await deployment?.destroy();
    if (secondDir) fs.rmSync(secondDir, { recursive: true, force: true });
  });

  const call = (server: ServerProcess, method: string, path: string, payload?: unknown, onBehalfOf?: string) => callServer(agent, server, app, method, path, payload, onBehalfOf);

  /** A live stream of message_sent on `server`: the message ids it got. */
  function stream(server: ServerProcess): Promise<{ ids: string[]; close(): void }> {
    return new Promise((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port: server.port, path: '/v3/events?triggers=message_sent', headers: { appid: app.appId, apikey: app.apiKey, accept: 'text/event-stream' } },
        (res) => {
          assert.equal(res.statusCode, 200);
          const ids: string[] = [];
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const data = buffer
                .slice(0, end)
                .split('\n')
                .find((line) => line.startsWith('data: '));
              buffer = buffer.slice(end + 2);
              if (data) ids.push(String(JSON.parse(data.slice(6)).data.message.id));
            }
          });
          resolve({ ids, close: () => req.destroy() });
        },
      );
      req.on('error', reject);
    });
  }

  it('delivers each event once to the receiver, and both streams see every event', async () => {
    const streams = await Promise.all(servers.map(stream));
    try {
      // Sends spread over both processes, eight at a time.
      const sent: string[] = [];
      for (let n = 0; n < MESSAGES; n += 8) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(8, MESSAGES - n) }, (_, k) =>
            call(servers[(n + k) % 2]!, 'POST', '/v3/messages', { receiver: 'bob', receiverType: 'user', category: 'message', type: 'text', data: { text: `m${n + k}` } }, 'alice'),
          ),
        );
        for (const response of batch) {
          assert.equal(response.status, 200, response.body);
          sent.push(String(JSON.parse(response.body).data.id));
        }
      }
      await receiver.waitFor((r) => new Set(r.map((d) => String(d.body.data.message.id))).size >= MESSAGES, 30_000);
      // Both processes run the fan-out and the sender: a second copy would arrive within this.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const ids = receiver.received.map((d) => String(d.body.data.message.id));
      assert.equal(ids.length, MESSAGES, 'each event once');
      assert.deepEqual([...new Set(ids)].sort(), [...sent].sort());
      assert.equal(new Set(receiver.received.map((d) => d.headers['x-parley-delivery'])).size, MESSAGES);
      // One conversation: delivered in the order of the log.
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => Number(a) - Number(b)),
      );
      const deadline = Date.now() + 10_000;
      while (streams.some((s) => s.ids.length < MESSAGES) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      for (const s of streams) assert.deepEqual([...s.ids].sort(), [...sent].sort());
    } finally {
      for (const s of streams) s.close();
    }
  });
});
