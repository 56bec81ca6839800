// The gateway across `parley serve` processes (docs/realtime.md, "Several nodes", "Resume"): on
// one PostgreSQL, two nodes: a message sent through one reaches a socket on the other, and so do
// typing and presence (the NOTIFY bus). Then a node killed with SIGKILL while its client holds a
// last event id, events committed after, and the client's resume on the restarted node: no gap,
// no repeat. On PGlite (one process's database) only the kill runs, on its one node.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { callServer, newDeployment, parseBanner, startServe, type Deployment, type ServerProcess } from '../helpers/cli.js';
import { TEST_ENGINE } from '../helpers/db.js';
import { openAuthed, withDeadline, type WsClient } from '../helpers/ws-client.js';

const TWO_NODES = TEST_ENGINE === 'postgres';
/** A server logs each request: only the end of its output is kept once it listens. */
const KEEP = { keepOutputChars: 50_000 };

let deployment: Deployment;
let secondDir: string | undefined;
/** Node A, and on PostgreSQL node B (the one killed there; A is killed on PGlite). */
const servers: ServerProcess[] = [];
let app: { appId: string; apiKey: string };
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

before(async () => {
  deployment = await newDeployment({ PARLEY_INSECURE_HTTP: '1', PARLEY_WS_PRESENCE_GRACE_MS: '300' }, { migrated: true });
  servers.push(await startServe(deployment.env, undefined, KEEP));
  if (TWO_NODES) {
    secondDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-e2e-'));
    servers.push(await startServe({ ...deployment.env, PARLEY_DATA_DIR: secondDir }, undefined, KEEP));
  }
  const banner = parseBanner(servers[0]!.output());
  app = { appId: banner.appId, apiKey: banner.apiKey };
  for (const uid of ['alice', 'bob', 'carol']) {
    const created = await call(servers[0]!, 'POST', '/v3/users', { uid, name: uid });
    assert.equal(created.status, 200, created.body);
  }
  const befriended = await call(servers[0]!, 'POST', '/v3/users/alice/friends', { accepted: ['bob'] });
  assert.equal(befriended.status, 200, befriended.body);
});
after(async () => {
  agent.destroy();
  await Promise.all(servers.filter((server) => server.child.exitCode === null && server.child.signalCode === null).map((server) => server.stop('SIGTERM')));
  await deployment?.destroy();
  if (secondDir) fs.rmSync(secondDir, { recursive: true, force: true });
});

const call = (server: ServerProcess, method: string, url: string, payload?: unknown, onBehalfOf?: string) => callServer(agent, server, app, method, url, payload, onBehalfOf);

async function tokenOf(server: ServerProcess, uid: string): Promise<string> {
  const response = await call(server, 'POST', `/v3/users/${uid}/auth_tokens`, {});
  assert.equal(response.status, 200, response.body);
  return JSON.parse(response.body).data.authToken;
}

async function send(server: ServerProcess, from: string, to: string, text: string): Promise<string> {
  const response = await call(server, 'POST', '/v3/messages', { receiver: to, receiverType: 'user', category: 'message', type: 'text', data: { text } }, from);
  assert.equal(response.status, 200, response.body);
  return String(JSON.parse(response.body).data.id);
}

const messageSent = (id: string) => (frame: any) => frame.type === 'event' && frame.trigger === 'message_sent' && String(frame.data.message.id) === id;
const sentIds = (client: WsClient) => client.events('message_sent').map((frame) => String(frame.data.message.id));

describe('the gateway on two nodes', { skip: !TWO_NODES && 'two nodes need PostgreSQL' }, () => {
  it('brings a message sent through one node, typing and presence from a socket on it, to a socket on the other', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const bob = await openAuthed(b.port, app.appId, await tokenOf(a, 'bob'));
    const alice = await openAuthed(a.port, app.appId, await tokenOf(a, 'alice'));
    const online = await bob.next((frame) => frame.type === 'presence' && frame.uid === 'alice' && frame.status === 'online');
    assert.equal(typeof online.lastActiveAt, 'number');
    const id = await send(a, 'alice', 'bob', 'across');
    await bob.next(messageSent(id));
    alice.send({ type: 'typing_started', receiver: 'bob', receiverType: 'user' });
    assert.deepEqual(await bob.next((frame) => frame.type === 'typing_started'), { type: 'typing_started', sender: 'alice', receiver: 'bob', receiverType: 'user' });
    await alice.close();
    await bob.next((frame) => frame.type === 'presence' && frame.uid === 'alice' && frame.status === 'offline');
    // Once each: the node that holds alice's socket decides, the other only relays.
    assert.deepEqual(
      bob.frames.filter((frame) => frame.type === 'presence' && frame.uid === 'alice').map((frame) => frame.status),
      ['online', 'offline'],
    );
    await bob.close();
  });
});

describe('a resume after a node was killed', () => {
  it('replays on the restarted node what was committed after the kill, with no gap and no repeat', async () => {
    const victim = servers.length - 1;
    const other = TWO_NODES ? servers[0]! : undefined;
    const token = await tokenOf(servers[victim]!, 'carol');
    const carol = await openAuthed(servers[victim]!.port, app.appId, token);
    const seen = await carol.next(messageSent(await send(servers[victim]!, 'alice', 'carol', 'before the kill')));
    await servers[victim]!.stop('SIGKILL');
    await withDeadline(carol.closed, 'the socket of the killed node to close');
    // Committed after the kill: through the other node while this one is down (PostgreSQL), then through the restarted one.
    const missed: string[] = [];
    if (other) missed.push(await send(other, 'alice', 'carol', 'while down'));
    servers[victim] = await startServe(victim === 0 ? deployment.env : { ...deployment.env, PARLEY_DATA_DIR: secondDir }, undefined, KEEP);
    const restarted = servers[victim]!;
    missed.push(await send(restarted, 'alice', 'carol', 'after the restart'));
    const back = await openAuthed(restarted.port, app.appId, token, seen.id);
    await back.next((frame) => frame.type === 'resumed');
    const live = await send(restarted, 'bob', 'carol', 'live');
    await back.next(messageSent(live));
    assert.deepEqual(sentIds(back), [...missed, live]);
    assert.ok(!back.frames.some((frame) => frame.type === 'resync_required'));
    await back.close();
  });
});
