// The example third-party app's entry point:
//   SERVICE_URL=http://localhost:3000 CLIENT_ID=... CLIENT_SECRET=... sh scripts/node.sh examples/third-party-app/server.ts
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createExampleApp } from './app.ts';
import { loadExampleConfig } from './config.ts';

let config;
try {
  config = loadExampleConfig();
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
const server = createExampleApp(config).listen(config.port, config.host);
await once(server, 'listening');
const { port } = server.address() as AddressInfo;
console.log(
  `Example third-party app on http://localhost:${port} (service ${config.serviceUrl}, client_id ${config.clientId}, redirect_uri ${config.redirectUri})`,
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
