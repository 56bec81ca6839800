// The auth tokens of the gateway bench (bench/gateway.ts): one per seeded user, the same on both
// sides from a secret the bench draws each run, so the server seeds them in bulk
// (bench/parley-server.ts, BENCH_TOKENS) and the load generator's clients derive theirs
// (bench/lib/gateway-clients.ts) without 20,000 REST calls or a list passed between processes.
import crypto from 'node:crypto';

/** A token in the vendor's shape (`<uid>_<unix seconds><40 hex>`), from the secret and the uid. */
export function benchToken(secret: string, uid: string): string {
  return `${uid}_1764000000${crypto.createHmac('sha256', secret).update(uid).digest('hex').slice(0, 40)}`;
}
