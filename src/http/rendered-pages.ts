import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../domain/context.js';
import { messagePageJson } from './message-page-json.js';
import type { PageCheck, PageVersion, VersionedPage } from '../services/message-history.service.js';

interface Kept {
  versioned: PageVersion;
  body: Buffer;
}

/**
 * The history pages this node last answered, as sent, each with its version and what the
 * version is read from (see MessagesRepository.pageVersion). A page asked for again is still
 * checked against the database, by a statement of a few index lookups; only when nothing it
 * shows has changed is it answered from here, without being read, rendered or serialised again.
 * So it is never stale, on any node. Bounded by total size, the least recently used going first.
 * A page is written by messagePageJson (not the route schema's serializer).
 */
export class RenderedPages {
  private readonly entries = new Map<string, Kept>();
  private size = 0;

  /** `versionOf`: the version a kept page's check reads now (MessagesService.pageVersion). */
  constructor(
    private readonly maxBytes: number,
    private readonly versionOf: (ctx: RequestContext, check: PageCheck) => Promise<string>,
  ) {}

  /** Answers the page `read` gives, or the copy kept here while its check still reads the version it was read with. */
  async serve(request: FastifyRequest, reply: FastifyReply, read: () => Promise<VersionedPage>): Promise<FastifyReply> {
    // The same path, query and viewer in the same app ask for the same page, with the same checks.
    const key = `${request.ctx.appId}\u0000${request.ctx.onBehalfOf ?? ''}\u0000${request.url}`;
    const kept = this.entries.get(key);
    if (kept && (await this.versionOf(request.ctx, kept.versioned.check)) === kept.versioned.version) {
      // Used again: last out.
      this.entries.delete(key);
      this.entries.set(key, kept);
      return reply.type('application/json; charset=utf-8').send(kept.body);
    }
    const { page, versioned } = await read();
    // Sent as bytes, kept as bytes: a copy sent again is not encoded again.
    const body = Buffer.from(messagePageJson(page));
    if (versioned) this.keep(key, { versioned, body });
    else if (kept) this.forget(key, kept);
    return reply.type('application/json; charset=utf-8').send(body);
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
