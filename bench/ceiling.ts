// For scale: what a do-nothing server answers on this machine, under the same load generator. One
// static JSON body of user-info size, from bare node:http and from a bare Express 5 app, each in
// its own process like the service. No database, no validation, no logging.
//
//   sh scripts/node.sh bench/ceiling.ts PORT_NODE PORT_EXPRESS   (prints "ready" when listening)
import http from 'node:http';
import express from 'express';

const body = { id: 1, login: 'bench', name: 'Bench User', avatar_url: 'https://example.test/a.png' };
const text = JSON.stringify(body);

const bare = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
});
const app = express();
app.get('/hello', (_req, res) => void res.json(body));

await Promise.all([
  new Promise<void>((resolve) => bare.listen(Number(process.argv[2]), '127.0.0.1', resolve)),
  new Promise<void>((resolve) => app.listen(Number(process.argv[3]), '127.0.0.1', () => resolve())),
]);
console.log('ready');
