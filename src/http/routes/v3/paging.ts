import type { PageRequest } from '../../../domain/pagination.js';

/**
 * The page a list request asks for. Its query schema (PageQuery) gives `page` and `perPage`
 * defaults that the validator fills in, so both are always there; a route whose schema lacks
 * them is a programming error, not a request to answer.
 */
export function pageOf(query: { page?: number; perPage?: number }): PageRequest {
  if (query.page === undefined || query.perPage === undefined) throw new Error('page and perPage come from the PageQuery schema defaults');
  return { page: query.page, perPage: query.perPage };
}
