// A server killed (`kill -9`) while a webhook's delivery is in flight, and started again on the
// same database (issue 40): its lanes are taken over as soon as its claim lock's session is gone,
// not when their lease ends (four receiver timeouts: here two minutes), and the re-post carries
// the delivery's id.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createCrashWebhook, parseManagementKey } from '../../bench/lib/crash-webhooks.js';
import { callServer, newDeployment, parseBanner, startServe, type Deployment, type ServerProcess } from '../helpers/cli.js';
import { TEST_ENGINE } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

describe(`webhook lanes of a killed server (${TEST_ENGINE})`, () => {
  let deployment: Deployment;
  let receiver: Receiver;
  let server: ServerProcess | undefined;
  const agent = new http.Agent({ keepAlive: false });

  before(async () => {
    // The first post is held (never answered before the kill); later ones are answered at once.
    receiver = await startReceiver((_request, n) => (n === 0 ? { status: 200, delayMs: 300_000 } : { status: 200 }));
    // A 30 s receiver timeout: a lease of 120 s, far beyond the wait below.
    deployment = await newDeployment({ PARLEY_INSECURE_HTTP: '1', PARLEY_WEBHOOK_ALLOW_PRIVATE: '1', PARLEY_WEBHOOK_TIMEOUT_MS: '30000' }, { migrated: true });
  });
  after(async () => {
    agent.destroy();
    await server?.stop('SIGKILL');
    await receiver?.close();
    await deployment?.destroy();
  });

  const call = (target: ServerProcess, app: { appId: string; apiKey: string }, method: string, path: string, payload?: unknown, onBehalfOf?: string) =>
    callServer(agent, target, app, method, path, payload, onBehalfOf);

  it('re-posts the in-flight delivery, with its id, within seconds of the restart', async () => {
    server = await startServe(deployment.env);
    const banner = parseBanner(server.output());
    const app = { appId: banner.appId, apiKey: banner.apiKey };
    await createCrashWebhook(agent, { port: server.port, ...app }, parseManagementKey(server.output()), receiver.url);
    for (const uid of ['alice', 'bob']) assert.equal((await call(server, app, 'POST', '/v3/users', { uid, name: uid })).status, 200);
    const sent = await call(server, app, 'POST', '/v3/messages', { receiver: 'bob', receiverType: 'user', category: 'message', type: 'text', data: { text: 'hello' } }, 'alice');
    assert.equal(sent.status, 200, sent.body);
    const [first] = await receiver.waitFor((received) => received.length >= 1, 20_000);
    await server.stop('SIGKILL');
    server = await startServe(deployment.env);
    // Without the takeover the lane waits for its lease (120 s after the claim).
    const received = await receiver.waitFor((all) => all.length >= 2, 30_000);
    assert.equal(received[1]!.headers['x-parley-delivery'], first!.headers['x-parley-delivery']);
    assert.equal(received[1]!.body.data.message.id, first!.body.data.message.id);
    assert.equal(received[1]!.headers['x-parley-attempt'], '1', 'the killed attempt was never recorded');
  });
});
