// What the engine rows (bench/rows/engineCost.ts) read beside the load: the service's resident
// memory (/proc/PID/status; its peak reset through /proc/PID/clear_refs), the rows a run left in
// the store, and the floor: what one step's store write costs when the bench issues it itself.
import { readFile, writeFile } from 'node:fs/promises';
import mysql from 'mysql2/promise';
import { STEP_COLUMNS } from '../src/runs/runStatements.ts';

/** A field of /proc/PID/status in MiB (VmRSS: resident now; VmHWM: the peak since start or the last reset). */
export async function memoryMiB(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/** Resets VmHWM to the current resident size (proc(5), clear_refs "5"), so the next read is this window's peak. */
export async function resetPeak(pid: number): Promise<boolean> {
  return writeFile(`/proc/${pid}/clear_refs`, '5').then(
    () => true,
    () => false,
  );
}

export interface StoredRows {
  runs: number;
  steps: number;
  events: number;
  /** The run's stored output, bytes. */
  outputBytes: number;
}

/** The bench's own connection to the service's store (MariaDB), for what a run left there and the floor. */
export class StoreReader {
  private readonly conn: mysql.Connection;

  private constructor(conn: mysql.Connection) {
    this.conn = conn;
  }

  static async open(databaseUrl: string): Promise<StoreReader> {
    return new StoreReader(await mysql.createConnection(databaseUrl));
  }

  async storedRows(runId: string): Promise<StoredRows> {
    const [rows] = (await this.conn.query(
      `SELECT (SELECT COUNT(*) FROM runs WHERE id = ?) AS runs,
              (SELECT COUNT(*) FROM run_steps WHERE run_id = ?) AS steps,
              (SELECT COUNT(*) FROM run_events WHERE run_id = ?) AS events,
              (SELECT COALESCE(LENGTH(output), 0) FROM runs WHERE id = ?) AS outputBytes`,
      [runId, runId, runId, runId],
    )) as unknown as [Array<Record<keyof StoredRows, number | string>>];
    const r = rows[0]!;
    return {
      runs: Number(r.runs),
      steps: Number(r.steps),
      events: Number(r.events),
      outputBytes: Number(r.outputBytes),
    };
  }

  /**
   * The floor of a step's store write: one of `runId`'s logged steps inserted again (under another
   * node id) by the bench itself, `times` times, as the same INSERT the service sends: alone, in its
   * own autocommit transaction (a step written on its own: a round trip and a commit), and as one of
   * `batch` rows of one statement (a fast run's steps go in one insert with its end), divided by
   * `batch`. Milliseconds, p50 of each; the copies are deleted after.
   */
  async stepFloor(runId: string, times = 200, batch = 10): Promise<{ aloneMs: number; inBatchMs: number }> {
    const cols = STEP_COLUMNS.map((c) => `\`${c}\``).join(', ');
    const [found] = (await this.conn.query(`SELECT ${cols} FROM run_steps WHERE run_id = ? LIMIT 1`, [
      runId,
    ])) as unknown as [Array<Record<string, unknown>>];
    const step = found[0];
    if (!step) return { aloneMs: NaN, inBatchMs: NaN };
    const values = (nodeId: string) => STEP_COLUMNS.map((c) => (c === 'node_id' ? nodeId : step[c]));
    const one = `(${STEP_COLUMNS.map(() => '?').join(', ')})`;
    const timed = async (n: number, statement: (i: number) => [string, unknown[]]) => {
      const ms: number[] = [];
      for (let i = 0; i < n; i += 1) {
        const [sql, params] = statement(i);
        const t0 = performance.now();
        await this.conn.query(sql, params);
        ms.push(performance.now() - t0);
      }
      return ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
    };
    try {
      const aloneMs = await timed(times, (i) => [
        `INSERT INTO run_steps (${cols}) VALUES ${one}`,
        values(`floor-a${i}`),
      ]);
      const batchMs = await timed(Math.ceil(times / batch), (i) => [
        `INSERT INTO run_steps (${cols}) VALUES ${Array.from({ length: batch }, () => one).join(', ')}`,
        Array.from({ length: batch }, (_, j) => values(`floor-b${i}-${j}`)).flat(),
      ]);
      return { aloneMs, inBatchMs: batchMs / batch };
    } finally {
      await this.conn.query(`DELETE FROM run_steps WHERE run_id = ? AND node_id LIKE 'floor-%'`, [runId]);
    }
  }

  /** The id of the workflow's latest run. */
  async lastRun(workflowId: string): Promise<string | undefined> {
    const [rows] = (await this.conn.query('SELECT id FROM runs WHERE workflow_id = ? ORDER BY seq DESC LIMIT 1', [
      workflowId,
    ])) as unknown as [Array<{ id: string }>];
    return rows[0]?.id;
  }

  async close(): Promise<void> {
    await this.conn.end().catch(() => {});
  }
}
