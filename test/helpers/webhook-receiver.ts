import http from 'node:http';

/** A request a webhook receiver got. */
export interface ReceivedDelivery {
  headers: http.IncomingHttpHeaders;
  /** The raw body, as signed. */
  raw: string;
  body: any;
  at: number;
}

/** How the receiver answers the n-th request (0-based): a status, after an optional delay, with optional headers. */
export type Responder = (request: ReceivedDelivery, n: number) => { status: number; delayMs?: number; headers?: Record<string, string> };

/**
 * A real HTTP receiver on loopback for webhook tests: it records every request and answers as
 * `respond` says (200 by default).
 */
export interface Receiver {
  url: string;
  received: ReceivedDelivery[];
  respond: Responder;
  /** Resolves once `predicate` holds for what was received (rejects after `timeoutMs`). */
  waitFor(predicate: (received: ReceivedDelivery[]) => boolean, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

export async function startReceiver(respond: Responder = () => ({ status: 200 })): Promise<Receiver> {
  const received: ReceivedDelivery[] = [];
  const waiters = new Set<() => void>();
  const receiver: Receiver = {
    url: '',
    received,
    respond,
    waitFor(predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(received)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(received);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the receiver got ${received.length} deliveries; the condition did not hold within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        parsed = undefined;
      }
      const delivery: ReceivedDelivery = { headers: req.headers, raw, body: parsed, at: Date.now() };
      const n = received.length;
      received.push(delivery);
      const answer = receiver.respond(delivery, n);
      // Waiters look at what arrived, answered or not.
      for (const check of [...waiters]) check();
      const reply = () => {
        res.statusCode = answer.status;
        for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
        res.end('ok');
      };
      if (answer.delayMs) {
        const timer = setTimeout(reply, answer.delayMs);
        timer.unref();
        res.on('close', () => clearTimeout(timer));
      } else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  return receiver;
}
