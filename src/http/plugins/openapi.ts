import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { resolveAppId, type TenancySettings } from './tenancy.js';

/** What the app id variable holds when the page was not loaded from an app's own host. */
export const APP_ID_PLACEHOLDER = 'your-app-id';

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
        // Markdown, which the UI renders: an unescaped <appId> would be taken for an HTML tag and vanish.
        description:
          'Self-hosted chat API, wire-compatible with the CometChat REST API v3. ' +
          `The app is named by the host (&lt;appId&gt;.api-${tenancy.region}.${tenancy.domain}) or, on any other host, by the appId header. ` +
          "To try a call here: under Authorize, give one of your app's API keys and its id as appId (the first start prints both; " +
          "`parley apps list` lists the apps). On a page loaded from your app's own host the host names the app and appId may stay empty.",
      },
      // Replaced per request by serversFor (the page's own scheme and port); this form is the one
      // app.swagger() gives outside a request.
      servers: [tenantServer(tenancy, 'https:', APP_ID_PLACEHOLDER)],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'apikey', description: 'An API key of the app.' },
          appId: {
            type: 'apiKey',
            in: 'header',
            name: 'appId',
            description: "The app's id, on a host that does not name the app (localhost, an IP address, a proxy's name).",
          },
        },
      },
      // The appId header is needed only where the host does not name the app.
      security: [{ apiKey: [], appId: [] }, { apiKey: [] }],
    },
  });
  // The UI's "Try it out" sends to the document's first server, so it is built from the request
  // the page came with: a server on another port (or scheme) than the one the page was loaded
  // from would refuse the call.
  // The management operations name servers of their own (the vendor's host, and /mgmt on any
  // host): those are rebuilt the same way.
  const withServers = (doc: Record<string, unknown>, request: FastifyRequest) =>
    Object.assign({}, doc, { servers: serversFor(request, tenancy), paths: withOperationServers(doc.paths as Paths | undefined, managementServersFor(request, tenancy)) });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, transformSpecification: withServers });
  app.get('/openapi.json', { schema: { hide: true } }, async (request) => withServers(app.swagger() as unknown as Record<string, unknown>, request));
}

/** A Host header fit to be written back as an origin: a name or address and a port, nothing else. */
const PLAIN_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * The servers of the document served to this request, with the scheme and port it came on: the
 * page's own host first when it does not name an app (a browser sends "Try it out" there without
 * a cross-origin request, the app id going as the appId header), then the app's own host on this
 * deployment's region and domain with the app id a variable: the page's app when it was loaded
 * from an app's host (then the only server), a placeholder to replace otherwise.
 */
export function serversFor(request: FastifyRequest, tenancy: TenancySettings): Server[] {
  const scheme = `${request.protocol ?? 'https'}:`;
  const port = request.port === null ? '' : `:${request.port}`;
  let appId: string | undefined;
  try {
    appId = resolveAppId(request.hostname, undefined, tenancy);
  } catch {
    // Not an app's host (localhost, an IP, a proxy's name): the app id goes as a header.
  }
  const appHost = tenantServer(tenancy, scheme, appId ?? APP_ID_PLACEHOLDER, port);
  if (appId !== undefined || !PLAIN_HOST.test(request.host)) return [appHost];
  const here = { url: `${scheme}//${request.host}`, description: "This host (give your app's id as appId under Authorize)" };
  return [here, appHost];
}

/**
 * The management operations' servers for this request, on its scheme and port: `/mgmt` on the
 * page's own host first when it is a plain name and port (no cross-origin call from the page),
 * then the vendor's host `apimgmt.<domain>` and `<domain>/mgmt`.
 */
export function managementServersFor(request: FastifyRequest, tenancy: TenancySettings): Server[] {
  const scheme = `${request.protocol ?? 'https'}:`;
  const port = request.port === null ? '' : `:${request.port}`;
  const servers: Server[] = [
    { url: `${scheme}//apimgmt.${tenancy.domain}${port}`, description: "The vendor's management host" },
    { url: `${scheme}//${tenancy.domain}${port}/mgmt`, description: 'The same operations under /mgmt' },
  ];
  const here = `${scheme}//${request.host}/mgmt`;
  if (PLAIN_HOST.test(request.host) && !servers.some((server) => server.url === here)) servers.unshift({ url: here, description: 'This host, under /mgmt' });
  return servers;
}

type Paths = Record<string, Record<string, unknown>>;

/** `paths` with every operation that names servers of its own given `servers` instead (copies; the document is not changed). */
function withOperationServers(paths: Paths | undefined, servers: Server[]): Paths | undefined {
  if (paths === undefined) return undefined;
  const copy: Paths = {};
  for (const [path, item] of Object.entries(paths)) {
    const operations: Record<string, unknown> = {};
    for (const [method, operation] of Object.entries(item)) {
      const own = operation !== null && typeof operation === 'object' && 'servers' in operation;
      operations[method] = own ? Object.assign({}, operation, { servers }) : operation;
    }
    copy[path] = operations;
  }
  return copy;
}

interface Server {
  url: string;
  description: string;
  variables?: Record<string, { default: string; description: string }>;
}

function tenantServer(tenancy: TenancySettings, scheme: string, appId: string, port = ''): Server {
  return {
    url: `${scheme}//{appId}.api-${tenancy.region}.${tenancy.domain}${port}`,
    description: "Your app's own host (from this page only when the page was loaded from it)",
    variables: {
      appId: { default: appId, description: `Your app's id (the first start prints it; \`parley apps list\` lists them)` },
    },
  };
}
