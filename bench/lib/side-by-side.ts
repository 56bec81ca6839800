import type { LoadResult } from './load.js';

/** One slice of a load on each of two servers. */
export interface TurnSlice {
  a: LoadResult;
  b: LoadResult;
}

/**
 * Two servers, up side by side, take the same load in turns: `slices` short slices each,
 * alternating which goes first, after one slice each that warms them up and is not counted.
 * A machine that speeds up or slows down (runs here swing by up to 2x within minutes) then
 * weighs on both alike, and the slices' ratios compare what a run's totals cannot.
 */
export async function takeTurns(options: { slices: number; a: () => Promise<LoadResult>; b: () => Promise<LoadResult>; onSlice?: (index: number, slice: TurnSlice) => void }): Promise<TurnSlice[]> {
  const slices: TurnSlice[] = [];
  for (let index = -1; index < options.slices; index++) {
    const aFirst = index % 2 === 0;
    const first = await (aFirst ? options.a : options.b)();
    const second = await (aFirst ? options.b : options.a)();
    if (index < 0) continue;
    const slice = aFirst ? { a: first, b: second } : { a: second, b: first };
    slices.push(slice);
    options.onSlice?.(index, slice);
  }
  return slices;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** What the slices of takeTurns say: medians per server, and of the slices' ratios (b / a). */
export interface TurnsSummary {
  a: SideSummary;
  b: SideSummary;
  /** The median of the slices' ratios of requests a second, b / a: 1.05 is b 5% ahead. */
  medianRatio: number;
  /** Slices in which b served more requests a second than a. */
  bAhead: number;
  slices: number;
}

export interface SideSummary {
  requestsPerSecond: number;
  /** Median CPU per request, µs, per meter (server, postgres). */
  cpuMicros: Record<string, number>;
}

export function summarizeTurns(slices: TurnSlice[]): TurnsSummary {
  const side = (pick: (slice: TurnSlice) => LoadResult): SideSummary => {
    const results = slices.map(pick);
    const meters = Object.keys(results[0]?.cpuMicrosPerRequest ?? {});
    return {
      requestsPerSecond: Math.round(median(results.map((r) => r.requestsPerSecond))),
      cpuMicros: Object.fromEntries(meters.map((meter) => [meter, Math.round(median(results.map((r) => r.cpuMicrosPerRequest?.[meter] ?? 0)))])),
    };
  };
  return {
    a: side((slice) => slice.a),
    b: side((slice) => slice.b),
    medianRatio: Number(median(slices.map((slice) => slice.b.requestsPerSecond / slice.a.requestsPerSecond)).toFixed(3)),
    bAhead: slices.filter((slice) => slice.b.requestsPerSecond > slice.a.requestsPerSecond).length,
    slices: slices.length,
  };
}
