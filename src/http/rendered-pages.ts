import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../domain/context.js';
import { messagePageJson } from './message-page-json.js';
import type { PageCheck, PageVersion, VersionedPage } from '../services/message-history.service.js';

/** What a node keeps of the history pages it answered: about 16 MB, some 500 pages of 50 messages. */
export const PAGE_CACHE_BYTES = 16 * 1024 * 1024;

interface Kept {
  versioned: PageVersion;
  body: Buffer;
}

/**
 * The history pages this node last answered, as sent, each with its version and what the
 * version is read from (see MessagePagesRepository.pageVersions). A page asked for again is still
 * checked against the database, by a statement of a few index lookups; only when nothing it
 * shows has changed is it answered from here, without being read, rendered or serialised again.
 * So it is never stale, on any node. Bounded by total size, the least recently used going first.
 * A page is written by messagePageJson (not the route schema's serializer).
 *
 * A page is kept from the second time it is asked for: the first time only its key is noted
 * (`asked`, a bounded list of keys), and the page is read without its version. A reader paging
 * back through a history asks for each page once, and keeping each of those cost more than
 * building it: its bytes, allocated outside V8's heap, drove a full garbage collection every few
 * hundred milliseconds, and its version was a sixth of PostgreSQL's work for the page
 * (docs/performance-log.md, "The uncached history page at 50%"). A page asked for once is sent as its text (Node encodes it on the
 * socket), one asked for again is kept and sent as bytes.
 */
export class RenderedPages {
  private readonly entries = new Map<string, Kept>();
  private size = 0;
  /** Keys of pages asked for once and not kept, oldest first (at most maxAsked). */
  private readonly asked = new Set<string>();
  /** Pages sent from a copy kept here; pages read (asked for once, changed, or not kept). */
  private hits = 0;
  private misses = 0;

  /** `versionOf`: the version a kept page's check reads now (MessageHistoryService.pageVersion). */
  constructor(
    private readonly maxBytes: number,
    private readonly versionOf: (ctx: RequestContext, check: PageCheck) => Promise<string>,
    private readonly maxAsked = 16_384,
  ) {}

  /**
   * Answers the page `read` gives, or the copy kept here while its check still reads the version
   * it was read with. `read(true)` reads a page with its version, to be kept; `read(false)`, asked
   * for the first time, without (a sixth of its statement's work).
   */
  async serve(request: FastifyRequest, reply: FastifyReply, read: (versioned: boolean) => Promise<VersionedPage>): Promise<FastifyReply> {
    // The same path, query and viewer in the same app ask for the same page, with the same checks.
    const key = `${request.ctx.appId}\u0000${request.ctx.onBehalfOf ?? ''}\u0000${request.url}`;
    const kept = this.entries.get(key);
    if (kept && (await this.versionOf(request.ctx, kept.versioned.check)) === kept.versioned.version) {
      // Used again: last out.
      this.entries.delete(key);
      this.entries.set(key, kept);
      this.hits++;
      return reply.type('application/json; charset=utf-8').send(kept.body);
    }
    this.misses++;
    const again = kept !== undefined || this.asked.delete(key);
    if (!again) this.noteAsked(key);
    const { page, versioned } = await read(again);
    const text = messagePageJson(page);
    reply.type('application/json; charset=utf-8');
    if (!versioned) {
      if (kept) this.forget(key, kept);
      return reply.send(text);
    }
    // Kept as bytes, sent as bytes: a copy sent again is not encoded again.
    const body = Buffer.from(text);
    this.keep(key, { versioned, body });
    return reply.send(body);
  }

  /** Pages sent from a copy and read since it was made, and what it keeps now (for the metrics). */
  stats(): { hits: number; misses: number; entries: number; bytes: number } {
    return { hits: this.hits, misses: this.misses, entries: this.entries.size, bytes: this.size };
  }

  /** Notes a page asked for the first time (the oldest noted forgotten past maxAsked). */
  private noteAsked(key: string): void {
    this.asked.add(key);
    if (this.asked.size > this.maxAsked) this.asked.delete(this.asked.values().next().value!);
  }

  private keep(key: string, entry: Kept): void {
    const old = this.entries.get(key);
    if (old) this.forget(key, old);
    if (entry.body.length > this.maxBytes) return;
    this.entries.set(key, entry);
    this.size += entry.body.length;
    for (const [oldest, kept] of this.entries) {
      if (this.size <= this.maxBytes) break;
      this.forget(oldest, kept);
    }
  }

  private forget(key: string, kept: Kept): void {
    this.entries.delete(key);
    this.size -= kept.body.length;
  }
}
