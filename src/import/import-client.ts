import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import tls from 'node:tls';

/** One record's answer from the data import API. */
export type RecordResult = { success: true } | { success: false; error: { code: string; message: string } };

/** A batch's answer: per record, or one error for the whole call (a 4xx that retrying cannot fix). */
export type BatchAnswer = { results: Record<string, RecordResult> } | { status: number; error: { code: string; message: string } };

export interface ImportClientOptions {
  /** https://<app>.api-<region>.<domain>[:port] (http:// for a server behind a TLS proxy). */
  url: string;
  apiKey: string;
  /** A CA certificate (PEM) trusted besides the system's, e.g. a self-signed server's. */
  ca?: string;
  /** Attempts per call for transient failures (5xx, 429, connection errors). */
  attempts: number;
  /** First backoff delay, doubled per attempt up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** No retry starts once aborted (the call in flight still finishes). */
  signal?: AbortSignal;
  /** Told of each retry (for the log). */
  onRetry?: (reason: string, delayMs: number) => void;
}

/** The server could not be reached (or kept failing): no record was refused, none is known stored. */
export class UnreachableError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
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
    readonly code: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Connection failures a later attempt may not meet. ENOTFOUND or a certificate error will not go away. */
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Retry-After: seconds, or an HTTP date. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The delay before attempt `attempt + 1`: doubling from base up to max, with jitter (half fixed, half random). */
export function backoffMs(attempt: number, baseDelayMs: number, maxDelayMs: number, random = Math.random): number {
  const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
  // Jitter keeps concurrent workers from retrying in step.
  return backoff / 2 + random() * (backoff / 2);
}

/** Posts batches to the data import API, retrying what a retry can fix. */
export class ImportClient {
  private readonly base: URL;
  private readonly agent: http.Agent;

  constructor(private readonly options: ImportClientOptions) {
    this.base = new URL(options.url);
    if (this.base.protocol !== 'https:' && this.base.protocol !== 'http:') throw new Error(`--url must be https:// (or http://): ${options.url}`);
    // `ca` replaces Node's roots: keep them, so --ca adds a CA rather than trusting only it.
    const agentOptions = { keepAlive: true, lookup, ...(options.ca ? { ca: [...tls.rootCertificates, options.ca] } : {}) };
    this.agent = this.base.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  }

  /**
   * POSTs `{wrapper: records}` to /v3.0/data_import/<path>: the per-record results, or the call's
   * error when the server refused it (4xx). Throws UnreachableError when the server could not
   * answer: after the last attempt, on a failure no retry fixes (DNS, TLS), or once aborted.
   */
  async post(path: string, wrapper: string, records: Record<string, unknown>): Promise<BatchAnswer> {
    const body = JSON.stringify({ [wrapper]: records });
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.send(path, body);
      } catch (error) {
        const code = error instanceof TransientError ? error.code : ((error as NodeJS.ErrnoException).code ?? 'ERR_IMPORT_UNREACHABLE');
        const message = (error as Error).message;
        if (!(error instanceof TransientError || TRANSIENT_CODES.has(code))) throw new UnreachableError(message, code);
        if (attempt >= this.options.attempts) throw new UnreachableError(`${message} (gave up after ${attempt} attempts)`, code);
        if (this.options.signal?.aborted) throw new UnreachableError(`${message} (not retried: stopping)`, code);
        const computed = backoffMs(attempt, this.options.baseDelayMs ?? 250, this.options.maxDelayMs ?? 30_000);
        const delay = error instanceof TransientError && error.retryAfterMs !== undefined ? error.retryAfterMs : computed;
        this.options.onRetry?.(message, delay);
        if (!(await this.sleep(delay))) throw new UnreachableError(`${message} (not retried: stopping)`, code);
      }
    }
  }

  /** Closes the idle connections and abandons the calls still in flight. */
  close(): void {
    this.agent.destroy();
  }

  /** Waits; false when aborted first. */
  private sleep(ms: number): Promise<boolean> {
    const signal = this.options.signal;
    return new Promise((resolve) => {
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
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
          // Idle time on the socket: a large batch may take a while to commit.
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
              const wait = status === 429 ? retryAfterMs(response.headers['retry-after']) : undefined;
              reject(new TransientError(`HTTP ${status}`, `HTTP_${status}`, wait));
              return;
            }
            let parsed: { data?: Record<string, RecordResult>; error?: { code?: string; message?: string } } | undefined;
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = undefined;
            }
            if (status === 200 && parsed?.data && typeof parsed.data === 'object') resolve({ results: parsed.data });
            else if (status === 200) reject(new TransientError('HTTP 200 without per-record results', 'ERR_IMPORT_BAD_ANSWER'));
            else resolve({ status, error: { code: parsed?.error?.code ?? `HTTP_${status}`, message: parsed?.error?.message ?? `HTTP ${status}` } });
          });
        },
      );
      request.on('timeout', () => request.destroy(Object.assign(new Error('request timed out'), { code: 'ETIMEDOUT' })));
      request.on('error', reject);
      request.end(body);
    });
  }
}
