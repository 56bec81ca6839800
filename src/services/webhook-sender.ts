import dns from 'node:dns';
import { EventEmitter } from 'node:events';
import { isIP, type LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { extended } from '../domain/objects.js';
import { isNonPublicAddress } from '../domain/webhooks.js';

/** What one POST to a webhook got: a status (any), or the error that kept it from one. */
export interface PostResult {
  /** A 2xx status within the timeout. */
  ok: boolean;
  status: number | null;
  error: string | null;
}

/** The most of an answer's body read (and thrown away) so its connection can be kept. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Posts webhook deliveries over HTTP (docs/webhooks.md): one request, a bounded time, no
 * redirects followed, kept-alive connections per host. Unless the deployment allows private
 * addresses, a host name must resolve only to public ones: the check runs on the addresses the
 * connection is about to use (so a name that changes its answer after the URL was accepted is
 * still refused), and on a literal address before connecting.
 *
 * The client is undici's (not node:http's): a POST costs about half the CPU (docs/performance-log.md, "Webhook delivery: undici"),
 * and a delivery's CPU is what bounds delivery throughput. Its `request` follows no redirects.
 */
export class WebhookSender {
  private readonly agent: Agent;

  /**
   * `connectionsPerHost`: connections to one host at once, all kept open between deliveries. The
   * composition root gives it a webhook's lanes at once (DELIVERY_LIMITS.lanesPerWebhook), as many
   * as a round posts side by side: with fewer kept, each round closed and opened the rest again.
   */
  constructor(private readonly options: { timeoutMs: number; allowPrivate: boolean; userAgent: string; connectionsPerHost: number }) {
    this.agent = new Agent({
      connections: options.connectionsPerHost,
      // One request at a time per connection: a receiver never sees pipelined requests.
      pipelining: 1,
      ...(options.allowPrivate ? {} : { connect: { lookup: publicOnlyLookup } }),
    });
  }

  async post(rawUrl: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return { ok: false, status: null, error: 'the webhook URL is not valid' };
    }
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') return { ok: false, status: null, error: 'the webhook URL is not http(s)' };
    if (!secure && !this.options.allowPrivate) return { ok: false, status: null, error: 'http URLs are refused (PARLEY_WEBHOOK_ALLOW_PRIVATE is not set)' };
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!this.options.allowPrivate && isIP(host) && isNonPublicAddress(host)) {
      return { ok: false, status: null, error: `refused: ${host} is not a public address` };
    }
    const sent: Record<string, string> = extended(headers, { 'content-type': 'application/json', 'user-agent': this.options.userAgent });
    // Credentials in the URL (https://user:pass@host/...) are sent as Basic auth, unless the
    // webhook's own Basic auth is.
    if ((url.username || url.password) && sent.authorization === undefined) {
      sent.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    }
    // undici takes an EventEmitter as the abort signal: an AbortController (an EventTarget) per
    // POST cost ~7% of a delivering server's CPU.
    const timeout = new EventEmitter();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      timeout.emit('abort');
    }, this.options.timeoutMs);
    try {
      const res = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: sent,
        body,
        signal: timeout,
      });
      const status = res.statusCode;
      // The status decides; the body is read (up to a bound) so the connection can carry the next delivery.
      await res.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => undefined);
      const ok = status >= 200 && status < 300;
      return { ok, status, error: ok ? null : `answered HTTP ${status}` };
    } catch (error) {
      if (timedOut) return { ok: false, status: null, error: `no answer within ${this.options.timeoutMs} ms` };
      return { ok: false, status: null, error: describe(error as Error & { code?: string }) };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One POST whose answer is read (the moderation hook's, services/moderation/hook-client.ts):
   * the status and the body, up to `maxAnswerBytes` (a larger answer is an error), all within
   * `timeoutMs` from the call (waiting for a connection, connecting, the answer and its body).
   * The same refusals as `post`; credentials in the URL are not sent (the caller's URLs hold none).
   */
  async exchange(rawUrl: string, body: string, headers: Record<string, string>, limits: { timeoutMs: number; maxAnswerBytes: number }): Promise<ExchangeResult> {
    const target = exchangeTarget(rawUrl, this.options.allowPrivate);
    if (typeof target === 'string') return { error: target };
    const timeout = new EventEmitter();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      timeout.emit('abort');
    }, limits.timeoutMs);
    try {
      const sent: Record<string, string> = extended(headers, { 'content-type': 'application/json', 'user-agent': this.options.userAgent });
      const res = await this.agent.request({ origin: target.origin, path: `${target.pathname}${target.search}`, method: 'POST', headers: sent, body, signal: timeout });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > limits.maxAnswerBytes) {
          res.body.destroy();
          return { error: `the answer is larger than ${limits.maxAnswerBytes} bytes` };
        }
        chunks.push(chunk as Buffer);
      }
      return { status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') };
    } catch (error) {
      if (timedOut) return { error: `no answer within ${limits.timeoutMs} ms` };
      return { error: describe(error as Error & { code?: string }) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the kept-alive connections. */
  close(): void {
    void this.agent.destroy().catch(() => undefined);
  }
}

/** What `exchange` got: a status (any) and the answer's body, or why there is none. */
export type ExchangeResult = { status: number; body: string } | { error: string };

/** The URL `exchange` may call, or why not: the refusals `post` makes before connecting. */
function exchangeTarget(rawUrl: string, allowPrivate: boolean): URL | string {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return 'the URL is not valid';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'the URL is not http(s)';
  if (url.protocol === 'http:' && !allowPrivate) return 'http URLs are refused (PARLEY_WEBHOOK_ALLOW_PRIVATE is not set)';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) && isNonPublicAddress(host)) return `refused: ${host} is not a public address`;
  return url;
}

/** dns.lookup, refusing a name that resolves to any loopback, private or reserved address. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, extended(options, { all: true as const }), (error, addresses) => {
    if (error) return callback(error, '', 0);
    const list = addresses as dns.LookupAddress[];
    const refused = list.find((entry) => isNonPublicAddress(entry.address));
    if (refused || list.length === 0) {
      const refusal = Object.assign(new Error(`refused: ${hostname} resolves to ${refused?.address ?? 'no address'}, not a public address`), { code: 'EPARLEYPRIVATE' });
      return callback(refusal, '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};

function describe(error: Error & { code?: string }): string {
  if (error.code === 'EPARLEYPRIVATE') return error.message;
  return error.code ? `${error.code}: ${error.message}` : error.message;
}
