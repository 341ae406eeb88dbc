import { describe, expect, it } from 'vitest';
import { checkPassword, MAX_PASSWORD_CHARACTERS, MIN_PASSWORD_CHARACTERS, passwordProblem } from './passwordPolicy.ts';

// OWASP ASVS 4.0.3 V2.1: length (12 to 128, runs of spaces as one), any printable Unicode, no
// composition rules, no breached or common password, not the login.
describe('password policy (OWASP ASVS 4.0.3 V2.1)', () => {
  it('takes 12 to 128 characters, counted as characters (code points), with no composition rule', () => {
    expect([MIN_PASSWORD_CHARACTERS, MAX_PASSWORD_CHARACTERS]).toEqual([12, 128]);
    for (const ok of [
      'lowercaseonly',
      'correct horse battery',
      'Ünïcödé Wörds ✓',
      '😀😀😀😀😀😀😀😀😀😀😀😀',
      'x'.repeat(128),
      '   leading and trailing   ',
      'tab\tinside   words',
    ]) {
      expect(passwordProblem(ok, 'someone'), ok).toBeNull();
    }
    expect(passwordProblem('eleven char', 'someone')).toMatch(/^must be at least 12 characters/);
    expect(passwordProblem('😀'.repeat(11), 'someone')).toMatch(/at least 12/); // 22 UTF-16 units, 11 characters
    expect(passwordProblem('x'.repeat(129), 'someone')).toBe('must be at most 128 characters');
  });

  it('counts a run of spaces as one space (twelve spaces are not a passphrase)', () => {
    expect(passwordProblem(' '.repeat(40), 'someone')).toMatch(/at least 12/);
    expect(passwordProblem('a     b     c     d', 'someone')).toMatch(/at least 12/);
  });

  it('refuses the common passwords of breaches (a list shipped in a package), in any case', () => {
    for (const common of [
      'password',
      '12345678',
      'qwerty123456',
      '123456789012',
      'Password1234',
      'PASSWORD1234',
      'q1w2e3r4t5y6',
      '1qaz2wsx3edc',
    ]) {
      expect(passwordProblem(common, 'someone') ?? '', common).toMatch(/most common passwords|at least 12/);
    }
    expect(passwordProblem('1q2w3e4r5t6y', 'someone')).toBe(
      'is one of the most common passwords, found in data breaches: choose another',
    );
  });

  it('refuses the login, or a password that contains it, in any case', () => {
    expect(passwordProblem('ada-lovelace', 'ada-lovelace')).toBe('must not contain your login');
    expect(passwordProblem('my name is ADA-Lovelace!', 'ada-lovelace')).toBe('must not contain your login');
    expect(passwordProblem('lovelace-ada-engine', 'ada-lovelace')).toBeNull();
    // A login of one or two characters is part of too many good passwords to be refused in them.
    expect(passwordProblem('a quiet evening', 'qu')).toBeNull();
  });

  it('throws 400 invalid_field at /password with a sentence for people', () => {
    expect(() => checkPassword('short', 'x')).toThrow(
      expect.objectContaining({
        status: 400,
        code: 'invalid_field',
        message: 'The password must be at least 12 characters (a few words make a good one).',
      }) as Error,
    );
  });
});
