import { Redis } from 'ioredis';
import type { Logger } from '../domain/context.js';
import { secondsUntilEnd, type RateLimitClass } from '../domain/rate-limits.js';
import { MemoryRateLimitCounters, type KeyHit, type RateLimitCounters, type RateLimitCounts, type RateLimitHit } from './rate-limit-counters.js';

/**
 * KEYS[1]: the app class's counter; KEYS[2]: the user class's (KEYS[1] again when there is none).
 * ARGV: the app class's limit, the user class's (0: not counted), the keys' lifetime in seconds.
 * Refuses without counting when either counter is at its limit; otherwise counts in both.
 * Answers {app count, user count, 0 | 1 (app refused) | 2 (user refused)}.
 */
const HIT_SCRIPT = `
local appLimit = tonumber(ARGV[1])
local userLimit = tonumber(ARGV[2])
local a = 0
local u = 0
if appLimit > 0 then a = tonumber(redis.call('GET', KEYS[1]) or '0') end
if userLimit > 0 then u = tonumber(redis.call('GET', KEYS[2]) or '0') end
if appLimit > 0 and a >= appLimit then return {a, u, 1} end
if userLimit > 0 and u >= userLimit then return {a, u, 2} end
if appLimit > 0 then
  a = redis.call('INCR', KEYS[1])
  if a == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
end
if userLimit > 0 then
  u = redis.call('INCR', KEYS[2])
  if u == 1 then redis.call('EXPIRE', KEYS[2], ARGV[3]) end
end
return {a, u, 0}
`;

/** How long a command may take before the request goes on without Redis. */
const COMMAND_TIMEOUT_MS = 250;
/** After a failure, Redis is left alone for this long (requests count in memory meanwhile). */
const BACKOFF_MS = 1_000;
/** At most one warning about Redis per this long. */
const WARN_EVERY_MS = 10_000;
/** Counters outlive their window by this much, for nodes whose clocks lag. */
const KEY_GRACE_SECONDS = 5;

type HitReply = [number, number, number];
type ScriptedRedis = Redis & { parleyRateLimitHit(appKey: string, userKey: string, appLimit: number, userLimit: number, ttl: number): Promise<HitReply> };

export interface RedisCountersOptions {
  url: string;
  /** What every key starts with, e.g. `parley:`. */
  keyPrefix: string;
  log: Logger;
  /** How long the start waits for the first connection (default 2 s); it goes on without. */
  connectWaitMs?: number;
}

/**
 * Counters in Redis, shared by every node that uses the same Redis and key prefix. A request
 * costs one round trip: one script decides and counts (its app class and, if any, its user
 * class) atomically. Commands of the same tick travel together (ioredis auto-pipelining).
 *
 * Keys: `<prefix>rl:{<appId>}:<class>:<window>` and `...:<window>:<uid>` for a user class; the
 * braces keep an app's keys in one Redis Cluster slot, as a script needs. A keyed count (see
 * hitKey) is `<prefix>rl:{<key>}:<window>`. They expire a few seconds after their minute.
 *
 * When Redis cannot answer (down, unreachable, slower than 250 ms), requests are not held up:
 * they count in this node's memory instead (each node then enforces the limits alone) until
 * Redis answers again, and a warning is logged at most every 10 s.
 */
export class RedisRateLimitCounters implements RateLimitCounters {
  private readonly client: ScriptedRedis;
  private readonly fallback = new MemoryRateLimitCounters();
  /** Until when (ms) Redis is not tried after a failure. */
  private backoffUntil = 0;
  private lastWarning = 0;
  /** Redis failed since the last success: the next success is logged. */
  private degraded = false;

  private constructor(
    private readonly options: RedisCountersOptions,
    private readonly where: string,
  ) {
    this.client = new Redis(options.url, {
      // RESP2 works with every Redis (and compatible server) that has scripting.
      protocol: 2,
      enableAutoPipelining: true,
      // No queue while disconnected and no retries: a request never waits for a reconnect.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 2_000,
      connectionName: 'parley-rate-limits',
    }) as ScriptedRedis;
    this.client.defineCommand('parleyRateLimitHit', { numberOfKeys: 2, lua: HIT_SCRIPT });
    this.client.on('error', (error: Error) => this.failed(error));
    this.client.on('ready', () => {
      if (this.degraded) options.log.info({ redis: where }, 'rate limits: Redis is back; counters are shared again');
      this.degraded = false;
    });
  }

  /** Connects, waiting a short while for Redis; starts (counting in memory) if it does not answer. */
  static async open(options: RedisCountersOptions): Promise<RedisRateLimitCounters> {
    const url = new URL(options.url);
    const counters = new RedisRateLimitCounters(options, `${url.hostname}:${url.port || 6379}`);
    await counters.waitReady(options.connectWaitMs ?? 2_000);
    return counters;
  }

  private waitReady(timeoutMs: number): Promise<void> {
    if (this.client.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.client.off('ready', finish);
        if (this.client.status !== 'ready') this.failed(new Error(`no connection within ${timeoutMs} ms`));
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      this.client.once('ready', finish);
    });
  }

  private key(appId: string, cls: RateLimitClass, window: number): string {
    return `${this.options.keyPrefix}rl:{${appId}}:${cls}:${window}`;
  }

  private usable(): boolean {
    return this.client.status === 'ready' && Date.now() >= this.backoffUntil;
  }

  hit(hit: RateLimitHit): RateLimitHit | Promise<RateLimitHit> {
    if (!this.usable()) return this.fallback.hit(hit);
    const appKey = this.key(hit.appId, hit.cls, hit.window);
    const userKey = hit.userLimit > 0 ? `${this.key(hit.appId, hit.userClass!, hit.window)}:${hit.uid}` : appKey;
    const ttl = secondsUntilEnd(hit.window, hit.nowMs) + KEY_GRACE_SECONDS;
    return this.client.parleyRateLimitHit(appKey, userKey, hit.limit, hit.userLimit, ttl).then(
      (reply) => {
        hit.appCount = Number(reply[0]);
        hit.userCount = Number(reply[1]);
        hit.refusedBy = Number(reply[2]) as 0 | 1 | 2;
        return hit;
      },
      (error: Error) => {
        this.failed(error);
        return this.fallback.hit(hit);
      },
    );
  }

  hitKey(key: string, limit: number, window: number, nowMs: number): KeyHit | Promise<KeyHit> {
    if (!this.usable()) return this.fallback.hitKey(key, limit, window);
    const counter = `${this.options.keyPrefix}rl:{${key}}:${window}`;
    const ttl = secondsUntilEnd(window, nowMs) + KEY_GRACE_SECONDS;
    // The request script with the one counter and no user class.
    return this.client.parleyRateLimitHit(counter, counter, limit, 0, ttl).then(
      (reply) => ({ count: Number(reply[0]), refused: Number(reply[2]) !== 0 }),
      (error: Error) => {
        this.failed(error);
        return this.fallback.hitKey(key, limit, window);
      },
    );
  }

  async readKey(key: string, window: number): Promise<number> {
    if (!this.usable()) return this.fallback.readKey(key, window);
    try {
      return Number((await this.client.get(`${this.options.keyPrefix}rl:{${key}}:${window}`)) ?? 0);
    } catch (error) {
      this.failed(error as Error);
      return this.fallback.readKey(key, window);
    }
  }

  async read(appId: string, window: number, uid: string | undefined): Promise<RateLimitCounts> {
    if (!this.usable()) return this.fallback.read(appId, window, uid);
    const user = (cls: RateLimitClass) => (uid === undefined ? this.key(appId, cls, window) : `${this.key(appId, cls, window)}:${uid}`);
    try {
      const [core, standard, imports, send, unread] = await this.client.mget(
        this.key(appId, 'core', window),
        this.key(appId, 'standard', window),
        this.key(appId, 'import', window),
        user('send_per_user'),
        user('unread_per_user'),
      );
      return {
        core: Number(core ?? 0),
        standard: Number(standard ?? 0),
        import: Number(imports ?? 0),
        send_per_user: uid === undefined ? 0 : Number(send ?? 0),
        unread_per_user: uid === undefined ? 0 : Number(unread ?? 0),
      };
    } catch (error) {
      this.failed(error as Error);
      return this.fallback.read(appId, window, uid);
    }
  }

  async close(): Promise<void> {
    await this.fallback.close();
    if (this.client.status === 'ready') {
      await this.client.quit().catch(() => this.client.disconnect());
    } else {
      this.client.disconnect();
    }
  }

  private failed(error: Error): void {
    const now = Date.now();
    this.backoffUntil = now + BACKOFF_MS;
    this.degraded = true;
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.options.log.warn({ redis: this.where, err: { message: error.message } }, "rate limits: Redis does not answer; counting in this node's memory until it does (limits are per node meanwhile)");
  }
}
