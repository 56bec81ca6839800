/**
 * The addresses the client talks to: the gateway's `…/v3/ws?appId=…` and the REST API's base,
 * each derived from the other when only one is given. A token never goes into either.
 */
export interface Addresses {
  /** The gateway, ws: or wss:, with the appId in its query. */
  socketUrl: string;
  /** The REST API's origin (and path prefix, if Parley is served under one), http: or https:. */
  restBase: string;
}

const SCHEMES: Record<string, string> = { 'http:': 'ws:', 'https:': 'wss:' };

export function addresses(appId: string, options: { url?: string; baseUrl?: string }): Addresses {
  if (!options.url && !options.baseUrl) throw new TypeError('Give the client a baseUrl (https://host) or the gateway url (wss://host/v3/ws)');
  const restBase = options.baseUrl ? base(options.baseUrl) : restOf(options.url!);
  const socket = options.url ? new URL(options.url) : new URL(`${restBase}/v3/ws`);
  if (SCHEMES[socket.protocol]) socket.protocol = SCHEMES[socket.protocol]!;
  if (socket.protocol !== 'ws:' && socket.protocol !== 'wss:') throw new TypeError(`The gateway url must be ws:, wss:, http: or https:, not ${socket.protocol}`);
  if (socket.searchParams.has('authToken')) throw new TypeError('The token does not go into the url: the client sends it in its first frame');
  if (!socket.searchParams.has('appId')) socket.searchParams.set('appId', appId);
  return { socketUrl: socket.toString(), restBase };
}

/** The base without a trailing slash, http: or https:. */
function base(text: string): string {
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`The baseUrl must be http: or https:, not ${url.protocol}`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The REST base of a gateway url: its scheme's http twin, and the path before `/v3/ws`. */
function restOf(socketUrl: string): string {
  const url = new URL(socketUrl);
  const scheme = url.protocol === 'wss:' || url.protocol === 'https:' ? 'https:' : 'http:';
  const prefix = url.pathname.replace(/\/v3(\.0)?\/ws\/?$/, '').replace(/\/+$/, '');
  return `${scheme}//${url.host}${prefix}`;
}
