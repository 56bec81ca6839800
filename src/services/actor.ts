import type { RequestContext } from '../domain/context.js';
import type { UserRow } from '../repositories/users.repository.js';
import { againIfDeletedMeanwhile } from './deleted-meanwhile.js';

/**
 * A request context with its actor: the active user that `onBehalfOf` names, read once
 * (UsersService.withActor), or undefined when the request names none (the app acts). A service
 * method that acts as that user takes one, so it cannot run with an actor nobody checked.
 * Its actor is always the user its `onBehalfOf` names (isActorContext).
 */
export interface ActorContext extends RequestContext {
  readonly actor: UserRow | undefined;
}

/**
 * Whether `ctx` already carries the actor of its `onBehalfOf`. A context derived from one with
 * another `onBehalfOf` (a bot message's sender) does not: its actor is someone else.
 */
export function isActorContext(ctx: RequestContext): ctx is ActorContext {
  return 'actor' in ctx && (ctx as ActorContext).actor?.uid === ctx.onBehalfOf;
}

/**
 * againIfDeletedMeanwhile for work done as the actor: a run again first reads the actor again
 * (`readActor`), since the row deleted meanwhile may be theirs; then they answer not found.
 */
export function againAsActor<T>(ctx: ActorContext, readActor: (ctx: RequestContext) => Promise<ActorContext>, work: (ctx: ActorContext) => Promise<T>): Promise<T> {
  let first = true;
  return againIfDeletedMeanwhile(async () => {
    const current = first ? ctx : await readActor(ctx);
    first = false;
    return work(current);
  });
}
