/** Offset pages, where the vendor API uses page/perPage. */
export interface PageRequest {
  page: number;
  perPage: number;
}

export interface PageMeta {
  pagination: {
    total: number;
    count: number;
    per_page: number;
    current_page: number;
    total_pages: number;
  };
}

export function pageOffset({ page, perPage }: PageRequest): number {
  return (page - 1) * perPage;
}

/** `meta.pagination` exactly as the vendor returns it. */
export function pageMeta(request: PageRequest, total: number, count: number): PageMeta {
  return {
    pagination: {
      total,
      count,
      per_page: request.perPage,
      current_page: request.page,
      total_pages: Math.ceil(total / request.perPage),
    },
  };
}
