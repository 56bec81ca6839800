/**
 * What the fake providers (fcm.ts, apns.ts, sendgrid.ts, twilio.ts) share: scripted answers,
 * the list of protocol problems each found, and an HTTP/1.1 server on loopback.
 *
 * Each fake checks what it receives as the real provider would and answers a request that breaks
 * the protocol as the provider does (401, 400 ...), noting why in `problems`: a test asserts the
 * list is empty after its sends, so a client that sends the wrong thing fails even where the
 * test's own assertions would not catch it.
 */
import http from 'node:http';

/** An answer a test tells a fake to give to the next request (after its credentials were checked). */
export interface ScriptedAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Never answer (the connection stays open until the fake closes). */
  hang?: boolean;
}

export interface FakeBase {
  /** Why requests were refused as breaking the protocol (an empty list: all were well formed). */
  problems: string[];
  /** Answers the next requests take, first first (after their auth was checked). */
  script(...answers: ScriptedAnswer[]): void;
  /** Every request from now on is left unanswered. */
  hangAll: boolean;
  close(): Promise<void>;
}

export class Script {
  private readonly queue: ScriptedAnswer[] = [];
  push(answers: ScriptedAnswer[]): void {
    this.queue.push(...answers);
  }
  next(): ScriptedAnswer | undefined {
    return this.queue.shift();
  }
}

export function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Writes a JSON (or empty) answer. */
export function answer(res: http.ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, Object.assign(text ? { 'content-type': 'application/json' } : {}, headers));
  res.end(text);
}

/** An HTTP/1.1 server on 127.0.0.1 whose handler's failures are answered 500 (and noted). */
export async function listen(handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>, problems: string[]): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    handler(req, res).catch((error: Error) => {
      problems.push(`the fake failed: ${error.message}`);
      if (!res.headersSent) answer(res, 500, { error: 'fake failed' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A JWT's three parts, decoded (undefined when it is not a compact JWS of two JSON objects). */
export function decodeJwt(jwt: string): { header: Record<string, unknown>; claims: Record<string, unknown>; input: string; signature: Buffer } | undefined {
  const parts = jwt.split('.');
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part))) return undefined;
  try {
    const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as unknown;
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as unknown;
    if (!isObject(header) || !isObject(claims)) return undefined;
    return { header, claims, input: `${parts[0]}.${parts[1]}`, signature: Buffer.from(parts[2]!, 'base64url') };
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses JSON, or undefined. */
export function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
