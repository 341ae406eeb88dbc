import { describe, expect, it } from 'vitest';
import { newUserCode, normalizeUserCode, USER_CODE_ALPHABET } from './device.ts';

// RFC 8628 6.1's user codes: 8 characters of a base-20 alphabet without vowels, shown XXXX-XXXX,
// typed in any case with or without the dash.

describe('device user codes', () => {
  it('are 8 letters of BCDFGHJKLMNPQRSTVWXZ shown as XXXX-XXXX, every letter in use', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 500; i += 1) {
      const code = newUserCode();
      expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      for (const c of code.replace('-', '')) seen.add(c);
    }
    expect([...seen].sort().join('')).toBe(USER_CODE_ALPHABET);
  });

  it('are read whatever the case, dashes and spaces; anything else is no code', () => {
    expect(normalizeUserCode('WDJB-MJHT')).toBe('WDJBMJHT');
    expect(normalizeUserCode(' wdjb mjht ')).toBe('WDJBMJHT');
    expect(normalizeUserCode('wd-jb-mj-ht')).toBe('WDJBMJHT');
    for (const wrong of ['', 'WDJB-MJH', 'WDJB-MJHTX', 'AEIO-UBCD', 'WDJB_MJHT', 'WDJB-MJH1', 'ẞDJB-MJHT'])
      expect(normalizeUserCode(wrong), wrong).toBeNull();
  });
});
