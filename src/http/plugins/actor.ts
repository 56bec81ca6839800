import type { FastifyRequest } from 'fastify';
import type { ActorContext } from '../../services/actor.js';
import type { UsersService } from '../../services/users.service.js';

const actors = new WeakMap<FastifyRequest, Promise<ActorContext>>();

/**
 * The request's context with its actor (the onBehalfOf user, which must be active: else
 * ERR_UID_NOT_FOUND), for a route whose service acts as that user. Read once per request,
 * however many service calls of the handler ask for it. Only for service methods whose first
 * check is the actor's: a method that checks its input first resolves the actor itself, after
 * those checks (UsersService.withActor), so that a bad request keeps its error.
 */
export function actorContext(request: FastifyRequest, services: { users: Pick<UsersService, 'withActor'> }): Promise<ActorContext> {
  let actor = actors.get(request);
  if (actor === undefined) {
    actor = services.users.withActor(request.ctx);
    actors.set(request, actor);
  }
  return actor;
}
