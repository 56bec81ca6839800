// The demo chat page (packages/demo, docs/demo.md) in headless Chromium, as two users in two
// browser contexts, against a real `parley serve` (PARLEY_DEMO=1, plain HTTP on loopback): typing,
// a message, its read receipt; then a kill -9 of the server and a restart on the same port and
// data, after which the page resumes from its last event id and shows what was sent meanwhile,
// once. The browser is the machine's Chromium (PARLEY_CHROMIUM, default /usr/bin/chromium; CI
// installs it), driven by playwright-core, which downloads no browser of its own. A missing
// browser fails the test: it is never skipped.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { callServer, type Deployment, newDeployment, parseBanner, type ServerProcess, startServe } from '../helpers/cli.js';
import { TEST_ENGINE } from '../helpers/db.js';

/** The page's DOM, in the functions run in the browser (this file is compiled without the DOM's types). */
declare const document: any;

const CHROMIUM = process.env.PARLEY_CHROMIUM || '/usr/bin/chromium';
/**
 * The machine's network is closed: without these Chromium waits on connections to Google's
 * services (components, sync, QUIC probes). Playwright gives every launch a fresh user-data-dir.
 */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** A deadline for what the page should show, generous (a shared machine); no step sleeps. */
const SHOWN_MS = 30_000;
/** A restarted client retries with backoff (up to 8 s after a few seconds away): enough to come back. */
const RECONNECTED_MS = 60_000;

interface User {
  uid: string;
  authToken: string;
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the page's script. */
  errors: string[];
}

describe(`the demo chat page in headless Chromium (${TEST_ENGINE})`, () => {
  let deployment: Deployment;
  let server: ServerProcess;
  let app: { appId: string; apiKey: string };
  let browser: Browser;
  const agent = new http.Agent({ keepAlive: false });
  let alice: User;
  let bob: User;

  const api = async (method: string, path: string, payload?: unknown, onBehalfOf?: string) => {
    const reply = await callServer(agent, server, app, method, path, payload, onBehalfOf);
    assert.ok(reply.status < 300, `${method} ${path}: ${reply.status} ${reply.body}`);
    return JSON.parse(reply.body).data;
  };
  const base = () => `http://127.0.0.1:${server.port}`;

  async function signIn(uid: string, authToken: string): Promise<User> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    await page.goto(`${base()}/demo/`);
    await page.fill('#app-id', app.appId);
    await page.fill('#uid', uid);
    await page.fill('#auth-token', authToken);
    await page.click('#sign-in button[type=submit]');
    await connected(page);
    assert.ok(!page.url().includes(authToken), "the token is never in the page's url");
    return { uid, authToken, context, page, errors };
  }
  const connected = (page: Page, timeout = SHOWN_MS) => page.waitForFunction(() => document.getElementById('state')?.dataset.state === 'open', undefined, { timeout });
  const disconnected = (page: Page) => page.waitForFunction(() => document.getElementById('state')?.dataset.state !== 'open', undefined, { timeout: SHOWN_MS });
  async function openChat(user: User, peer: string) {
    await user.page.fill('#peer', peer);
    await user.page.click('#open button[type=submit]');
    await user.page.waitForFunction((name) => document.getElementById('title')?.textContent === name, peer === 'alice' ? 'Alice' : 'Bob', { timeout: SHOWN_MS });
  }
  /** The messages the page shows, in order: who sent each, its text, its receipt. */
  const shown = (user: User) =>
    user.page.$$eval('#messages li', (items) =>
      items.map((item: any) => ({
        id: (item as any).dataset.id!,
        sender: (item as any).dataset.sender!,
        text: item.querySelector('.text')!.textContent!,
        receipt: item.querySelector('.receipt')!.textContent!,
      })),
    );
  const showsText = (user: User, text: string, own: boolean) =>
    user.page.waitForFunction(
      ([text, selector]) => [...document.querySelectorAll(selector!)].some((item: any) => item.querySelector('.text')?.textContent === text),
      [text, own ? '#messages li.own' : '#messages li.theirs'],
      { timeout: SHOWN_MS },
    );
  const showsRead = (user: User, text: string) =>
    user.page.waitForFunction(
      (text) => [...document.querySelectorAll('#messages li.own')].some((item: any) => item.querySelector('.text')?.textContent === text && item.querySelector('.receipt')?.textContent === 'Read'),
      text,
      { timeout: RECONNECTED_MS },
    );

  before(async () => {
    if (!fs.existsSync(CHROMIUM)) assert.fail(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set PARLEY_CHROMIUM): the browser test cannot run`);
    deployment = await newDeployment({ PARLEY_DEMO: '1', PARLEY_INSECURE_HTTP: '1' }, { migrated: true });
    server = await startServe(deployment.env, 60_000, { keepOutputChars: 20_000 });
    app = parseBanner(server.output());
    await api('POST', '/v3/users', { uid: 'alice', name: 'Alice' });
    await api('POST', '/v3/users', { uid: 'bob', name: 'Bob' });
    const aliceToken = (await api('POST', '/v3/users/alice/auth_tokens', {})).authToken;
    const bobToken = (await api('POST', '/v3/users/bob/auth_tokens', {})).authToken;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
    alice = await signIn('alice', aliceToken);
    bob = await signIn('bob', bobToken);
  });
  after(async () => {
    await browser?.close();
    if (server && server.child.exitCode === null) await server.stop('SIGKILL');
    agent.destroy();
    await deployment?.destroy();
  });

  it('shows typing, delivers a message live, marks it read when shown, and shows the sender its receipt', async () => {
    await openChat(alice, 'bob');
    await openChat(bob, 'alice');

    // Alice types: Bob sees the indicator (typing_started through the client's throttle).
    await alice.page.fill('#draft', 'Hello Bob');
    await bob.page.waitForFunction(() => document.getElementById('typing')?.textContent === 'Alice is typing…', undefined, { timeout: SHOWN_MS });

    // She sends: Bob sees the message live, and the indicator ends (the send ends it).
    await alice.page.click('#composer button[type=submit]');
    await showsText(bob, 'Hello Bob', false);
    await bob.page.waitForFunction(() => document.getElementById('typing')?.textContent === '', undefined, { timeout: SHOWN_MS });

    // Shown to Bob, so marked read: Alice's page gets the read receipt.
    await showsRead(alice, 'Hello Bob');
    const [sent] = await shown(alice);
    assert.deepEqual(await shown(bob), [{ id: sent!.id, sender: 'alice', text: 'Hello Bob', receipt: '' }]);
    assert.deepEqual(await shown(alice), [{ id: sent!.id, sender: 'alice', text: 'Hello Bob', receipt: 'Read' }]);
    // Bob's read mark is the server's too.
    const [stored] = await api('GET', '/v3/users/bob/messages', undefined, 'alice');
    assert.equal(stored.id, sent!.id);
    assert.equal(typeof stored.readAt, 'number', JSON.stringify(stored));
  });

  it('after a kill -9 and a restart on the same port, resumes and shows what was sent meanwhile, once', async () => {
    const port = server.port;
    await server.stop('SIGKILL');
    await disconnected(alice.page);
    await disconnected(bob.page);
    // Bob stays away until Alice has sent, so that his page gets her messages by resuming.
    await bob.context.setOffline(true);

    // Sent while the server is down: refused, the draft kept to be sent again.
    await alice.page.fill('#draft', 'Sent during the restart');
    await alice.page.click('#composer button[type=submit]');
    await alice.page.waitForFunction(() => /Not sent/.test(document.getElementById('chat-error')?.textContent ?? ''), undefined, { timeout: SHOWN_MS });
    assert.equal(await alice.page.inputValue('#draft'), 'Sent during the restart');

    server = await startServe(Object.assign({}, deployment.env, { PARLEY_PORT: String(port) }), 60_000, { keepOutputChars: 20_000 });
    assert.equal(server.port, port);
    // Sent again (the same muid), once the server is back; and one more.
    await alice.page.click('#composer button[type=submit]');
    await showsText(alice, 'Sent during the restart', true);
    assert.equal(await alice.page.inputValue('#draft'), '');
    await alice.page.fill('#draft', 'And after it');
    await alice.page.click('#composer button[type=submit]');
    await showsText(alice, 'And after it', true);

    await bob.context.setOffline(false);
    await connected(bob.page, RECONNECTED_MS);
    await showsText(bob, 'And after it', false);
    await connected(alice.page, RECONNECTED_MS);
    // Bob was shown both, so marked them read: Alice sees it once her page is back.
    await showsRead(alice, 'And after it');

    const expected = ['Hello Bob', 'Sent during the restart', 'And after it'];
    const bobSees = await shown(bob);
    const aliceSees = await shown(alice);
    assert.deepEqual(
      bobSees.map((message) => message.text),
      expected,
    );
    assert.deepEqual(
      aliceSees.map((message) => message.text),
      expected,
    );
    assert.deepEqual(
      bobSees.map((message) => message.id),
      aliceSees.map((message) => message.id),
    );
    assert.deepEqual(
      aliceSees.map((message) => message.receipt),
      ['Read', 'Read', 'Read'],
    );
    // The server stored each once: the send retried after the refusal reused its muid.
    const stored = await api('GET', '/v3/users/alice/messages?limit=10', undefined, 'bob');
    assert.deepEqual(
      stored.filter((message: any) => message.category === 'message').map((message: any) => message.data.text),
      expected,
    );
    assert.deepEqual([...alice.errors, ...bob.errors], []);
  });
});
