import type { components } from '../../generated/api.d.ts';

type PageMeta = components['schemas']['PageMeta'];

/** The page a list's query asks for (the validator has coerced it; the contract's defaults otherwise). */
export const pageOf = (query: { page?: number; per_page?: number }): { page: number; perPage: number } => ({
  page: Number(query.page ?? 1),
  perPage: Number(query.per_page ?? 20),
});

/** A list's `search`, or undefined when absent or empty. */
export const searchOf = (query: { search?: string }): string | undefined =>
  query.search === undefined || query.search === '' ? undefined : String(query.search);

/**
 * RFC 8288 `Link` header for a page: first, prev, next, last, as absolute paths that keep the
 * other query parameters (e.g. `search`). Pages past the end get first/last and a prev back to the end.
 */
export function paginationLinks(path: string, meta: PageMeta, query: Record<string, string | undefined> = {}): string {
  const lastPage = Math.max(meta.total_pages, 1);
  const href = (page: number) => {
    const params = new URLSearchParams();
    params.set('page', String(page));
    params.set('per_page', String(meta.per_page));
    for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
    return `<${path}?${params.toString()}>`;
  };
  const links = [`${href(1)}; rel="first"`];
  if (meta.page > 1) links.push(`${href(Math.min(meta.page - 1, lastPage))}; rel="prev"`);
  if (meta.page < lastPage) links.push(`${href(meta.page + 1)}; rel="next"`);
  links.push(`${href(lastPage)}; rel="last"`);
  return links.join(', ');
}
