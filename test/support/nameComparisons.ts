// Finds where source code compares a value with a registered name written out as a string
// (`node.type === 'switch'`, `'refresh_token' !== grantType`, `case 'map':`): the tests that walk
// the node and grant registries use it to prove that only a type's or grant's own module branches
// on its name, and every other reader asks the registry.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url);

export interface NameComparison {
  /** From the repository's root: `src/runs/service.ts`. */
  file: string;
  line: number;
  name: string;
  /** What the name is compared with (`node.type`), or `case` for a switch's case. */
  operand: string;
}

/** Every source file of src/ that is not a test, from the repository's root. */
export function sourceFiles(dir = 'src'): string[] {
  return readdirSync(new URL(`${dir}/`, ROOT), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The text with its comments blanked (newlines kept, so positions keep their line), strings left alone. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|(?<![:'"`\w])\/\/.*$/gm, (comment) => comment.replace(/[^\n]/g, ' '));
}

const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The comparisons with any of `names` in `files`, in file and line order. */
export const nameComparisons = (files: readonly string[], names: readonly string[]): NameComparison[] =>
  files.flatMap((file) => comparisonsIn(file, readFileSync(new URL(file, ROOT), 'utf8'), names));

/** The comparisons with any of `names` in `source` (the text of `file`), in line order. */
export function comparisonsIn(file: string, source: string, names: readonly string[]): NameComparison[] {
  const alternatives = names.map(escape).join('|');
  const equality = '(?:===|!==|==|!=)';
  const text = withoutComments(source);
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  const found: NameComparison[] = [];
  // operand === 'name': the operand, the quote, the name.
  for (const m of text.matchAll(new RegExp(`([\\w$.\\])]+)\\s*${equality}\\s*(['"\`])(${alternatives})\\2`, 'g')))
    found.push({ file, line: lineAt(m.index), name: m[3]!, operand: m[1]! });
  // 'name' === operand: the quote, the name, the operand.
  for (const m of text.matchAll(new RegExp(`(['"\`])(${alternatives})\\1\\s*${equality}\\s*([\\w$.]+)`, 'g')))
    found.push({ file, line: lineAt(m.index), name: m[2]!, operand: m[3]! });
  // case 'name': the quote, the name.
  for (const m of text.matchAll(new RegExp(`\\bcase\\s+(['"\`])(${alternatives})\\1\\s*:`, 'g')))
    found.push({ file, line: lineAt(m.index), name: m[2]!, operand: 'case' });
  return found.sort((a, b) => a.line - b.line);
}

/** How a test names a comparison it refuses: `src/runs/service.ts:183: n.type === 'text_input'`. */
export const describeComparison = (c: NameComparison): string =>
  `${c.file}:${c.line}: ${c.operand === 'case' ? `case '${c.name}':` : `${c.operand} compared with '${c.name}'`}`;
