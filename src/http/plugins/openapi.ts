import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { TenancySettings } from './tenancy.js';

/**
 * The OpenAPI 3 document, generated from the route schemas: served as JSON at /openapi.json and
 * as a browsable UI at /docs. Operation ids are the vendor's.
 */
export async function installOpenApi(app: FastifyInstance, tenancy: TenancySettings, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Parley API',
        version,
        description:
          'Self-hosted chat API, wire-compatible with the CometChat REST API v3. ' +
          'The app is named by the host (<appId>.api-<region>.<domain>) or by the appId header.',
      },
      servers: [
        {
          url: 'https://{appId}.api-{region}.{domain}',
          variables: {
            appId: { default: 'appId', description: 'App ID' },
            region: { enum: [tenancy.region], default: tenancy.region, description: 'Region of this deployment' },
            domain: { default: tenancy.domain },
          },
        },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'apikey', description: 'An API key of the app.' },
        },
      },
      security: [{ apiKey: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
