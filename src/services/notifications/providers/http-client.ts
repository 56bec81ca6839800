import { EventEmitter } from 'node:events';
import { Agent } from 'undici';
import { PARLEY_VERSION } from '../../../version.js';
import { MAX_PROVIDER_ANSWER_BYTES } from './types.js';

/** One answer of a provider's HTTP API: its status, headers and (the first 64 KiB of) its body. */
export interface ProviderAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Why a request had no answer; `timedOut` when the time ran out. */
export interface ProviderNoAnswer {
  error: string;
  timedOut: boolean;
}

/**
 * The HTTP/1.1 client of the providers' REST APIs (FCM's token exchange and send, SendGrid,
 * Twilio): undici's, already Parley's webhook client (services/webhook-sender.ts), with
 * kept-alive connections per origin; no SDK (firebase-admin, @sendgrid/mail, twilio) is needed
 * for one POST each, and none would let a test point it at a local fake as plainly.
 *
 * The base URLs come from the deployment (or a test), never from an app's settings: no
 * private-address rule applies here. (FCM's token URI does come from the app's service account:
 * fcm.ts lets only trusted origins be used.)
 */
export class ProviderHttp {
  private readonly agent: Agent;

  constructor(
    private readonly timeoutMs: number,
    private readonly userAgent = `Parley-Notifications/${PARLEY_VERSION}`,
  ) {
    this.agent = new Agent({ connections: 32, pipelining: 1 });
  }

  /** One POST; never throws: no answer within the timeout, or a connection error, is a ProviderNoAnswer. */
  async post(rawUrl: string, body: string, headers: Record<string, string>): Promise<ProviderAnswer | ProviderNoAnswer> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return { error: `the URL ${rawUrl} is not valid`, timedOut: false };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return { error: `the URL ${rawUrl} is not http(s)`, timedOut: false };
    // An EventEmitter as the abort signal, as WebhookSender does (cheaper than an AbortController).
    const abort = new EventEmitter();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.emit('abort');
    }, this.timeoutMs);
    try {
      const res = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: Object.assign({ 'user-agent': this.userAgent }, headers),
        body,
        signal: abort,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        const part = chunk as Buffer;
        if (size < MAX_PROVIDER_ANSWER_BYTES) chunks.push(part.subarray(0, MAX_PROVIDER_ANSWER_BYTES - size));
        size += part.length;
      }
      return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') };
    } catch (error) {
      if (timedOut) return { error: `no answer within ${this.timeoutMs} ms`, timedOut: true };
      const { code, message } = error as Error & { code?: string };
      return { error: code ? `${code}: ${message}` : message, timedOut: false };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the kept-alive connections. */
  close(): void {
    void this.agent.destroy().catch(() => undefined);
  }
}

/** The answer's body as JSON, or undefined when it is not JSON. */
export function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** A header's first value. */
export function header(headers: ProviderAnswer['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
