import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { build } from 'esbuild';

// The console's scripts, built from their TypeScript (src/console/browser/) by esbuild when the
// service starts, in memory: nothing built is written or committed, and `npm install && npm start`
// stays the whole setup. One classic script per page entry (the pages load them with `defer`),
// minified in production, with an inline source map elsewhere (a comment, which the CSP does not
// govern).

const browser = fileURLToPath(new URL('../browser/', import.meta.url));

/** The served name of each script and its entry module. */
const ENTRIES = { console: 'console.ts', editor: 'editor.ts' } as const;

export type ConsoleScripts = ReadonlyMap<string, string>;

async function bundle(production: boolean): Promise<ConsoleScripts> {
  const result = await build({
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, path.join(browser, file)])),
    outdir: path.join(browser, 'out'), // names the files in memory; write: false writes nothing
    write: false,
    bundle: true,
    format: 'iife',
    target: 'es2022',
    platform: 'browser',
    tsconfig: path.join(browser, 'tsconfig.json'),
    minify: production,
    sourcemap: production ? false : 'inline',
    logLevel: 'silent',
  });
  return new Map(result.outputFiles.map((file) => [path.basename(file.path), file.text]));
}

const built = new Map<boolean, Promise<ConsoleScripts>>();

/** The scripts by served name (`console.js`, `editor.js`), built once per process. */
export function consoleScripts(production: boolean): Promise<ConsoleScripts> {
  let scripts = built.get(production);
  if (!scripts) built.set(production, (scripts = bundle(production)));
  return scripts;
}
