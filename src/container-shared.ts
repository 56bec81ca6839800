import { coalesced } from './db/batcher.js';
import type { Engine } from './db/database.js';
import type { Logger } from './domain/context.js';
import type { AuthFailureLimits, RateLimits } from './domain/rate-limits.js';
import type { MessageBatchesRepository } from './repositories/message-store/message-batches.repository.js';
import type { MessagePagesRepository, PageCheck, PageRead } from './repositories/message-pages.repository.js';
import type { NewMessage } from './repositories/messages.repository.js';
import { MemoryRateLimitCounters, type RateLimitCounters } from './repositories/rate-limit-counters.js';
import type { NewUser, UsersRepository } from './repositories/users.repository.js';

// The composition root's shared pieces (see container.ts): where rate-limit counters live, and
// which reads and writes are coalesced.

/** Rate limits: the deployment's, where requests are counted (memory unless given), and the clock. */
export interface RateLimitOptions {
  limits?: RateLimits;
  counters?: RateLimitCounters;
  now?: () => number;
  /** Failed authentications a minute, per client address and per app (the defaults when absent). */
  authFailures?: AuthFailureLimits;
}

/**
 * Where rate-limit counters live: in Redis when a URL is given (shared by the nodes that use it;
 * ioredis is loaded only then), else in this process's memory.
 */
export async function openRateLimitCounters(options: { redisUrl?: string; keyPrefix?: string; log: Logger }): Promise<RateLimitCounters> {
  if (!options.redisUrl) return new MemoryRateLimitCounters();
  const { RedisRateLimitCounters } = await import('./repositories/redis-rate-limit-counters.js');
  return RedisRateLimitCounters.open({ url: options.redisUrl, keyPrefix: options.keyPrefix ?? 'parley:', log: options.log });
}

/**
 * Coalescing: concurrent calls of these reads and writes share one statement, each caller
 * answered on its own (see Batcher, src/db/batcher.ts). Applied here, at the composition root,
 * so that a service's dependencies say which of its calls are coalesced; inside a transaction a
 * service calls the repository itself.
 */
export function createCoalescing(repositories: { users: UsersRepository; messagePages: MessagePagesRepository; messageBatches: MessageBatchesRepository }, engine: Engine) {
  return {
    // A batch waits only for the batch ahead of it: a few in flight keep that wait short.
    activeUser: coalesced((items: Array<{ appId: string; uid: string }>) => repositories.users.getActiveMany(items), { maxBatch: 1000, maxInFlight: 4 }),
    createUser: coalesced((items: Array<{ appId: string; user: NewUser }>) => repositories.users.createMany(items), { maxBatch: 1000, maxInFlight: 4 }),
    pageVersion: coalesced((items: Array<{ appId: string; check: PageCheck }>) => repositories.messagePages.pageVersions(items), { maxBatch: 1000, maxInFlight: 4 }),
    // Pages of the same shape read by one statement (MessagePagesRepository.readPages): uncached
    // pages at 64 connections 1,289–1,428 → 2,006–2,048 a second, server 518–573 → 355–367 µs and
    // PostgreSQL 526–563 → 247–251 µs of CPU a page; at 16, +6%. Four in flight: two made the
    // pages at 16 connections wait on each other (−14%), sixteen made smaller batches.
    readPage: coalesced((items: PageRead[]) => repositories.messagePages.readPages(items), { maxBatch: 64, maxInFlight: 4 }),
    // On PostgreSQL, one send statement at a time makes the largest batches: measured against
    // two and eight, alternating in the same minutes, more sends per second and less CPU per
    // send in both the server and PostgreSQL. One that waits on a lock (an import holding the
    // conversation) gives up its place after 50 ms, so the sends behind it go on. PGlite runs
    // one statement at a time anyway; there eight queued keep it busy (~25% more sends/s).
    send: coalesced((items: Array<{ appId: string; message: NewMessage }>) => repositories.messageBatches.sendMany(items), {
      maxBatch: 500,
      maxInFlight: engine === 'postgres' ? 1 : 8,
      stalledAfterMs: 50,
      maxStalled: 7,
    }),
  };
}
