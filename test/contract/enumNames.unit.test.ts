// Every enum of openapi.yaml whose values are not all identifiers names them.
//
// Generators make a constant per enum value. From a value such as `==` or `run.status` each makes
// its own guess: oapi-codegen v2.8.2 dropped the switch operator `!=` altogether (its name came
// out empty and clashed), openapi-python-client 0.29.1 named them `VALUE_0`..`VALUE_5`. With
// `x-enum-varnames` (and `x-enum-descriptions`) openapi-generator 7.25.0 (go, python, java,
// typescript-fetch), openapi-python-client and oapi-codegen all use our names. The names are
// UPPER_SNAKE: what openapi-generator's java, python and go clients and openapi-python-client make
// of every other enum value (`not_empty` -> `NOT_EMPTY`), so one client's constants read alike;
// oapi-codegen writes them after the type's name (`SwitchNodeConfigCasesOperatorNOTEQUALS`).
//
// The rules, for `enum` and `x-extensible-enum` alike:
// - values that are not all identifiers need `x-enum-varnames`, one name per value, none twice;
// - a value that reads as words (`not_empty`, `run.status`) is named by those words (`NOT_EMPTY`,
//   `RUN_STATUS`), so a name cannot drift onto another value;
// - a symbol is named from one vocabulary (SYMBOL_NAMES), so `<` is LESS_THAN wherever it is;
// - `x-enum-descriptions`, when given, has one line per value.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const IDENTIFIER = /^[A-Za-z][A-Za-z0-9_]*$/;
const UPPER_SNAKE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;

/** The name of each symbol an enum of the contract uses; add one here before using a new symbol. */
const SYMBOL_NAMES: Record<string, string> = {
  '==': 'EQUALS',
  '!=': 'NOT_EQUALS',
  '<': 'LESS_THAN',
  '<=': 'LESS_THAN_OR_EQUALS',
  '>': 'GREATER_THAN',
  '>=': 'GREATER_THAN_OR_EQUALS',
  // RFC 8693's grant type, named as its RFC names the grant.
  'urn:ietf:params:oauth:grant-type:token-exchange': 'TOKEN_EXCHANGE',
};

interface EnumSite {
  pointer: string;
  values: unknown[];
  names: unknown;
  descriptions: unknown;
}

/** Every enum and x-extensible-enum of a document, with its JSON pointer. */
function enumSites(node: unknown, pointer = '#'): EnumSite[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => enumSites(item, `${pointer}/${i}`));
  if (typeof node !== 'object' || node === null) return [];
  const object = node as Record<string, unknown>;
  const here = (['enum', 'x-extensible-enum'] as const)
    .filter((key) => Array.isArray(object[key]))
    .map((key) => ({
      pointer: `${pointer}/${key}`,
      values: object[key] as unknown[],
      names: object['x-enum-varnames'],
      descriptions: object['x-enum-descriptions'],
    }));
  return [
    ...here,
    ...Object.entries(object).flatMap(([key, value]) =>
      enumSites(value, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`),
    ),
  ];
}

/** The name a value must have, when it can be read off the value ('' when it cannot). */
function expectedName(value: unknown): string {
  const text = String(value);
  if (SYMBOL_NAMES[text]) return SYMBOL_NAMES[text];
  // A URN's colons separate words too (`urn:ietf:params:oauth:grant-type:device_code`).
  const words = text.replace(/[.\-/ :]+/g, '_').toUpperCase();
  return UPPER_SNAKE.test(words) ? words : '';
}

/** What is wrong with one enum's names ([] when nothing). */
function enumNameProblems(site: EnumSite): string[] {
  const { pointer, values, names, descriptions } = site;
  const needsNames = values.some((v) => typeof v !== 'string' || !IDENTIFIER.test(v));
  if (names === undefined)
    return needsNames
      ? [
          `${pointer}: values ${JSON.stringify(values.filter((v) => typeof v !== 'string' || !IDENTIFIER.test(v)))} are not identifiers: add x-enum-varnames`,
        ]
      : [];
  if (!Array.isArray(names) || names.length !== values.length)
    return [`${pointer}: x-enum-varnames must have one name per value (${values.length})`];
  const problems: string[] = [];
  names.forEach((name, i) => {
    if (typeof name !== 'string' || !UPPER_SNAKE.test(name))
      problems.push(`${pointer}: name ${JSON.stringify(name)} is not UPPER_SNAKE`);
    const expected = expectedName(values[i]);
    if (!expected)
      problems.push(
        `${pointer}: no name can be read off ${JSON.stringify(values[i])}: add it to SYMBOL_NAMES (test/contract/enumNames.unit.test.ts)`,
      );
    else if (name !== expected)
      problems.push(`${pointer}: ${JSON.stringify(values[i])} is named ${JSON.stringify(name)}, not ${expected}`);
  });
  const repeated = names.filter((n, i) => names.indexOf(n) !== i);
  if (repeated.length) problems.push(`${pointer}: names repeat: ${repeated.join(', ')}`);
  if (
    descriptions !== undefined &&
    (!Array.isArray(descriptions) ||
      descriptions.length !== values.length ||
      descriptions.some((d) => typeof d !== 'string' || !d))
  ) {
    problems.push(`${pointer}: x-enum-descriptions must have one line per value (${values.length})`);
  }
  return problems;
}

describe('enum value names in openapi.yaml', () => {
  const spec: unknown = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8'));

  it('names the values of every enum that are not identifiers, each once, by what they mean', () => {
    const sites = enumSites(spec);
    expect(sites.length).toBeGreaterThan(20);
    expect(sites.flatMap(enumNameProblems)).toEqual([]);
    // The enums that made generators guess are named.
    const named = sites.filter((s) => s.names !== undefined).map((s) => s.pointer);
    expect(named).toEqual(
      expect.arrayContaining([
        '#/components/schemas/SwitchNode/properties/config/properties/cases/items/properties/operator/enum',
        '#/components/schemas/CallbackAttempt/properties/event_type/x-extensible-enum',
      ]),
    );
  });

  it('fails an enum of symbols without names, with names that repeat, drift or miss one', () => {
    const site = (values: unknown[], names?: unknown, descriptions?: unknown) => ({
      pointer: '#/x/enum',
      values,
      names,
      descriptions,
    });
    expect(enumNameProblems(site(['ok', 'not_ok']))).toEqual([]);
    expect(enumNameProblems(site(['==', 'in']))).toEqual([expect.stringContaining('["=="] are not identifiers')]);
    expect(enumNameProblems(site(['==', '!='], ['EQUALS']))).toEqual([
      expect.stringContaining('one name per value (2)'),
    ]);
    expect(enumNameProblems(site(['==', '!='], ['EQUALS', 'EQUALS']))).toEqual([
      expect.stringContaining('"!=" is named "EQUALS", not NOT_EQUALS'),
      expect.stringContaining('names repeat: EQUALS'),
    ]);
    expect(enumNameProblems(site(['empty', '!='], ['NOT_EQUALS', 'EMPTY']))).toHaveLength(2); // shifted by one
    expect(enumNameProblems(site(['run.status'], ['RunStatus']))).toEqual([
      expect.stringContaining('not UPPER_SNAKE'),
      expect.stringContaining('not RUN_STATUS'),
    ]);
    expect(enumNameProblems(site(['~'], ['TILDE']))).toEqual([expect.stringContaining('add it to SYMBOL_NAMES')]);
    expect(enumNameProblems(site(['<', 'in'], ['LESS_THAN', 'IN'], ['Less than.']))).toEqual([
      expect.stringContaining('x-enum-descriptions'),
    ]);
  });
});
