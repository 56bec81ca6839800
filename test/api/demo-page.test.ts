import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildApp, type ParleyApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { PAGE_DIR } from '../../src/http/demo/demo.routes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

// The demo page (docs/demo.md): served at /demo/ only with PARLEY_DEMO=1, from a fixed table of
// files; everything else under /demo/ (a path that climbs out, encoded or not) is the API's 404.

const config = { region: 'us' as const, domain: 'parley.test', bodyLimit: 1024 * 1024 };

async function appWith(demo: boolean | undefined): Promise<{ parley: ParleyApp; db: TestDatabase }> {
  const db = await createTestDatabase();
  const parley = await buildApp({ config: demo === undefined ? config : Object.assign({ demo }, config), database: db.database });
  return { parley, db };
}

/** A request over a real socket, the path sent as written (no client-side normalising of `..`). */
function rawGet(port: number, target: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: target, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('demo page: off', () => {
  it('is off by default (PARLEY_DEMO absent), and 1 turns it on', () => {
    assert.equal(loadConfig({}).demo, false);
    assert.equal(loadConfig({ PARLEY_DEMO: '0' }).demo, false);
    assert.equal(loadConfig({ PARLEY_DEMO: '1' }).demo, true);
    assert.throws(() => loadConfig({ PARLEY_DEMO: 'maybe' }), /PARLEY_DEMO must be 1 or 0/);
  });

  for (const demo of [undefined, false]) {
    it(`answers 404 for /demo/ and its files when the flag is ${demo === undefined ? 'absent' : 'off'}`, async () => {
      const { parley, db } = await appWith(demo);
      try {
        for (const url of ['/demo', '/demo/', '/demo/index.html', '/demo/demo.js', '/demo/client/index.js']) {
          const response = await parley.app.inject({ method: 'GET', url });
          assert.equal(response.statusCode, 404, url);
          assert.equal(response.json().error.code, 'ERR_API_NOT_FOUND', url);
        }
      } finally {
        await parley.app.close();
        await db.drop();
      }
    });
  }
});

describe('demo page: on', () => {
  let parley: ParleyApp;
  let db: TestDatabase;
  let port: number;

  before(async () => {
    ({ parley, db } = await appWith(true));
    await parley.app.listen({ port: 0, host: '127.0.0.1' });
    port = (parley.app.server.address() as AddressInfo).port;
  });
  after(async () => {
    await parley.app.close();
    await db.drop();
  });

  it('serves the page, its script and style, with their content types and a same-origin CSP', async () => {
    const page = await rawGet(port, '/demo/');
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'self'/);
    assert.match(page.body, /<script type="module" src="demo.js"><\/script>/);
    assert.equal(page.body, fs.readFileSync(path.join(PAGE_DIR, 'index.html'), 'utf8'));
    assert.equal((await rawGet(port, '/demo/index.html')).body, page.body);

    const script = await rawGet(port, '/demo/demo.js');
    assert.equal(script.status, 200);
    assert.equal(script.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.match(script.body, /from '\.\/client\/index\.js'/);
    const style = await rawGet(port, '/demo/demo.css');
    assert.equal(style.headers['content-type'], 'text/css; charset=utf-8');
  });

  it("serves the client library's built modules, each relative import of them too", async () => {
    const index = await rawGet(port, '/demo/client/index.js');
    assert.equal(index.status, 200);
    assert.equal(index.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.match(index.body, /export function createClient/);
    const imports = (text: string) => [...text.matchAll(/from '\.\/([a-z0-9-]+\.js)'/g)].map((match) => match[1]!);
    const seen = new Set<string>();
    const queue = imports(index.body);
    while (queue.length > 0) {
      const name = queue.pop()!;
      if (seen.has(name)) continue;
      seen.add(name);
      const module = await rawGet(port, `/demo/client/${name}`);
      assert.equal(module.status, 200, name);
      assert.equal(module.headers['content-type'], 'text/javascript; charset=utf-8', name);
      queue.push(...imports(module.body));
    }
    assert.ok(seen.has('client.js') && seen.has('rest.js'), [...seen].join(' '));
  });

  it('redirects /demo to /demo/ (the page links relative to it)', async () => {
    const response = await rawGet(port, '/demo');
    assert.equal(response.status, 308);
    assert.equal(response.headers.location, '/demo/');
  });

  it('answers 404 for anything outside its table: climbing out of the page, encoded or not, and files beside it', async () => {
    for (const target of [
      '/demo/../package.json',
      '/demo/..%2Fpackage.json',
      '/demo/%2e%2e/package.json',
      '/demo/%2e%2e%2fpackage.json',
      '/demo/%2E%2E%2F%2E%2E%2Fpackage.json',
      '/demo/..%5cpackage.json',
      '/demo/client/../../package.json',
      '/demo/client/..%2F..%2F..%2F..%2Fpackage.json',
      '/demo/client/index.d.ts',
      '/demo/client/index.js.map',
      '/demo/client/',
      '/demo/demo.routes.js',
      '/demo/%2Fetc%2Fpasswd',
      '/demo//etc/passwd',
      '/demo/INDEX.HTML',
      '/demo/index.html%00.js',
    ]) {
      const response = await rawGet(port, target);
      // A NUL in a path is refused by the edge's text check, before any route.
      assert.equal(response.status, target.includes('%00') ? 400 : 404, target);
      assert.doesNotMatch(response.body, /"name": ?"parley"|root:/, target);
      assert.match(response.headers['content-type'] ?? '', /application\/json/, target);
    }
  });
});
