import type { ServerResponse } from 'node:http';

/**
 * A streamed response's `drained` for the event feed's catch-up (EventFeed.subscribe): a
 * promise of the socket's next 'drain' (or its 'close') while it holds more than it can take,
 * nothing once it has taken what it was given or `ended` says the stream is over. The live
 * stream (`GET /v3/events`) and the gateway's SSE fallback (`GET /v3/me/events`) share it.
 */
export function drainedOf(res: ServerResponse, ended: () => boolean): () => Promise<void> | undefined {
  return () => (res.writableNeedDrain && !ended() ? new Promise<void>((resolve) => drainOrClose(res, resolve)) : undefined);
}

/** Calls `done` once, at the response's next 'drain' or its 'close'. */
function drainOrClose(res: ServerResponse, done: () => void): void {
  const finish = () => {
    res.off('drain', finish);
    res.off('close', finish);
    done();
  };
  res.on('drain', finish);
  res.on('close', finish);
}
