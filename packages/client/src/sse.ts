import { CloseCode } from './protocol.js';
import type { FetchLike } from './rest.js';

/**
 * The SSE fallback (`GET /v3/me/events`, for where a socket is not possible) dressed as the
 * socket the client drives: the token and the resume id go in headers (`authToken`,
 * `Last-Event-ID`), each event's data is handed on as a frame, and the answer's status becomes
 * the close code the gateway would have sent. The stream only reads: frames sent are dropped.
 */
export interface SseOptions {
  url: string;
  appId: string;
  authToken: string;
  lastEventId: string | undefined;
  fetch: FetchLike;
}

/** What the statuses of a refused stream mean, as the gateway's close codes. */
const STATUSES: Record<number, number> = { 401: CloseCode.BadToken, 403: CloseCode.BadToken, 429: CloseCode.RateLimited, 503: CloseCode.Restarting };
const ABNORMAL = 1006;

export class SseSocket {
  readyState = 0;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  private readonly abort = new AbortController();
  private ended = false;

  constructor(options: SseOptions) {
    void this.run(options).catch((error: unknown) => this.end(ABNORMAL, String(error)));
  }

  send(_data: string): void {}

  close(code = 1000, reason = ''): void {
    this.abort.abort();
    this.end(code, reason);
  }

  private async run({ url, appId, authToken, lastEventId, fetch }: SseOptions): Promise<void> {
    const headers: Record<string, string> = { accept: 'text/event-stream', appId, authToken };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const response = await fetch(url, { method: 'GET', headers, signal: this.abort.signal });
    if (this.ended) return;
    if (response.status !== 200 || !response.body) {
      const text = await response.text().catch(() => '');
      this.end(STATUSES[response.status] ?? ABNORMAL, `HTTP ${response.status} ${text.slice(0, 200)}`);
      return;
    }
    this.readyState = 1;
    this.onopen?.({});
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = new EventStreamParser((text) => this.onmessage?.({ data: text }));
    for (;;) {
      const { done, value } = await reader.read();
      if (this.ended) return;
      if (done) {
        this.end(ABNORMAL, 'the stream ended');
        return;
      }
      parser.push(decoder.decode(value, { stream: true }));
    }
  }

  private end(code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

/**
 * text/event-stream, one event per blank line: `data:` lines make the frame, `id:` names the
 * event. Data that is a frame (a `type`) is handed on as it is (an event without an id takes the
 * stream's); a webhook payload (a `trigger`, no `type`) becomes an event frame with the stream's
 * id. A comment is the stream's keep-alive: handed on as a pong, so that it counts as life.
 */
export class EventStreamParser {
  private buffer = '';
  private data: string[] = [];
  private id: string | undefined;

  constructor(private readonly emit: (frameText: string) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let end = this.buffer.search(/\r\n|\r|\n/);
    // A CR at the end may be the first half of a CRLF: wait for what follows.
    while (end >= 0 && !(end === this.buffer.length - 1 && this.buffer[end] === '\r')) {
      const line = this.buffer.slice(0, end);
      const newline = this.buffer.startsWith('\r\n', end) ? 2 : 1;
      this.buffer = this.buffer.slice(end + newline);
      this.line(line);
      end = this.buffer.search(/\r\n|\r|\n/);
    }
  }

  private line(line: string): void {
    if (line === '') this.dispatch();
    else if (line.startsWith(':')) this.emit('{"type":"pong"}');
    else this.field(line);
  }

  private field(line: string): void {
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') this.data.push(value);
    else if (field === 'id') this.id = value;
  }

  private dispatch(): void {
    const text = this.data.join('\n');
    this.data = [];
    const id = this.id;
    this.id = undefined;
    if (text === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const frame = value as Record<string, unknown>;
    if (typeof frame.type === 'string') {
      this.emit(frame.type === 'event' && frame.id === undefined && id !== undefined ? JSON.stringify(Object.assign({ id }, frame)) : text);
    } else if (typeof frame.trigger === 'string' && id !== undefined) {
      this.emit(JSON.stringify(Object.assign({ type: 'event', id }, frame)));
    }
  }
}
