import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { DEFAULT_RATE_LIMITS, effectiveLimits, formatRateLimits, parseRateLimits, RateLimitsFormatError, secondsUntilEnd, windowEndSeconds, windowOf } from '../../src/domain/rate-limits.js';

describe('PARLEY_RATE_LIMITS', () => {
  it('defaults to the vendor numbers, with the per-user limits off', () => {
    assert.deepEqual(loadConfig({}).rateLimits, { core: 10_000, standard: 20_000, import: 60, send_per_user: 0, unread_per_user: 0 });
    assert.deepEqual(loadConfig({ PARLEY_RATE_LIMITS: '' }).rateLimits, DEFAULT_RATE_LIMITS);
  });

  it('reads the documented format; classes not named keep their defaults', () => {
    assert.deepEqual(loadConfig({ PARLEY_RATE_LIMITS: 'core=10000,standard=20000,import=60,send_per_user=0' }).rateLimits, DEFAULT_RATE_LIMITS);
    assert.deepEqual(loadConfig({ PARLEY_RATE_LIMITS: 'standard=500,send_per_user=30' }).rateLimits, {
      core: 10_000,
      standard: 500,
      import: 60,
      send_per_user: 30,
      unread_per_user: 0,
    });
    assert.deepEqual(loadConfig({ PARLEY_RATE_LIMITS: 'core=0,standard=0,import=0' }).rateLimits, {
      core: 0,
      standard: 0,
      import: 0,
      send_per_user: 0,
      unread_per_user: 0,
    });
    assert.deepEqual(parseRateLimits(' unread_per_user = 5 , import=1000000000'), { unread_per_user: 5, import: 1_000_000_000 });
  });

  for (const [raw, message] of [
    ['core', /"core" is not class=number/],
    ['core=', /core must be a whole number from 0 \(off\) to 1000000000; got ""/],
    ['core=-1', /got "-1"/],
    ['core=1.5', /got "1.5"/],
    ['core=1e3', /got "1e3"/],
    ['core=ten', /got "ten"/],
    ['core=1000000001', /got "1000000001"/],
    ['burst=5', /unknown class "burst" \(the classes: core, standard, import, send_per_user, unread_per_user\)/],
    ['Core=5', /unknown class "Core"/],
    ['core=5,core=6', /core is given twice/],
    ['core=5,', /"" is not class=number/],
    ['core=5;standard=6', /core must be a whole number/],
  ] as const) {
    it(`refuses ${JSON.stringify(raw)} with a ConfigError naming the variable`, () => {
      assert.throws(
        () => loadConfig({ PARLEY_RATE_LIMITS: raw }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, /^PARLEY_RATE_LIMITS: /);
          assert.match(error.message, message);
          assert.match(error.message, /core=10000,standard=20000,import=60,send_per_user=0/);
          return true;
        },
      );
      assert.throws(() => parseRateLimits(raw), RateLimitsFormatError);
    });
  }

  it('writes back what it reads', () => {
    const text = 'core=1,standard=2,import=3,send_per_user=4,unread_per_user=5';
    assert.equal(formatRateLimits(parseRateLimits(text)), text);
    assert.equal(formatRateLimits({ import: 7 }), 'import=7');
  });

  it("an app's own limits win over the deployment's, class by class", () => {
    assert.deepEqual(effectiveLimits(DEFAULT_RATE_LIMITS, { core: 5, standard: null, import: 0, send_per_user: null, unread_per_user: 2 }), {
      core: 5,
      standard: 20_000,
      import: 0,
      send_per_user: 0,
      unread_per_user: 2,
    });
    assert.deepEqual(effectiveLimits(DEFAULT_RATE_LIMITS, undefined), DEFAULT_RATE_LIMITS);
  });
});

describe('PARLEY_REDIS_URL and PARLEY_REDIS_PREFIX', () => {
  it('are optional: counters in memory, keys under parley:', () => {
    const config = loadConfig({});
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.redisKeyPrefix, 'parley:');
  });

  it('take a redis:// or rediss:// URL and any prefix', () => {
    const config = loadConfig({ PARLEY_REDIS_URL: 'rediss://user:pw@cache.internal:6380/2', PARLEY_REDIS_PREFIX: 'chat-eu:' });
    assert.equal(config.redisUrl, 'rediss://user:pw@cache.internal:6380/2');
    assert.equal(config.redisKeyPrefix, 'chat-eu:');
  });

  it('refuse anything else', () => {
    for (const raw of ['127.0.0.1:6379', 'http://127.0.0.1:6379', 'redis']) {
      assert.throws(
        () => loadConfig({ PARLEY_REDIS_URL: raw }),
        (error: unknown) => error instanceof ConfigError && /PARLEY_REDIS_URL must be a redis:\/\//.test(error.message),
      );
    }
  });
});

describe('rate-limit windows', () => {
  it('are fixed minutes of the clock; the reset is the window end in unix seconds', () => {
    const t = Date.UTC(2030, 0, 1, 12, 0, 10, 500); // 10.5 s into a minute
    const window = windowOf(t);
    assert.equal(windowEndSeconds(window), Date.UTC(2030, 0, 1, 12, 1, 0) / 1000);
    assert.equal(secondsUntilEnd(window, t), 50);
    assert.equal(windowOf(Date.UTC(2030, 0, 1, 12, 0, 59, 999)), window);
    assert.equal(windowOf(Date.UTC(2030, 0, 1, 12, 1, 0)), window + 1);
    // Never 0: a client told to wait 0 s would come straight back.
    assert.equal(secondsUntilEnd(window, Date.UTC(2030, 0, 1, 12, 0, 59, 999)), 1);
  });
});
