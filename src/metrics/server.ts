import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../domain/context.js';
import type { Metrics } from './registry.js';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * `GET /metrics` on a port of its own (PARLEY_METRICS_PORT), plain HTTP, apart from the API: a
 * scrape needs no tenant, key or TLS, and the API's rate limits and request counts never see it.
 * Bind it where only the scraper reaches it (docs/metrics.md).
 */
export async function listenForMetrics(metrics: Metrics, options: { port: number; host: string; log: Logger }): Promise<MetricsServer> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: the metrics are at GET /metrics.\n');
      return;
    }
    metrics.exposition().then(
      ({ contentType, text }) => {
        response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        options.log.warn({ err: error }, 'the metrics could not be collected');
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('The metrics could not be collected.\n');
      },
    );
  });
  // A scraper that connects and says nothing does not hold a socket for long.
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.log.info({ url: `http://${options.host}:${port}/metrics` }, 'serving Prometheus metrics');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
