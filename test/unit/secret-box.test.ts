import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SecretBox, SecretBoxError } from '../../src/domain/secret-box.js';
import { loadSecretKey } from '../../src/secret-key.js';

describe('SecretBox', () => {
  const box = new SecretBox(crypto.randomBytes(32));

  it('seals a value so that only the same key and context open it', () => {
    const sealed = box.seal('-----BEGIN PRIVATE KEY-----\nabc', 'app1:fcm');
    assert.ok(sealed.startsWith('v1:'));
    assert.ok(!sealed.includes('PRIVATE'));
    assert.notEqual(box.seal('same', 'c'), box.seal('same', 'c'), 'a fresh iv each time');
    assert.equal(box.open(sealed, 'app1:fcm'), '-----BEGIN PRIVATE KEY-----\nabc');
    assert.throws(() => box.open(sealed, 'app2:fcm'), SecretBoxError);
    assert.throws(() => new SecretBox(crypto.randomBytes(32)).open(sealed, 'app1:fcm'), SecretBoxError);
  });

  it('refuses altered, truncated and foreign values, and short keys', () => {
    const sealed = box.seal('secret', 'ctx');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw[raw.length - 1]! ^= 1;
    assert.throws(() => box.open(`v1:${raw.toString('base64url')}`, 'ctx'), SecretBoxError);
    assert.throws(() => box.open('v1:abc', 'ctx'), SecretBoxError);
    assert.throws(() => box.open('plain text', 'ctx'), SecretBoxError);
    assert.throws(() => new SecretBox(Buffer.alloc(16)), SecretBoxError);
  });
});

describe('loadSecretKey', () => {
  it('takes PARLEY_SECRET_KEY, else makes one in the data dir (owner-only) and keeps it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-secret-'));
    try {
      assert.equal(loadSecretKey({ secretKey: 'k'.repeat(32), dataDir: dir }).source, 'environment');
      assert.throws(() => loadSecretKey({ secretKey: 'short', dataDir: dir }), SecretBoxError);
      const made = loadSecretKey({ secretKey: undefined, dataDir: dir });
      assert.equal(made.source, 'generated');
      assert.equal(fs.statSync(path.join(dir, 'secret.key')).mode & 0o777, 0o600);
      const again = loadSecretKey({ secretKey: undefined, dataDir: dir });
      assert.equal(again.source, 'file');
      assert.deepEqual(again.key, made.key);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
