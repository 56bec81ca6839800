import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';

/**
 * The demo chat page (docs/demo.md), registered only when PARLEY_DEMO=1: `GET /demo/` and the
 * few files it loads, from `page/` beside this module (the build copies packages/demo there, and
 * the client library's ES modules into `page/client/`: scripts/copy-assets.mjs). Every file is
 * read once, at start, into a fixed table by name; a request picks an entry of the table by its
 * exact path and no request's path ever reaches the file system, so no path can leave the page.
 */
export const PAGE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'page');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};
/** The page's own files (packages/demo); the client's modules are every `*.js` of `page/client/`. */
const PAGE_FILES = ['index.html', 'demo.js', 'demo.css'];
/**
 * Same origin only (the socket too: 'self' covers ws: and wss: of the page's host), no inline
 * script or style, nothing framed, no form posted anywhere (the page's forms are handled by its script).
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

interface PageFile {
  type: string;
  body: Buffer;
}

/** The table of what /demo/ serves: the path after /demo/ → the file. */
export function loadPage(dir = PAGE_DIR): Map<string, PageFile> {
  const missing = PAGE_FILES.filter((name) => !fs.existsSync(path.join(dir, name)));
  const clientDir = path.join(dir, 'client');
  const clientFiles = fs.existsSync(clientDir) ? fs.readdirSync(clientDir).filter((name) => /^[a-z0-9-]+\.js$/.test(name)) : [];
  if (!clientFiles.includes('index.js')) missing.push('client/index.js');
  if (missing.length > 0) throw new Error(`PARLEY_DEMO=1, but the demo page's files are not built (${missing.join(', ')} missing in ${dir}): run npm run build`);
  const files = new Map<string, PageFile>();
  const add = (name: string) => files.set(name, { type: TYPES[path.extname(name)]!, body: fs.readFileSync(path.join(dir, name)) });
  for (const name of PAGE_FILES) add(name);
  for (const name of clientFiles) add(`client/${name}`);
  files.set('', files.get('index.html')!);
  return files;
}

export const demoRoutes: FastifyPluginAsync = async (app) => {
  const files = loadPage();
  // Relative links need the slash: /demo answers with where the page is.
  app.get('/demo', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/demo/', 308));
  app.get<{ Params: { '*': string } }>('/demo/*', { schema: { hide: true } }, async (request, reply) => {
    const file = files.get(request.params['*']);
    if (!file) return reply.callNotFound();
    void reply.header('content-type', file.type).header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
    if (file.type.startsWith('text/html')) void reply.header('content-security-policy', CSP);
    return reply.send(file.body);
  });
};
