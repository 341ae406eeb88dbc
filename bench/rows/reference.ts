// `ref` rows: the same load against servers that do nothing (bench/ceiling.ts), for scale; rows 4
// and 5 are divided by bare Express's req/s of the same run (their goal is a ratio of it).
import { once } from 'node:events';
import { freePort } from '../../test/support/processes.ts';
import type { RowGroup } from '../bench.ts';
import { spawnNode } from '../processes.ts';

export const referenceRows: RowGroup = {
  ids: ['ref'],
  async run(bench) {
    const { common } = bench;
    const [nodePort, expressPort] = [await freePort(), await freePort()];
    const child = spawnNode(['bench/ceiling.ts', String(nodePort), String(expressPort)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await once(child.stdout!, 'data');
    bench.record(
      'ref. bare node:http, static JSON',
      await bench.load({
        kind: 'fixed',
        ...common,
        url: `http://127.0.0.1:${nodePort}/hello`,
        method: 'GET',
        headers: {},
      }),
    );
    const express = await bench.load({
      kind: 'fixed',
      ...common,
      url: `http://127.0.0.1:${expressPort}/hello`,
      method: 'GET',
      headers: {},
    });
    bench.record('ref. bare Express 5, static JSON', express);
    // Rows 4 and 5 as a share of what Express does answering a constant, in the same run.
    for (const row of bench.rows.rows) {
      if ((row.name.startsWith('4.') || row.name.startsWith('5.')) && typeof row.result === 'object')
        row.ratio = row.result.rps / express.rps;
    }
    child.kill('SIGTERM');
  },
};
