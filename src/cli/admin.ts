// The admin CLI's entry: `npm run -s admin -- COMMAND [options]` (parsing and running: main.ts).
// Every call is a fresh process that loads most of the service's modules, so Node's compile cache
// (os.tmpdir()/node-compile-cache, or NODE_COMPILE_CACHE) spares recompiling them each time. It is
// enabled before the CLI is imported, dynamically: a static import would be compiled before this
// line runs.
import { enableCompileCache } from 'node:module';

enableCompileCache();
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));
