import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
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
 */
export class WebhookSender {
  private readonly agents: { http: http.Agent; https: https.Agent };

  /**
   * `connectionsPerHost`: connections to one host at once, all kept open between deliveries. The
   * composition root gives it a webhook's lanes at once (DELIVERY_LIMITS.lanesPerWebhook), as many
   * as a round posts side by side: with fewer kept, each round closed and opened the rest again.
   */
  constructor(private readonly options: { timeoutMs: number; allowPrivate: boolean; userAgent: string; connectionsPerHost: number }) {
    const lookup = options.allowPrivate ? undefined : publicOnlyLookup;
    const connections = options.connectionsPerHost;
    const agentOptions = { keepAlive: true, maxSockets: connections, maxFreeSockets: connections, ...(lookup ? { lookup } : {}) };
    this.agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
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
    const request = secure ? https.request : http.request;
    return new Promise<PostResult>((resolve) => {
      let settled = false;
      const finish = (result: PostResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const req = request(url, {
        method: 'POST',
        agent: secure ? this.agents.https : this.agents.http,
        headers: extended(headers, {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': this.options.userAgent,
        }),
      });
      const timer = setTimeout(() => {
        finish({ ok: false, status: null, error: `no answer within ${this.options.timeoutMs} ms` });
        req.destroy();
      }, this.options.timeoutMs);
      req.on('error', (error) => finish({ ok: false, status: null, error: describe(error) }));
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) res.destroy();
        });
        res.on('error', () => undefined);
        // The status decides; the body is read so the connection can carry the next delivery.
        const done = () => finish({ ok: status >= 200 && status < 300, status, error: status >= 200 && status < 300 ? null : `answered HTTP ${status}` });
        res.on('end', done);
        res.on('close', done);
      });
      req.end(body);
    });
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
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
