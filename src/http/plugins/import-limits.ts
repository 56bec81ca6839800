import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, badRequest } from '../../domain/errors.js';

/** At most this many data import calls run at once: per server, and per app. */
export interface ImportConcurrency {
  perServer: number;
  perApp: number;
}

/**
 * How fast an import body must arrive: from `graceMs` after the call got its place on, the bytes
 * received must average at least `minBytesPerSecond` since then; 0 turns the bound off.
 */
export interface ImportUploadRate {
  minBytesPerSecond: number;
  graceMs: number;
}

/** Seconds a refused import call is told to wait: one call of the batch ahead takes about that. */
const RETRY_AFTER_SECONDS = 1;

/**
 * How long an app turned away for want of a place counts as waiting: long enough to cover its
 * retry after Retry-After, so a place given back meanwhile is kept for it.
 */
export const WAITING_MS = 5_000;

const HOLDS = Symbol('holdsImportPlace');
type Holding = FastifyRequest & { [HOLDS]?: string };

/**
 * Bounds the data import calls in flight. A call holds tens to hundreds of MB while it runs (its
 * body, its records, its answer), so without a bound a few clients can exhaust the process for
 * every app. A call beyond the bound is answered 429 ERR_TOO_MANY_REQUESTS with Retry-After
 * before its body is read, having done nothing; the import client retries it.
 *
 * The places are shared between apps: while another app is waiting (it was turned away for want
 * of a place in the last WAITING_MS), an app may take a place only while it holds fewer than
 * half of them (rounded up), and a place given back is kept for the waiting app rather than
 * taken again by the app that gave it back. Alone, an app may use them all, up to its own bound.
 * A call's place is held from its headers until it is answered, so its body must keep arriving
 * (ImportUploadRate): a body trickled to hold places is cut with 400, and the connection closed.
 *
 * One limiter serves both prefixes of the import routes; `install` adds its hooks to a scope
 * whose authentication hook runs first (the app is known).
 */
export class ImportCallLimiter {
  private running = 0;
  private readonly perApp = new Map<string, number>();
  /** Apps turned away for want of a place, until when (ms) they count as waiting. */
  private readonly waiting = new Map<string, number>();

  constructor(
    private readonly limits: ImportConcurrency,
    private readonly upload: ImportUploadRate = { minBytesPerSecond: 0, graceMs: 0 },
    private readonly now: () => number = Date.now,
  ) {}

  install(scope: FastifyInstance): void {
    scope.addHook('onRequest', (request: Holding, _reply, done) => {
      const appId = request.ctx.appId;
      const refusal = this.refusal(appId);
      if (refusal !== undefined) {
        return done(
          new AppError('ERR_TOO_MANY_REQUESTS', {
            message: `Too many data import calls at once (${refusal}). Retry after the specified time.`,
            retryAfter: RETRY_AFTER_SECONDS,
          }),
        );
      }
      this.running++;
      this.perApp.set(appId, (this.perApp.get(appId) ?? 0) + 1);
      this.waiting.delete(appId);
      request[HOLDS] = appId;
      done();
    });
    if (this.upload.minBytesPerSecond > 0) {
      scope.addHook('preParsing', (request, reply, payload, done) => {
        done(null, new MeteredBody(request, reply, payload, this.upload, this.now));
      });
    }
    // onSend runs once the handler is done, even when the client has gone (see in-flight.ts).
    scope.addHook('onSend', (request: Holding, _reply, payload, done) => {
      const appId = request[HOLDS];
      if (appId !== undefined) {
        request[HOLDS] = undefined;
        this.running--;
        const left = (this.perApp.get(appId) ?? 1) - 1;
        if (left > 0) this.perApp.set(appId, left);
        else this.perApp.delete(appId);
      }
      done(null, payload);
    });
  }

  /** Why the app may not start a call now (the 429's words), or undefined when it may. */
  private refusal(appId: string): string | undefined {
    const held = this.perApp.get(appId) ?? 0;
    if (held >= this.limits.perApp) return `at most ${this.limits.perApp} per app`;
    const full = `at most ${this.limits.perServer} on this server`;
    if (this.running >= this.limits.perServer) return this.turnAway(appId, full);
    const share = Math.ceil(this.limits.perServer / 2);
    let othersWaiting = false;
    // Places to keep for the other waiting apps that hold less than their share.
    let owed = 0;
    const now = this.now();
    for (const [other, until] of this.waiting) {
      if (until <= now) this.waiting.delete(other);
      else if (other !== appId) {
        othersWaiting = true;
        if ((this.perApp.get(other) ?? 0) < share) owed++;
      }
    }
    if (!othersWaiting) return undefined;
    const shared = `at most ${share} per app while other apps wait, ${this.limits.perServer} on this server`;
    if (held >= share) return this.turnAway(appId, shared);
    // An app that waited itself takes the place kept for it; another leaves one per waiting app.
    if (this.waiting.has(appId)) return undefined;
    return this.limits.perServer - this.running > owed ? undefined : this.turnAway(appId, shared);
  }

  private turnAway(appId: string, reason: string): string {
    this.waiting.set(appId, this.now() + WAITING_MS);
    return reason;
  }
}

/**
 * The body of an import call as it arrives, cut when it arrives too slowly: past the grace, the
 * bytes received must average the minimum rate since the stream began. One timer, set for the
 * moment the bytes received so far stop being enough, and moved on when it fires.
 */
class MeteredBody extends Transform {
  private received = 0;
  private readonly started: number;
  private timer: NodeJS.Timeout | undefined;
  /** Fastify compares this with the body limit and the content-length, as for the raw request. */
  receivedEncodedLength = 0;

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly source: NodeJS.ReadableStream,
    private readonly rate: ImportUploadRate,
    private readonly now: () => number,
  ) {
    super();
    this.started = now();
    // Not pipeline(): it would destroy the request (and its socket) with the cut, leaving no way to answer.
    source.on('error', (error: Error) => this.destroy(error));
    request.raw.on('close', () => {
      if (!request.raw.complete) this.destroy(new Error('the client closed the connection before sending the whole body'));
    });
    // A body no parser reads (an unsupported content type answered 415) must neither be cut
    // later nor hold the connection: once the answer is sent, the meter stops and the rest of
    // the body is read and dropped, as Node does for any unread body.
    this.on('error', () => {});
    reply.raw.once('finish', () => this.answered());
    source.pipe(this);
    this.schedule();
  }

  private answered(): void {
    clearTimeout(this.timer);
    if (this.request.raw.complete || this.destroyed) return;
    this.source.unpipe(this);
    this.request.raw.resume();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.received += chunk.length;
    this.receivedEncodedLength = this.received;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    clearTimeout(this.timer);
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearTimeout(this.timer);
    callback(error);
  }

  /** The moment the bytes received so far fall below the minimum average. */
  private deadline(): number {
    return this.started + Math.max(this.rate.graceMs, (this.received * 1000) / this.rate.minBytesPerSecond);
  }

  private schedule(): void {
    const wait = Math.max(1, Math.ceil(this.deadline() - this.now()));
    this.timer = setTimeout(() => this.check(), wait);
    this.timer.unref();
  }

  private check(): void {
    if (this.reply.sent) return;
    if (this.now() < this.deadline()) {
      this.schedule();
      return;
    }
    const kib = Math.round(this.rate.minBytesPerSecond / 1024);
    this.request.log.info({ received: this.received, ms: this.now() - this.started }, 'data import body arriving too slowly: cut');
    this.source.unpipe(this);
    // The rest of the body is not read: the connection closes once the answer is sent.
    this.reply.header('connection', 'close');
    this.destroy(
      badRequest(
        { body: `arrived slower than ${kib} KiB/s` },
        `The request body arrived too slowly: after the first ${this.rate.graceMs / 1000} s it must average at least ${kib} KiB/s. Send it again faster.`,
      ),
    );
  }
}
