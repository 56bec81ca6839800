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

/** One slice of a send A/B: sends a second, the servers' CPU per send (µs) and p99s, with the part and without. */
export interface SendSlice {
  with: number;
  without: number;
  withCpuMicros: number;
  withoutCpuMicros: number;
  withP99Ms: number;
  withoutP99Ms: number;
}

type SendKind = 'oneToOne' | 'group';

/** The slices of a send A/B per kind, the medians of their ratios (with / without) and of the servers' CPU per send. */
export interface SendTurns {
  oneToOne: SendSlice[];
  group: SendSlice[];
  /** Medians of the slices' ratios, with / without: 1 is free, 0.95 costs 5%. */
  medianRatio: Record<SendKind, number>;
  /** Medians of the servers' CPU per send, µs, with / without. */
  medianCpuMicros: Record<SendKind, [withPart: number, without: number]>;
}

/**
 * The send A/B of two servers, one with a part and one without (the hardening's and the
 * metrics' benches): 1:1 and group sends, `slices` each taken in turns (takeTurns), each slice
 * logged as `<label> A/B <kind> slice N`.
 */
export async function sendTurns(
  label: string,
  slices: number,
  scenarios: { with: Record<SendKind, () => Promise<LoadResult>>; without: Record<SendKind, () => Promise<LoadResult>> },
  log: (line: string) => void,
): Promise<SendTurns> {
  const result: SendTurns = { oneToOne: [], group: [], medianRatio: { oneToOne: 0, group: 0 }, medianCpuMicros: { oneToOne: [0, 0], group: [0, 0] } };
  for (const kind of ['oneToOne', 'group'] as const) {
    await takeTurns({
      slices,
      a: scenarios.with[kind],
      b: scenarios.without[kind],
      onSlice: (index, { a: w, b: wo }) => {
        const row: SendSlice = {
          with: w.requestsPerSecond,
          without: wo.requestsPerSecond,
          withCpuMicros: w.cpuMicrosPerRequest?.server ?? 0,
          withoutCpuMicros: wo.cpuMicrosPerRequest?.server ?? 0,
          withP99Ms: w.p99Ms,
          withoutP99Ms: wo.p99Ms,
        };
        result[kind].push(row);
        log(
          `${label} A/B ${kind === 'oneToOne' ? '1:1' : 'group'} slice ${index + 1}: ${row.with} vs ${row.without} sends/s ` +
            `(${(row.with / row.without).toFixed(3)}), server CPU per send ${row.withCpuMicros} / ${row.withoutCpuMicros} µs`,
        );
      },
    });
    const rows = result[kind];
    result.medianRatio[kind] = Number(median(rows.map((r) => r.with / r.without)).toFixed(3));
    result.medianCpuMicros[kind] = [median(rows.map((r) => r.withCpuMicros)), median(rows.map((r) => r.withoutCpuMicros))];
  }
  return result;
}
