import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

/** One record's answer from the data import API. */
export type RecordResult = { success: true } | { success: false; error: { code: string; message: string } };

/** A batch's answer: per record, or one error for the whole call (a 4xx that retrying cannot fix). */
export type BatchAnswer = { results: Record<string, RecordResult> } | { error: { code: string; message: string } };

export interface ImportClientOptions {
  /** https://<app>.api-<region>.<domain>[:port] (http:// for a server behind a TLS proxy). */
  url: string;
  apiKey: string;
  /** Extra CA certificates (PEM), e.g. a self-signed server's. */
  ca?: string;
  /** Attempts per call for transient failures (5xx, 429, connection errors). */
  attempts: number;
  /** First backoff delay, doubled per attempt up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Told of each retry (for the log). */
  onRetry?: (reason: string, delayMs: number) => void;
}

/** Names under .localhost are the loopback (RFC 6761), as browsers resolve them, without DNS. */
const lookup: LookupFunction = (hostname, options, callback) => {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    if (options.all) (callback as (error: null, addresses: dns.LookupAddress[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
    return;
  }
  dns.lookup(hostname, options, callback as never);
};

class TransientError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'ECONNABORTED', 'EHOSTUNREACH']);

/** Posts batches to the data import API, retrying what a retry can fix. */
export class ImportClient {
  private readonly base: URL;
  private readonly agent: http.Agent;

  constructor(private readonly options: ImportClientOptions) {
    this.base = new URL(options.url);
    if (this.base.protocol !== 'https:' && this.base.protocol !== 'http:') throw new Error(`--url must be https:// (or http://): ${options.url}`);
    const agentOptions = { keepAlive: true, lookup, ...(options.ca ? { ca: options.ca } : {}) };
    this.agent = this.base.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  }

  /** POSTs `{wrapper: records}` to /v3.0/data_import/<path>. Throws after the last failed attempt. */
  async post(path: string, wrapper: string, records: Record<string, unknown>): Promise<BatchAnswer> {
    const body = JSON.stringify({ [wrapper]: records });
    const baseDelay = this.options.baseDelayMs ?? 250;
    const maxDelay = this.options.maxDelayMs ?? 30_000;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.send(path, body);
      } catch (error) {
        const transient = error instanceof TransientError || TRANSIENT_CODES.has((error as NodeJS.ErrnoException).code ?? '');
        if (!transient || attempt >= this.options.attempts) throw error;
        const backoff = Math.min(maxDelay, baseDelay * 2 ** (attempt - 1));
        // Full jitter keeps concurrent workers from retrying in step.
        const delay = error instanceof TransientError && error.retryAfterMs !== undefined ? error.retryAfterMs : backoff / 2 + Math.random() * (backoff / 2);
        this.options.onRetry?.((error as Error).message, delay);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  close(): void {
    this.agent.destroy();
  }

  private send(path: string, body: string): Promise<BatchAnswer> {
    const url = new URL(`/v3.0/data_import/${path}`, this.base);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = client.request(
        url,
        {
          method: 'POST',
          agent: this.agent,
          headers: { apikey: this.options.apiKey, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          timeout: 300_000,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            if (status === 429 || status >= 500) {
              const retryAfter = Number(response.headers['retry-after']);
              reject(new TransientError(`HTTP ${status}`, status === 429 && Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined));
              return;
            }
            let parsed: { data?: Record<string, RecordResult>; error?: { code?: string; message?: string } };
            try {
              parsed = JSON.parse(text);
            } catch {
              reject(new TransientError(`HTTP ${status}: the answer is not JSON`));
              return;
            }
            if (status === 200 && parsed.data) resolve({ results: parsed.data });
            else resolve({ error: { code: parsed.error?.code ?? `HTTP_${status}`, message: parsed.error?.message ?? `HTTP ${status}` } });
          });
        },
      );
      request.on('timeout', () => request.destroy(Object.assign(new Error('request timed out'), { code: 'ETIMEDOUT' })));
      request.on('error', reject);
      request.end(body);
    });
  }
}
