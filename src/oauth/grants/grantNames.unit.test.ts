// Adding a grant type touches its module (src/oauth/grants/<grant>.ts), its line in registry.ts
// and openapi.yaml: the token endpoint, the token model, the metadata documents and the metrics
// read the registry. So no source file outside src/oauth/grants/ may compare a value with a
// registered grant name. Lists of names as data (log redaction keys, form fields) are no
// comparison and are not caught.
import { describe, expect, it } from 'vitest';
import { describeComparison, nameComparisons, sourceFiles } from '../../../test/support/nameComparisons.ts';
import { GRANT_TYPES } from './registry.ts';

/**
 * Comparisons with a grant's name that are about something else of the same name: RFC 7009's
 * token_type_hint (revocationHint.ts) says `refresh_token` of the token to revoke, a kind of token, not a grant.
 */
const SAME_NAME_OTHER_THING = [{ file: 'src/oauth/revocationHint.ts', operand: 'hint' }];

describe('grant names', () => {
  it('no source file outside src/oauth/grants/ compares a value with a registered grant name', () => {
    const outside = nameComparisons(sourceFiles(), GRANT_TYPES).filter(
      (c) =>
        !c.file.startsWith('src/oauth/grants/') &&
        !SAME_NAME_OTHER_THING.some((o) => o.file === c.file && o.operand === c.operand),
    );
    expect(outside.map(describeComparison), 'ask the grant (oauth/grants/grant.ts Grant)').toEqual([]);
  });
});
