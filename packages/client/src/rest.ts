import type { Conversation } from './protocol.js';

/** What the REST calls need of fetch: the global one (browsers, Node 20) fits. */
export interface FetchResponse {
  readonly ok: boolean;
  readonly status: number;
  text(): Promise<string>;
  /** The body as a stream (read by the SSE transport). */
  readonly body?: { getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }> } } | null;
}
export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }) => Promise<FetchResponse>;

/**
 * The platform's fetch bound to the global object, or undefined where there is none. A browser's
 * fetch must be called with the window (or no object) as `this`: stored in a field and called as
 * a method (`this.fetch(...)`), it throws "Illegal invocation".
 */
export function platformFetch(): FetchLike | undefined {
  const fetch = (globalThis as { fetch?: FetchLike }).fetch;
  return fetch === undefined ? undefined : fetch.bind(globalThis);
}

export interface RestOptions {
  /** Parley's base url: https://host (and a path prefix, if Parley is served under one). */
  baseUrl: string;
  appId: string;
  /** The user's token, or a function answering the current one (the client's, refreshed). */
  authToken: string | (() => string);
  /** Asked once when a call is refused for its token (401): a fresh one, and the call is retried once. */
  refreshToken?: (() => Promise<string>) | undefined;
  fetch?: FetchLike | undefined;
}

/** The message a chat page sends: a text by default; `type`, `category` and `data` as the vendor's POST /v3/messages. */
export interface SendMessageInput extends Conversation {
  text?: string;
  category?: 'message' | 'custom';
  type?: string;
  /** The message's data; default `{ text }`. */
  data?: Record<string, unknown>;
  /** The client's id of the message, so that a retried send stores it once. */
  muid?: string;
  tags?: string[];
}

export type Query = Record<string, string | number | boolean | undefined>;

/** A page of a list: the vendor's `data` and `meta` (a history's cursors are in `meta.next`, `meta.previous`). */
export interface Page<T = Record<string, unknown>> {
  data: T[];
  meta: Record<string, unknown>;
}

/** A refusal from Parley, in the vendor's error shape. */
export class ParleyApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ParleyApiError';
  }
}

/**
 * The REST calls of a chat page, as the user of the token (the `appId` and `authToken`
 * headers): send, history, conversations, receipts. Paths are the vendor's v3 paths.
 */
export class ParleyRest {
  private readonly fetch: FetchLike;
  private readonly baseUrl: string;

  constructor(private readonly options: RestOptions) {
    const fetch = options.fetch ?? platformFetch();
    if (!fetch) throw new TypeError('No global fetch here: pass one');
    this.fetch = fetch;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** POST /v3/messages: the stored message. */
  async sendMessage(input: SendMessageInput): Promise<Record<string, unknown>> {
    if (input.data === undefined && typeof input.text !== 'string') throw new TypeError('sendMessage needs a text or data');
    const body: Record<string, unknown> = {
      receiver: input.receiver,
      receiverType: input.receiverType,
      category: input.category ?? 'message',
      type: input.type ?? 'text',
      data: input.data ?? { text: input.text },
    };
    if (input.muid !== undefined) body.muid = input.muid;
    if (input.tags !== undefined) body.tags = input.tags;
    const answer = await this.call('POST', '/v3/messages', undefined, body);
    return answer.data as Record<string, unknown>;
  }

  /**
   * A page of a conversation's history: GET /v3/users/{uid}/messages or /v3/groups/{guid}/messages,
   * with the vendor's query (`limit`, `affix`, `id`, `sentAt`, `unread`, ...). Without a cursor,
   * the newest messages.
   */
  async messages(conversation: Conversation, query: Query = {}): Promise<Page> {
    return this.page(await this.call('GET', `${conversationPath(conversation)}/messages`, query));
  }

  /** GET /v3/conversations: the user's conversations (`perPage`, `page`, `conversationType`, `unread`, ...). */
  async conversations(query: Query = {}): Promise<Page> {
    return this.page(await this.call('GET', '/v3/conversations', query));
  }

  /** POST /v3/{users|groups}/{id}/conversation/read: read up to `messageId` (default: the last message). */
  async markRead(conversation: Conversation, messageId?: string | number): Promise<void> {
    await this.call('POST', `${conversationPath(conversation)}/conversation/read`, undefined, messageId === undefined ? {} : { messageId });
  }

  /** POST /v3/{users|groups}/{id}/conversation/delivered: delivered up to `messageId` (default: the last message). */
  async markDelivered(conversation: Conversation, messageId?: string | number): Promise<void> {
    await this.call('POST', `${conversationPath(conversation)}/conversation/delivered`, undefined, messageId === undefined ? {} : { messageId });
  }

  /**
   * Any other call of the API as this user: the answer's JSON. A refusal throws ParleyApiError;
   * a 401 for the token asks for a fresh one once and tries again.
   */
  async call(method: string, path: string, query?: Query, body?: unknown): Promise<Record<string, unknown>> {
    const url = this.url(path, query);
    // Called unbound (through a local), never as this object's method: a browser's fetch throws
    // "Illegal invocation" when its `this` is anything but the window (or undefined).
    const fetch = this.fetch;
    const send = () => fetch(url, { method, headers: this.headers(body !== undefined), body: body === undefined ? undefined : JSON.stringify(body) });
    let response = await send();
    if (response.status === 401 && this.options.refreshToken) {
      const refused = await answerOf(response);
      if (!isTokenRefusal(refused)) throw toError(response.status, refused);
      await this.options.refreshToken();
      response = await send();
    }
    const answer = await answerOf(response);
    if (!response.ok) throw toError(response.status, answer);
    return answer;
  }

  private headers(hasBody: boolean): Record<string, string> {
    const token = typeof this.options.authToken === 'function' ? this.options.authToken() : this.options.authToken;
    const headers: Record<string, string> = { accept: 'application/json', appId: this.options.appId, authToken: token };
    if (hasBody) headers['content-type'] = 'application/json';
    return headers;
  }

  private url(path: string, query: Query | undefined): string {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) search.set(name, String(value));
    const text = search.toString();
    return `${this.baseUrl}${path}${text ? `?${text}` : ''}`;
  }

  private page(answer: Record<string, unknown>): Page {
    return { data: Array.isArray(answer.data) ? (answer.data as Record<string, unknown>[]) : [], meta: (answer.meta as Record<string, unknown>) ?? {} };
  }
}

const conversationPath = ({ receiver, receiverType }: Conversation) => `/v3/${receiverType === 'group' ? 'groups' : 'users'}/${encodeURIComponent(receiver)}`;

async function answerOf(response: FetchResponse): Promise<Record<string, unknown>> {
  const text = await response.text();
  if (text === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : { data: value };
  } catch {
    return { error: { code: 'ERR_NOT_JSON', message: text.slice(0, 200) } };
  }
}

function errorOf(answer: Record<string, unknown>): { code?: unknown; message?: unknown; details?: unknown } {
  const error = answer.error;
  return typeof error === 'object' && error !== null ? (error as { code?: unknown; message?: unknown; details?: unknown }) : {};
}

const isTokenRefusal = (answer: Record<string, unknown>) => {
  const code = errorOf(answer).code;
  return typeof code === 'string' && code.includes('AUTH_TOKEN');
};

function toError(status: number, answer: Record<string, unknown>): ParleyApiError {
  const { code, message, details } = errorOf(answer);
  return new ParleyApiError(status, typeof code === 'string' ? code : `HTTP_${status}`, typeof message === 'string' ? message : `HTTP ${status}`, details);
}
