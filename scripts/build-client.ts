// `npm run build:client`: builds the installable client package in client/ (ESM JavaScript and
// .d.ts, depending only on openapi-fetch): tsc compiles client/src, and the generated types of
// openapi.yaml (generated/api.d.ts) ship beside it as dist/api.d.ts. `npm pack client` then makes
// the tarball an integrator installs: dist/, package.json, and client/README.md and client/LICENSE
// (package.json's `files`), which this script checks with a dry run of that pack.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}client/dist`;
rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', `${root}client/tsconfig.json`], {
  stdio: 'inherit',
});
copyFileSync(`${root}generated/api.d.ts`, `${dist}/api.d.ts`);
// In the repository the source reads the types from generated/; in the package they sit beside it.
const declarations = `${dist}/types.d.ts`;
const source = readFileSync(declarations, 'utf8');
const rewritten = source.replace("from '../../generated/api.d.ts'", "from './api.js'");
if (rewritten === source)
  throw new Error('client/dist/types.d.ts no longer imports ../../generated/api.d.ts: update scripts/build-client.ts');
writeFileSync(declarations, rewritten);
for (const file of readdirSync(dist)) {
  if (file !== 'api.d.ts' && /from '[^']*generated\//.test(readFileSync(`${dist}/${file}`, 'utf8')))
    throw new Error(`client/dist/${file} refers to generated/`);
}
// What `npm pack client` will put in the tarball (no tarball is written).
const SHIPPED = ['README.md', 'LICENSE', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/api.d.ts'];
for (const file of ['README.md', 'LICENSE'])
  if (!existsSync(`${root}client/${file}`)) throw new Error(`client/${file} is missing: the package ships it`);
const [pack] = JSON.parse(
  execFileSync('npm', ['pack', '--dry-run', '--json', `${root}client`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }),
) as { files: { path: string }[] }[];
const packed = new Set(pack?.files.map((f) => f.path));
const missing = SHIPPED.filter((file) => !packed.has(file));
if (missing.length)
  throw new Error(`npm pack client would leave out ${missing.join(', ')}: see client/package.json's files`);
console.log('client/dist built; the package ships README.md and LICENSE');
