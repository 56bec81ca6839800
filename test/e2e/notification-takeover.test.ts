// A server killed (`kill -9`) while a push notification is being sent, and started again on the
// same database (issue 40): the recipient's lane is taken over within seconds (not when its lease
// ends), the notification is not sent to the device again (it was recorded before the send), and
// the recipient's next notification goes out.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { callServer, newDeployment, parseBanner, startServe, type Deployment, type ServerProcess } from '../helpers/cli.js';
import { TEST_ENGINE } from '../helpers/db.js';
import { startFakeFcm, type FakeFcm } from '../helpers/fake-providers/fcm.js';

describe(`push notifications of a killed server (${TEST_ENGINE})`, () => {
  let deployment: Deployment;
  let fcm: FakeFcm;
  let server: ServerProcess | undefined;
  const agent = new http.Agent({ keepAlive: false });

  before(async () => {
    fcm = await startFakeFcm();
    deployment = await newDeployment(
      { PARLEY_INSECURE_HTTP: '1', PARLEY_WEBHOOK_ALLOW_PRIVATE: '1', PARLEY_FCM_URL: fcm.baseUrl, PARLEY_FCM_TOKEN_ORIGINS: fcm.origin, PARLEY_SECRET_KEY: 'k'.repeat(40) },
      { migrated: true },
    );
  });
  after(async () => {
    agent.destroy();
    await server?.stop('SIGKILL');
    await fcm?.close();
    await deployment?.destroy();
  });

  const call = async (target: ServerProcess, app: { appId: string; apiKey: string }, method: string, path: string, payload?: unknown, onBehalfOf?: string) => {
    const response = await callServer(agent, target, app, method, path, payload, onBehalfOf);
    return { status: response.status, body: response.body ? JSON.parse(response.body) : undefined };
  };

  async function until(predicate: () => boolean, what: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('does not send the interrupted notification again, and sends the next one within seconds of the restart', async () => {
    server = await startServe(deployment.env);
    const banner = parseBanner(server.output());
    const app = { appId: banner.appId, apiKey: banner.apiKey };
    const ok = async (method: string, path: string, payload?: unknown, onBehalfOf?: string) => {
      const response = await call(server!, app, method, path, payload, onBehalfOf);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.data;
    };
    await ok('POST', '/v3/notifications/push/v1/providers/fcm', { providerId: 'fcm', serviceAccountCreds: fcm.serviceAccount('proj') });
    for (const uid of ['alice', 'bob']) await ok('POST', '/v3/users', { uid, name: uid });
    const { authToken } = await ok('POST', '/v3/users/bob/auth_tokens', {});
    await ok('POST', '/v3/notifications/push/v1/tokens', { authToken, platform: 'fcm_android', fcmToken: 'bobs-phone-0123456789-abcdefghij' });
    // The first send is never answered: the server is killed while it waits.
    fcm.script({ status: 200, hang: true });
    const first = await ok('POST', '/v3/messages', { receiver: 'bob', receiverType: 'user', category: 'message', type: 'text', data: { text: 'one' } }, 'alice');
    await until(() => fcm.requests.length >= 1, 'the first send', 20_000);
    await server.stop('SIGKILL');
    server = await startServe(deployment.env);
    const second = await ok('POST', '/v3/messages', { receiver: 'bob', receiverType: 'user', category: 'message', type: 'text', data: { text: 'two' } }, 'alice');
    // Behind the first in bob's lane: without the takeover it waits for the lease (40 s here).
    await until(() => fcm.sends.some((s) => s.body.message.data.messageId === String(second.id)), 'the second notification', 20_000);
    const ofFirst = fcm.requests.filter((s) => s.body.message.data.messageId === String(first.id));
    assert.equal(ofFirst.length, 1, 'the interrupted notification was sent again');
    assert.deepEqual(fcm.problems, []);
  });
});
