// What the notifications bench (bench/notifications.ts) reports: its results' shape, and the
// summary it prints.

/** What the fake got of an "on" slice's sends. */
export interface SliceDeliveries {
  deliveries: number;
  /** Sends of the slice with no delivery within the wait; deliveries beyond one per send. */
  missing: number;
  duplicates: number;
  /** Each delivery's arrival at the fake minus its send's answer, ms. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The last delivery's arrival after the slice's last answer, ms. */
  tailMs: number;
  /** Deliveries over the time from the first to the last. */
  perSecond: number;
  /** Every send delivered, the last within KEPT_UP_MS of the slice's last answer: the server delivers as fast as it sends. */
  keptUp: boolean;
}

export interface ArmSlice {
  /** Sends answered a second (the offered rate, when the server keeps up), their latency, failures. */
  sendsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  /** CPU per send, µs: the server's, PostgreSQL's, and (on) the fake FCM's; "on" counted to its last delivery. */
  cpuMicrosPerSend: Record<string, number>;
  delivery?: SliceDeliveries;
}

export interface GroupMessageResult {
  members: number;
  deliveries: number;
  /** The send's own time to its answer, then its answer to the first and the last delivery, ms. */
  sendMs: number;
  firstDeliveryMs: number;
  lastDeliveryMs: number;
  /** Deliveries over the time from the answer to the last one. */
  perSecond: number;
  /** CPU per delivery from the send to its last delivery, µs: server, PostgreSQL, the fake FCM. */
  cpuMicrosPerDelivery: Record<string, number>;
}

export interface NotificationsResult {
  engine: string;
  rate: number;
  sliceSeconds: number;
  groupSize: number;
  /** Seconds the API seeding took (both servers at once). */
  seedingSeconds: number;
  slices: Array<{ on: ArmSlice; off: ArmSlice }>;
  /** Medians over the slices, on / off. */
  p50Ms: [number, number];
  p99Ms: [number, number];
  /** Median of the slices' p99 ratios, on / off (target ≤ 1.20), and of their p50 ratios. */
  p99Ratio: number;
  p50Ratio: number;
  /** Medians of CPU per send, µs, on / off, per meter (server, postgres). */
  cpuMicrosPerSend: Record<string, [number, number]>;
  /** What one 1:1 notification costs, µs: the difference of those medians, and the fake FCM's CPU per delivery (fakeFcm). */
  cpuMicrosPerNotification: Record<string, number>;
  /** Medians over the "on" slices: delivery latency (answer to the fake) and deliveries a second. */
  deliveryP50Ms: number;
  deliveryP99Ms: number;
  deliveriesPerSecond: number;
  /** "On" slices that kept up (SliceDeliveries.keptUp). Fewer than all: the rate is not below what the server delivers here. */
  keptUpSlices: number;
  group: GroupMessageResult[];
  /** Medians over the group's messages. */
  groupLastDeliveryMs: number;
  groupDeliveriesPerSecond: number;
  groupCpuMicrosPerDelivery: Record<string, number>;
  /** Failed sends, deliveries missing or twice, arrivals at the fake during "off" slices, FCM protocol problems. */
  check: { failedSends: number; missing: number; duplicates: number; deliveredWhileOff: number; problems: string[] };
}

export function describeNotifications(r: NotificationsResult): string {
  const cpu = (values: Record<string, number>) =>
    Object.entries(values)
      .map(([name, value]) => `${name} ${value} µs`)
      .join(', ');
  const pairs = Object.entries(r.cpuMicrosPerSend)
    .map(([name, [w, wo]]) => `${name} ${w} / ${wo} µs`)
    .join(', ');
  const c = r.check;
  const clean = c.failedSends === 0 && c.missing === 0 && c.duplicates === 0 && c.deliveredWhileOff === 0 && c.problems.length === 0;
  return (
    `notifications (${r.engine}, 1:1 sends at ${r.rate}/s, ${r.slices.length} slices of ${r.sliceSeconds} s per server, taken in turns), notifications on / off: ` +
    `send p50 ${r.p50Ms[0]} / ${r.p50Ms[1]} ms, p99 ${r.p99Ms[0]} / ${r.p99Ms[1]} ms; median of the slices' p99 ratios ${r.p99Ratio} (target ≤ 1.20), p50 ratios ${r.p50Ratio}; ` +
    `CPU per send ${pairs}; one 1:1 notification costs ${cpu(r.cpuMicrosPerNotification)}; ` +
    `deliveries ${r.deliveriesPerSecond}/s, answer to FCM p50 ${r.deliveryP50Ms} ms, p99 ${r.deliveryP99Ms} ms; ` +
    `the "on" server kept up in ${r.keptUpSlices} of ${r.slices.length} slices` +
    (r.keptUpSlices < r.slices.length ? ` (it fell behind the offered rate: ${r.rate}/s is not well below what it delivers here; try a lower --rate)` : '') +
    '.\n' +
    `notifications (${r.engine}), a message to a ${r.groupSize}-member group, median of ${r.group.length}: last delivery ${r.groupLastDeliveryMs} ms after the send's answer ` +
    `(${r.groupDeliveriesPerSecond} deliveries/s); CPU per delivery: ${cpu(r.groupCpuMicrosPerDelivery)}.\n` +
    `notifications (${r.engine}) checks: ${c.failedSends} failed sends, ${c.missing} deliveries missing, ${c.duplicates} twice, ${c.deliveredWhileOff} during "off" slices, ` +
    `${c.problems.length} FCM protocol problems${c.problems.length ? ` (${c.problems.slice(0, 3).join('; ')})` : ''}${clean ? ' (all clean)' : ' (NOT clean: the figures may not measure what they say)'}`
  );
}
