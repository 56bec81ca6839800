import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VersionedPage } from '../services/messages.service.js';

/**
 * The history pages this node last answered, as sent, each with its version (see
 * MessagesRepository.readPage). A page asked for again is still checked against the database
 * (one statement that reads the page's row versions); only when nothing it shows has changed is
 * it answered from here, without being built, rendered or serialised again. So it is never
 * stale, on any node. Bounded by total size, the least recently used going first.
 */
export class RenderedPages {
  private readonly entries = new Map<string, { version: string; body: string }>();
  private size = 0;

  constructor(private readonly maxChars: number) {}

  /** Answers the page `read` gives, passing it the version of the copy kept here, if any. */
  async serve(request: FastifyRequest, reply: FastifyReply, read: (known?: string) => Promise<VersionedPage>): Promise<FastifyReply> {
    // The same path, query and viewer in the same app ask for the same page.
    const key = `${request.ctx.appId}\u0000${request.ctx.onBehalfOf ?? ''}\u0000${request.url}`;
    const kept = this.entries.get(key);
    const { version, page } = await read(kept?.version);
    let body: string;
    if (!page) {
      body = kept!.body;
      // Used again: last out.
      this.entries.delete(key);
      this.entries.set(key, kept!);
    } else {
      const serialize = reply.getSerializationFunction('200');
      if (!serialize) return reply.send(page);
      body = serialize(page);
      this.keep(key, version, body);
    }
    return reply.type('application/json; charset=utf-8').send(body);
  }

  private keep(key: string, version: string, body: string): void {
    const old = this.entries.get(key);
    if (old) {
      this.size -= old.body.length;
      this.entries.delete(key);
    }
    if (body.length > this.maxChars) return;
    this.entries.set(key, { version, body });
    this.size += body.length;
    for (const [oldest, entry] of this.entries) {
      if (this.size <= this.maxChars) break;
      this.entries.delete(oldest);
      this.size -= entry.body.length;
    }
  }
}
