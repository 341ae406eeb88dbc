import { dictionary } from '@zxcvbn-ts/language-common';
import { invalidField } from '../shared/errors.ts';

// The password policy of OWASP ASVS 4.0.3 V2.1 for every password a user sets (sign-up, the
// password page, the admin CLI's user create and set-password):
// - 2.1.1: at least 12 characters, runs of spaces counted as one (a passphrase is welcome; twelve
//   spaces are not one). Characters are Unicode code points, so an emoji counts as one.
// - 2.1.2 / 2.1.3: up to 128 characters are taken whole, never truncated; longer is refused.
// - 2.1.4 / 2.1.9: any printable Unicode, spaces included, and no composition rules.
// - 2.1.7: not one of the common passwords of breaches: the 49,000-odd of @zxcvbn-ts/language-common
//   (the list zxcvbn-ts ships, from breach corpora), compared without case, in the process (no
//   network call). Nor the login itself, or a password that contains it (V2.1 "context-specific
//   words"; a login of fewer than 3 characters is too short to be told apart from chance).

export const MIN_PASSWORD_CHARACTERS = 12;
export const MAX_PASSWORD_CHARACTERS = 128;

let common: ReadonlySet<string> | undefined;
/** The breached-passwords list, read once (it is decompressed when the package is first loaded). */
function commonPasswords(): ReadonlySet<string> {
  common ??= new Set(dictionary['passwords-common'].map((p) => p.toLowerCase()));
  return common;
}

/** Why this password may not be set (a sentence that follows "The password ..."), or null. */
export function passwordProblem(password: string, login: string | undefined): string | null {
  const length = [...password.replace(/ {2,}/g, ' ')].length;
  if (length < MIN_PASSWORD_CHARACTERS)
    return `must be at least ${MIN_PASSWORD_CHARACTERS} characters (a few words make a good one)`;
  if ([...password].length > MAX_PASSWORD_CHARACTERS) return `must be at most ${MAX_PASSWORD_CHARACTERS} characters`;
  const lower = password.toLowerCase();
  if (commonPasswords().has(lower) || commonPasswords().has(lower.trim()))
    return 'is one of the most common passwords, found in data breaches: choose another';
  const name = login?.trim().toLowerCase();
  if (name && name.length >= 3 && lower.includes(name)) return 'must not contain your login';
  return null;
}

/** Throws the 400 invalid_field at /password when the policy refuses the password. */
export function checkPassword(password: string, login: string | undefined): void {
  const problem = passwordProblem(password, login);
  if (problem) throw invalidField(`The password ${problem}.`, '/password', problem);
}
