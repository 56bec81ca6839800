// The gateway's floor (docs/performance.md, "Real-time"): what this machine allows a WebSocket
// server at all, for the same sockets as Parley's gateway. A bare `ws` server, no Parley, no
// database: a socket's first frame gets a `hello` back (any token), and a broadcast writes one
// frame serialised once to every socket, in the order asked. No audience, no log, no resume.
//
// POST /broadcast?count=N&rate=R&bytes=B: N frames of about B bytes, R a second (0: as fast as
// the sockets take them), each to every socket, each carrying the time it was written (`t=` in
// ms since the epoch, as Parley's bench messages carry theirs); answers once all are written.
// GET /stats: sockets open. SIGUSR2: a GC (with --expose-gc). Env: none. Prints {"ready":{"port":…}} when listening.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { WebSocketServer, type WebSocket } from 'ws';
import { announceReady } from './lib/processes.js';

// SIGUSR2: a full GC (with --expose-gc), so that an RSS read after it holds what is live.
process.on('SIGUSR2', () => (globalThis as { gc?: () => void }).gc?.());

const sockets = new Set<WebSocket>();
/** Event ids go on from one broadcast to the next, as the log's: a client drops an id it has had. */
let lastId = 0;
const server = http.createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://floor');
  if (request.method === 'GET' && url.pathname === '/stats') {
    response.end(JSON.stringify({ sockets: sockets.size }));
    return;
  }
  if (request.method === 'POST' && url.pathname === '/broadcast') {
    const count = Number(url.searchParams.get('count') ?? 1);
    const rate = Number(url.searchParams.get('rate') ?? 0);
    const bytes = Number(url.searchParams.get('bytes') ?? 700);
    void broadcast(count, rate, bytes).then((written) => response.end(JSON.stringify({ written })));
    return;
  }
  response.statusCode = 404;
  response.end();
});

// No per-message deflate, as the gateway: compression costs CPU per socket for small frames.
const wss = new WebSocketServer({ server, path: '/v3/ws', perMessageDeflate: false, handleProtocols: (protocols) => (protocols.has('parley.v1') ? 'parley.v1' : false) });
wss.on('connection', (socket) => {
  socket.once('message', () => {
    sockets.add(socket);
    socket.send(JSON.stringify({ type: 'hello', connectionId: `floor-${sockets.size}`, heartbeatMs: 25_000 }));
  });
  socket.on('message', (data) => {
    if (String(data).includes('"ping"')) socket.send('{"type":"pong"}');
  });
  socket.on('close', () => sockets.delete(socket));
  socket.on('error', () => sockets.delete(socket));
});

/** `count` frames to every socket, `rate` a second (0: each once the sockets have taken the last); answers the frames written in all. */
async function broadcast(count: number, rate: number, bytes: number): Promise<number> {
  const padding = 'x'.repeat(Math.max(0, bytes - 120));
  const started = performance.now();
  let written = 0;
  for (let i = 0; i < count; i++) {
    if (rate > 0) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    } else if (i % 8 === 0) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const t = performance.timeOrigin + performance.now();
    // Serialised once, written to every socket (as the gateway writes one event's frame).
    const frame = `{"type":"event","id":"${++lastId}","trigger":"message_sent","data":{"message":{"data":{"text":"t=${t.toFixed(3)} ${padding}"}}}}`;
    for (const socket of sockets) {
      socket.send(frame);
      written++;
    }
  }
  return written;
}

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  announceReady({ port: typeof address === 'object' && address ? address.port : 0 });
});
