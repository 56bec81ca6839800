import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSelfSignedCertificate } from '../../src/tls/self-signed.js';
import { newDeployment, parseBanner, startServe, type Deployment, type ServerProcess } from '../helpers/cli.js';

interface Reply {
  status: number;
  body: any;
}

/** One request over a real socket. `host` is the Host header; the connection goes to 127.0.0.1. */
function request(server: ServerProcess, options: { path: string; host: string; method?: string; headers?: Record<string, string>; body?: unknown; ca?: string }): Promise<Reply> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const client = server.scheme === 'https' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: {
          Host: options.host,
          ...(payload ? { 'Content-Type': 'application/json' } : {}),
          ...options.headers,
        },
        ...(server.scheme === 'https' ? { ca: options.ca, servername: options.host.split(':')[0] } : {}),
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('parley serve over TLS', () => {
  let deployment: Deployment;
  let server: ServerProcess;
  let ca: string;
  let app: { appId: string; apiKey: string; authKey: string };
  let host: string;

  before(async () => {
    deployment = await newDeployment({ PARLEY_DOMAIN: 'localhost' }, { migrated: true });
    server = await startServe(deployment.env);
    app = parseBanner(server.output());
    ca = fs.readFileSync(path.join(deployment.dataDir, 'tls', 'cert.pem'), 'utf8');
    host = `${app.appId}.api-us.localhost:${server.port}`;
  });
  after(async () => {
    if (server.child.exitCode === null) await server.stop('SIGKILL');
    await deployment.destroy();
  });

  it('prints a first-run banner with a ready-to-paste curl line', () => {
    const output = server.output();
    assert.match(output, /A default app was created/);
    assert.match(output, new RegExp(`Base URL\\s+https://${app.appId}\\.api-us\\.localhost:${server.port}/v3`));
    assert.match(output, /curl --cacert \S+cert\.pem https:\/\/\S+\/v3\/users/);
  });

  it('answers /healthz over TLS with the generated certificate', async () => {
    const reply = await request(server, { path: '/healthz', host: `localhost:${server.port}`, ca });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body, { status: 'ok' });
  });

  it('refuses plain HTTP on its TLS port', async () => {
    const plain = new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: server.port, path: '/v3/users', headers: { Host: host, apikey: app.apiKey } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    await assert.rejects(plain, /socket hang up|ECONNRESET|EPROTO|Parse Error/);
  });

  it('serves the default app on its own host, with the apiKey header in any case', async () => {
    const created = await request(server, {
      path: '/v3/users',
      host,
      method: 'POST',
      ca,
      headers: { ApiKey: app.apiKey },
      body: { uid: 'Alice', name: 'Alice 🚀' },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.data.uid, 'alice');
    const fetched = await request(server, { path: '/v3/users/alice', host, ca, headers: { APIKEY: app.apiKey } });
    assert.equal(fetched.body.data.name, 'Alice 🚀');
    const authOnly = await request(server, { path: '/v3/users', host, ca, headers: { apikey: app.authKey } });
    assert.equal(authOnly.body.error.code, 'AUTH_ERR_NO_ACCESS');
  });

  it('finishes a request in flight on SIGTERM, then exits 0 and frees the data dir', async () => {
    const payload = JSON.stringify({ uid: 'in-flight', name: 'Sent during shutdown' });
    const reply = new Promise<Reply>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          path: '/v3/users',
          ca,
          servername: 'localhost',
          headers: { Host: host, apikey: app.apiKey, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      // Headers and half the body now; SIGTERM; the rest of the body afterwards.
      req.write(payload.slice(0, 10));
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => req.end(payload.slice(10)), 400);
      }, 400);
    });
    const finished = await reply;
    assert.equal(finished.status, 200, JSON.stringify(finished.body));
    assert.equal(finished.body.data.uid, 'in-flight');
    assert.equal(await server.exited, 0);
    assert.match(server.output(), /"msg":"stopped"/);
    assert.equal(fs.existsSync(path.join(deployment.dataDir, 'parley.lock')), false);

    // A restart on the same data: no new default app, and everything is still there.
    server = await startServe(deployment.env);
    assert.doesNotMatch(server.output(), /A default app was created/);
    host = `${app.appId}.api-us.localhost:${server.port}`;
    for (const uid of ['alice', 'in-flight']) {
      const fetched = await request(server, { path: `/v3/users/${uid}`, host, ca, headers: { apikey: app.apiKey } });
      assert.equal(fetched.status, 200, `${uid} survived the restart`);
    }
    const sameCert = await request(server, { path: '/healthz', host: `localhost:${server.port}`, ca });
    assert.equal(sameCert.status, 200, 'the certificate is kept in the data dir');
  });
});

describe('parley serve with a configured certificate', () => {
  it('serves the given certificate', async () => {
    const deployment = await newDeployment({ PARLEY_DOMAIN: 'chat.test' }, { migrated: true });
    const pair = createSelfSignedCertificate(['*.api-us.chat.test', 'localhost']);
    const certFile = path.join(deployment.dataDir, 'given-cert.pem');
    const keyFile = path.join(deployment.dataDir, 'given-key.pem');
    fs.writeFileSync(certFile, pair.cert);
    fs.writeFileSync(keyFile, pair.key);
    const server = await startServe({ ...deployment.env, PARLEY_TLS_CERT: certFile, PARLEY_TLS_KEY: keyFile });
    try {
      const app = parseBanner(server.output());
      const reply = await request(server, {
        path: '/v3/users',
        host: `${app.appId}.api-us.chat.test`,
        ca: pair.cert,
        headers: { apikey: app.apiKey },
      });
      assert.equal(reply.status, 200);
      assert.equal(fs.existsSync(path.join(deployment.dataDir, 'tls')), false, 'no certificate generated');
      assert.doesNotMatch(server.output(), /--cacert/);
    } finally {
      await server.stop();
      await deployment.destroy();
    }
  });
});

describe('parley serve with PARLEY_INSECURE_HTTP=1', () => {
  it('serves plain HTTP and warns about it', async () => {
    const deployment = await newDeployment({ PARLEY_INSECURE_HTTP: '1' }, { migrated: true });
    const server = await startServe(deployment.env);
    try {
      assert.equal(server.scheme, 'http');
      assert.match(server.output(), /PARLEY_INSECURE_HTTP is set: serving plain HTTP/);
      const app = parseBanner(server.output());
      const reply = await request(server, { path: '/v3/users', host: 'localhost', headers: { appId: app.appId, apikey: app.apiKey } });
      assert.equal(reply.status, 200);
    } finally {
      assert.equal(await server.stop('SIGINT'), 0);
      await deployment.destroy();
    }
  });
});
