// `npm run mock [-- --port N]`: serves openapi.yaml with the Prism mock until interrupted.
import { parseArgs } from 'node:util';
import { startPrism } from './prism.ts';

const { values } = parseArgs({ options: { port: { type: 'string', default: '4010' } } });
const port = Number(values.port);
const prism = await startPrism(port);
console.log(`\nPrism mock of openapi.yaml: http://127.0.0.1:${port}  (Ctrl-C stops it)`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => prism.kill(signal));
