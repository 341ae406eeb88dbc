import { describe, expect, it } from 'vitest';
import { paginationLinks } from './pagination.ts';

describe('paginationLinks (RFC 8288)', () => {
  it('links first, prev, next and last from a middle page, keeping the search', () => {
    expect(
      paginationLinks('/api/workflows', { page: 2, per_page: 10, total: 45, total_pages: 5 }, { search: '50% off' }),
    ).toBe(
      '</api/workflows?page=1&per_page=10&search=50%25+off>; rel="first", ' +
        '</api/workflows?page=1&per_page=10&search=50%25+off>; rel="prev", ' +
        '</api/workflows?page=3&per_page=10&search=50%25+off>; rel="next", ' +
        '</api/workflows?page=5&per_page=10&search=50%25+off>; rel="last"',
    );
  });

  it('has no prev on the first page and no next on the last', () => {
    expect(paginationLinks('/x', { page: 1, per_page: 20, total: 3, total_pages: 1 })).toBe(
      '</x?page=1&per_page=20>; rel="first", </x?page=1&per_page=20>; rel="last"',
    );
  });

  it('points prev of a page past the end back to the last page', () => {
    expect(paginationLinks('/x', { page: 9, per_page: 20, total: 30, total_pages: 2 })).toContain(
      '</x?page=2&per_page=20>; rel="prev"',
    );
  });
});
