import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('config', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.dataDir, path.resolve('./data'));
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.region, 'us');
    assert.equal(config.domain, 'localhost');
    assert.equal(config.insecureHttp, false);
    assert.equal(config.tlsCertFile, undefined);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PARLEY_PORT: '8443',
      PARLEY_DATA_DIR: '/srv/parley',
      DATABASE_URL: 'postgres://db/parley',
      PARLEY_REGION: 'EU',
      PARLEY_DOMAIN: 'Chat.Example.com.',
      PARLEY_TLS_CERT: '/c.pem',
      PARLEY_TLS_KEY: '/k.pem',
      PARLEY_INSECURE_HTTP: '1',
    });
    assert.equal(config.port, 8443);
    assert.equal(config.dataDir, '/srv/parley');
    assert.equal(config.databaseUrl, 'postgres://db/parley');
    assert.equal(config.region, 'eu');
    assert.equal(config.domain, 'chat.example.com');
    assert.equal(config.tlsCertFile, '/c.pem');
    assert.equal(config.insecureHttp, true);
  });

  it('lets flags override variables', () => {
    const config = loadConfig({ PARLEY_REGION: 'eu', PARLEY_DATA_DIR: '/a' }, { region: 'in', dataDir: '/b' });
    assert.equal(config.region, 'in');
    assert.equal(config.dataDir, '/b');
  });

  for (const [what, env] of [
    ['a port that is not a number', { PARLEY_PORT: 'http' }],
    ['a port out of range', { PARLEY_PORT: '70000' }],
    ['an unknown region', { PARLEY_REGION: 'mars' }],
    ['a domain with a space', { PARLEY_DOMAIN: 'bad domain' }],
    ['a certificate without a key', { PARLEY_TLS_CERT: '/c.pem' }],
    ['an insecure flag that is not 0 or 1', { PARLEY_INSECURE_HTTP: 'sure' }],
  ] as const) {
    it(`refuses ${what} with a clear message`, () => {
      assert.throws(() => loadConfig({ ...env }), ConfigError);
    });
  }
});

describe('config: the event log', () => {
  it('keeps events 7 days unless PARLEY_EVENT_RETENTION_DAYS says otherwise, and refuses a retention that is not a whole number of days', () => {
    const day = 24 * 3600 * 1000;
    assert.equal(loadConfig({}).eventRetentionMs, 7 * day);
    assert.equal(loadConfig({ PARLEY_EVENT_RETENTION_DAYS: '30' }).eventRetentionMs, 30 * day);
    for (const bad of ['0', 'week', '1.5', '4000']) assert.throws(() => loadConfig({ PARLEY_EVENT_RETENTION_DAYS: bad }), ConfigError, bad);
  });

  it('caps the live event streams at 100 per app and 10,000 per node unless PARLEY_STREAMS_PER_APP and PARLEY_STREAMS_PER_NODE say otherwise, refusing bad values naming the variable', () => {
    assert.deepEqual(loadConfig({}).eventStreams, { perApp: 100, perNode: 10_000 });
    assert.deepEqual(loadConfig({ PARLEY_STREAMS_PER_APP: '5', PARLEY_STREAMS_PER_NODE: '50000' }).eventStreams, { perApp: 5, perNode: 50_000 });
    assert.deepEqual(loadConfig({ PARLEY_STREAMS_PER_APP: '', PARLEY_STREAMS_PER_NODE: '' }).eventStreams, { perApp: 100, perNode: 10_000 });
    for (const name of ['PARLEY_STREAMS_PER_APP', 'PARLEY_STREAMS_PER_NODE']) {
      for (const bad of ['0', '-1', '2.5', 'many', '1000001']) {
        assert.throws(
          () => loadConfig({ [name]: bad }),
          (error: Error) => error instanceof ConfigError && error.message.startsWith(name),
          `${name}=${bad}`,
        );
      }
    }
  });
});

describe('config: webhook URLs', () => {
  it('allows webhooks https to public hosts only by default', () => {
    assert.equal(loadConfig({}).webhookAllowPrivate, false);
  });

  it('reads PARLEY_WEBHOOK_ALLOW_PRIVATE', () => {
    assert.equal(loadConfig({ PARLEY_WEBHOOK_ALLOW_PRIVATE: '1' }).webhookAllowPrivate, true);
    assert.equal(loadConfig({ PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' }).webhookAllowPrivate, true);
    assert.equal(loadConfig({ PARLEY_WEBHOOK_ALLOW_PRIVATE: '0' }).webhookAllowPrivate, false);
  });

  it("reads the webhook timeout and retry schedule, defaults the vendor's 10 s and 30 s, and refuses bad values naming the variable", () => {
    const defaults = loadConfig({});
    assert.equal(defaults.webhookTimeoutMs, 5_000);
    assert.deepEqual(defaults.webhookRetry, { delaysMs: [10_000, 30_000], maxDelayMs: 3_600_000, horizonMs: 86_400_000 });
    const set = loadConfig({ PARLEY_WEBHOOK_TIMEOUT_MS: '2000', PARLEY_WEBHOOK_RETRY_DELAYS: '0.5, 2, 7200', PARLEY_WEBHOOK_RETRY_HORIZON_HOURS: '0.5' });
    assert.equal(set.webhookTimeoutMs, 2_000);
    assert.deepEqual(set.webhookRetry, { delaysMs: [500, 2_000, 7_200_000], maxDelayMs: 7_200_000, horizonMs: 1_800_000 });
    for (const [name, value] of [
      ['PARLEY_WEBHOOK_TIMEOUT_MS', '0'],
      ['PARLEY_WEBHOOK_RETRY_DELAYS', '10,,30'],
      ['PARLEY_WEBHOOK_RETRY_DELAYS', '-1'],
      ['PARLEY_WEBHOOK_RETRY_HORIZON_HOURS', '0'],
      ['PARLEY_WEBHOOK_RETRY_HORIZON_HOURS', 'soon'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: Error) => error instanceof ConfigError && error.message.startsWith(name),
        `${name}=${value}`,
      );
    }
  });

  it('refuses a PARLEY_WEBHOOK_ALLOW_PRIVATE that is not 0 or 1, naming it', () => {
    assert.throws(
      () => loadConfig({ PARLEY_WEBHOOK_ALLOW_PRIVATE: 'maybe' }),
      (error: Error) => error instanceof ConfigError && /PARLEY_WEBHOOK_ALLOW_PRIVATE/.test(error.message),
    );
  });

  it('reads where the notification providers are, and refuses what is not an http(s) URL, naming it', () => {
    assert.deepEqual(loadConfig({}).notificationEndpoints, {});
    const config = loadConfig({
      PARLEY_FCM_URL: 'http://127.0.0.1:9100',
      PARLEY_FCM_TOKEN_ORIGINS: 'http://127.0.0.1:9100/token, https://oauth2.googleapis.com',
      PARLEY_APNS_URL: 'https://127.0.0.1:9200',
      PARLEY_APNS_CA_FILE: '/etc/ca.pem',
    });
    assert.deepEqual(config.notificationEndpoints, {
      fcmUrl: 'http://127.0.0.1:9100',
      fcmTokenOrigins: ['http://127.0.0.1:9100', 'https://oauth2.googleapis.com'],
      apnsUrl: 'https://127.0.0.1:9200',
      apnsCaFile: '/etc/ca.pem',
    });
    for (const [name, value] of [
      ['PARLEY_FCM_URL', 'ftp://x'],
      ['PARLEY_APNS_URL', 'not a url'],
      ['PARLEY_FCM_TOKEN_ORIGINS', 'https://ok.example,file:///etc'],
    ]) {
      assert.throws(
        () => loadConfig({ [name!]: value }),
        (error: Error) => error instanceof ConfigError && error.message.includes(name!),
      );
    }
  });
});
