// `npm run -s lint:sizes` (part of `npm run lint`): the size rule, "no function over 80
// lines, no file over 400", over src/ (tests and src/db/migrations aside: a migration is a
// frozen record, not code anyone reads to change). A function is any function-like node
// (declaration, method, arrow, expression, accessor, constructor), counted from its first line to
// its last, nested ones included in their parent's count. Exits 1 with one line per breach.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const MAX_FUNCTION_LINES = 80;
const MAX_FILE_LINES = 400;
const root = fileURLToPath(new URL('..', import.meta.url));
const src = path.join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return full === path.join(src, 'db', 'migrations') ? [] : sourceFiles(full);
    return /\.[cm]?[jt]sx?$/.test(entry.name) &&
      !/\.test\.[cm]?[jt]sx?$/.test(entry.name) &&
      !entry.name.endsWith('.d.ts')
      ? [full]
      : [];
  });
}

function functionName(node: ts.FunctionLikeDeclaration): string {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText().slice(0, 40)})`;
  return '(anonymous)';
}

/** Every breach in one file, as `path:line: message`. */
export function breaches(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const rel = path.relative(root, file);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const found: string[] = [];
  const fileLines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (fileLines > MAX_FILE_LINES) found.push(`${rel}: ${fileLines} lines (at most ${MAX_FILE_LINES})`);
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = lineOf(node.getStart(source));
      const lines = lineOf(node.getEnd()) - first + 1;
      if (lines > MAX_FUNCTION_LINES)
        found.push(
          `${rel}:${first}: ${functionName(node as ts.FunctionLikeDeclaration)} is ${lines} lines (at most ${MAX_FUNCTION_LINES})`,
        );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

if (import.meta.main) {
  const all = sourceFiles(src).flatMap((file) => breaches(file, readFileSync(file, 'utf8')));
  for (const line of all) console.error(line);
  if (all.length) process.exit(1);
}
