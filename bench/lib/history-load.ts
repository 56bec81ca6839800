import type { LoadOptions } from './load.js';

/** A bench server's 1:1 history (bench/parley-server.ts, BENCH_HISTORY): where it is and who reads it. */
export interface HistoryTarget {
  base: string;
  headers: Record<string, string>;
  /** The viewer (onBehalfOf) and the other side of the conversation (historyPairs). */
  viewer: string;
  other: string;
  /** Messages in the conversation. */
  size: number;
}

/**
 * The load of "history page, another each time": each request asks for another page of 50,
 * older ones from the newest back, so each is built (the cost of a first read). The pages
 * repeat after size / 50 requests. Reads the newest message's id first.
 */
export async function anotherPageEachTime(target: HistoryTarget): Promise<Pick<LoadOptions, 'url' | 'headers' | 'path'>> {
  const { base, viewer, other } = target;
  const headers = { ...target.headers, onbehalfof: viewer };
  const newest = await fetch(`${base}/v3/users/${other}/messages?limit=1`, { headers });
  const top = BigInt(((await newest.json()) as { data: Array<{ id: string }> }).data[0]!.id);
  const pages = BigInt(Math.max(1, Math.floor(target.size / 50) - 1));
  let n = 0;
  return {
    url: `${base}/v3/users/${other}/messages`,
    headers,
    path: () => `/v3/users/${other}/messages?limit=50&affix=prepend&id=${top - 50n * (BigInt(n++) % pages)}`,
  };
}
