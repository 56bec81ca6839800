import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ERROR_CATALOGUE } from '../../src/domain/error-codes.js';
import { AppError, badRequest } from '../../src/domain/errors.js';
import { digestsEqual, maskSecret, sha256Hex } from '../../src/domain/secrets.js';

describe('error catalogue', () => {
  it('gives every code a 4xx or 5xx status and a message', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      assert.match(code, /^(AUTH_)?ERR_[A-Z_]+$/);
      assert.ok(entry.status >= 400 && entry.status < 600, code);
      assert.ok(entry.message.length > 0, code);
    }
  });

  it('fills message placeholders and takes the status from the catalogue', () => {
    const error = new AppError('ERR_UID_NOT_FOUND', { params: { uid: 'alice' } });
    assert.equal(error.status, 404);
    assert.equal(error.message, 'The UID alice does not exist.');
    assert.equal(new AppError('ERR_UID_NOT_FOUND').message, 'The UID uid does not exist.');
  });

  it('puts field details on ERR_BAD_REQUEST', () => {
    const error = badRequest({ name: 'is required' });
    assert.equal(error.code, 'ERR_BAD_REQUEST');
    assert.deepEqual(error.details, { name: 'is required' });
    assert.match(error.message, /name is required/);
  });
});

describe('secrets', () => {
  it('masks all but the first 8 and last 4 characters', () => {
    assert.equal(maskSecret('0123456789abcdef0123456789abcdef01234567'), `01234567${'*'.repeat(28)}4567`);
  });

  it('compares digests in constant time, refusing different lengths', () => {
    const digest = sha256Hex('key');
    assert.equal(digestsEqual(digest, sha256Hex('key')), true);
    assert.equal(digestsEqual(digest, sha256Hex('other')), false);
    assert.equal(digestsEqual(digest, digest.slice(0, 10)), false);
    assert.equal(digestsEqual('', ''), false);
  });
});
