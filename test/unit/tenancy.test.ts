import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AppError } from '../../src/domain/errors.js';
import { resolveAppId } from '../../src/http/plugins/tenancy.js';

const settings = { region: 'us', domain: 'example.com' };
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as AppError).code;
  }
  return undefined;
};

describe('resolveAppId', () => {
  it('reads <appId>.api-<region>.<domain>', () => {
    assert.equal(resolveAppId('abc123.api-us.example.com', undefined, settings), 'abc123');
    assert.equal(resolveAppId('ABC-1.API-US.EXAMPLE.COM', undefined, settings), 'abc-1');
  });

  it('prefers the host to the appId header', () => {
    assert.equal(resolveAppId('abc.api-us.example.com', 'other', settings), 'abc');
  });

  it('uses the appId header on other hosts', () => {
    assert.equal(resolveAppId('localhost', 'MyApp', settings), 'myapp');
    assert.equal(resolveAppId('abc.api-us.elsewhere.org', 'myapp', settings), 'myapp');
    assert.equal(resolveAppId('10.0.0.1', ['first', 'second'], settings), 'first');
  });

  it('refuses another region and a request naming no app', () => {
    assert.equal(
      code(() => resolveAppId('abc.api-eu.example.com', 'abc', settings)),
      'AUTH_ERR_INVALID_APPID',
    );
    assert.equal(
      code(() => resolveAppId('localhost', undefined, settings)),
      'AUTH_ERR_EMPTY_APPID',
    );
    assert.equal(
      code(() => resolveAppId('localhost', '  ', settings)),
      'AUTH_ERR_EMPTY_APPID',
    );
  });

  it('refuses a value that cannot be an app id, from the host or the header', () => {
    for (const value of ['a\u0000b', 'a\ud800', 'x'.repeat(64), 'a_b', '-a', 'a-']) {
      assert.equal(
        code(() => resolveAppId('localhost', value, settings)),
        'AUTH_ERR_INVALID_APPID',
        JSON.stringify(value),
      );
    }
    assert.equal(
      code(() => resolveAppId(`${'x'.repeat(64)}.api-us.example.com`, undefined, settings)),
      'AUTH_ERR_INVALID_APPID',
    );
    assert.equal(resolveAppId(`${'x'.repeat(63)}.api-us.example.com`, undefined, settings), 'x'.repeat(63));
  });
});
