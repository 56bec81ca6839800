/** A moderation hook on loopback for tests (docs/moderation.md): it records each call and answers as `respond` says. */
import http from 'node:http';

export interface Call {
  headers: http.IncomingHttpHeaders;
  raw: string;
}
export interface Answer {
  status?: number;
  body?: string;
  delayMs?: number;
  /** The status and the body's first byte at once, the rest this much later. */
  stallBodyMs?: number;
  headers?: Record<string, string>;
}
export interface HookServer {
  url: string;
  calls: Call[];
  respond: (call: Call) => Answer;
  close(): Promise<void>;
}

export async function startHook(respond: (call: Call) => Answer = () => ({ body: '{"action":"allow"}' })): Promise<HookServer> {
  const hook: HookServer = { url: '', calls: [], respond, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const call = { headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') };
      hook.calls.push(call);
      const answer = hook.respond(call);
      const reply = () => {
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
        const text = answer.body ?? '';
        if (!answer.stallBodyMs) return res.end(text);
        res.write(text.slice(0, 1));
        const timer = setTimeout(() => res.end(text.slice(1)), answer.stallBodyMs);
        res.on('close', () => clearTimeout(timer));
      };
      if (!answer.delayMs) return reply();
      const timer = setTimeout(reply, answer.delayMs);
      res.on('close', () => clearTimeout(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  hook.url = `http://127.0.0.1:${port}/moderate`;
  hook.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return hook;
}

/** An answer of this JSON value. */
export const json = (value: unknown): Answer => ({ body: JSON.stringify(value) });
