// The no-database baseline: bare Fastify answering a user-shaped JSON body, serialised through
// a response schema as Parley's routes are. Ratios against it show what Parley's own work costs.
import Fastify from 'fastify';
import { announceReady } from './lib/processes.js';

const app = Fastify({ logger: false });
const user = { uid: 'bench-user', name: 'Bench User', role: 'default', status: 'offline', createdAt: 1700000000 };
app.get(
  '/v3/users/:uid',
  {
    schema: {
      response: {
        200: {
          type: 'object',
          properties: {
            data: {
              type: 'object',
              properties: { uid: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, status: { type: 'string' }, createdAt: { type: 'integer' } },
            },
          },
        },
      },
    },
  },
  async () => ({ data: user }),
);
await app.listen({ port: 0, host: '127.0.0.1' });
announceReady({ port: (app.server.address() as { port: number }).port });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
