// The queue's database as pg-boss sees it: an object of ours given through pg-boss's public `db`
// option (its IDatabase: `executeSql`, and `listen` for LISTEN/NOTIFY), over our own pg.Pool. It
// prepares pg-boss's statements: each distinct SQL text run with parameters gets a name (its
// hash), so each connection parses and plans it once and then only executes it (the `pg` driver
// prepares a named statement on its first use on each connection). pg-boss sends them unnamed,
// which PostgreSQL parses and plans on every call: for the send and the complete of each run, that
// was more than half of their time in PostgreSQL (docs/benchmarks-history.md, "Sixth pass").
// Statements without parameters (pg-boss's scripts, and its fetch, whose cached plan measured no
// faster) go unnamed, as pg-boss sends them.
import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Db } from 'pg-boss';

/** Distinct statements prepared per pool; beyond them (pg-boss builds few), the rest run unnamed. */
const PREPARED_MAX = 200;

/**
 * SQLSTATE of "cached plan must not change result type": a prepared statement returning `*` whose
 * table gained or lost columns under it, as another process's pg-boss migration does to the job
 * table in a rolling upgrade. PostgreSQL refuses the statement before running it.
 */
const PLAN_RESULT_CHANGED = '0A000';

/** How often the LISTEN connection checks that it still listens (a silent network failure otherwise goes unseen). */
const LISTEN_HEARTBEAT_MS = 10_000;
/** The longest wait between two tries to listen again. */
const LISTEN_BACKOFF_MAX_MS = 30_000;

export type QueueDbConfig = pg.PoolConfig & { connectionString: string };

export class QueueDb implements Db {
  private readonly pool: pg.Pool;
  private readonly config: pg.ClientConfig;
  /** Each text's name: its hash, and a generation bumped when its prepared plan went stale. */
  private readonly names = new Map<string, string>();
  private readonly generations = new Map<string, number>();

  /**
   * pg-boss names the connections of a pool it makes `pgboss:<8 hex>`, so that pg_stat_activity
   * joins to its instance row, but not those of a `db` it is handed: this one takes a name of that
   * form itself, unless given one. `onError`: an idle connection's error (the pool drops it).
   */
  constructor(config: QueueDbConfig, onError: (err: Error) => void = () => {}) {
    this.config = { ...config, application_name: config.application_name || `pgboss:${randomUUID().slice(0, 8)}` };
    this.pool = new pg.Pool(this.config);
    this.pool.on('error', onError);
  }

  async executeSql(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    const name = values?.length ? this.nameOf(text) : undefined;
    if (!name) return this.pool.query(text, values);
    try {
      return await this.pool.query({ name, text, values });
    } catch (err) {
      if ((err as { code?: unknown }).code !== PLAN_RESULT_CHANGED) throw err;
      // The statement did not run. Every connection holds the stale plan under this name (the
      // pool drops only the one that failed): under a new name, the connection that takes the call
      // prepares it again, and so does each other one on its next call.
      return await this.pool.query({ name: this.renamed(text, name), text, values });
    }
  }

  /**
   * LISTEN on `channel` over a connection of its own (never one of the pool's), telling
   * `onNotification` each payload; when the connection fails or stops listening (a heartbeat
   * checks every LISTEN_HEARTBEAT_MS), it listens again with backoff. `onReconnect` is called after
   * each subscribe, the first too (notices may have been missed), and with `whileAwayMs`, also
   * that often while the connection is away (notices are being missed: the caller re-reads what
   * it waits for instead). The first connection's failure is thrown.
   */
  async listen(
    channel: string,
    onNotification: (payload: string) => void,
    onReconnect: () => void,
    { whileAwayMs }: { whileAwayMs?: number } = {},
  ): Promise<{ close(): Promise<void> }> {
    const listener = new Listener(this.config, channel, onNotification, onReconnect, whileAwayMs);
    await listener.connect();
    return listener;
  }

  async close(): Promise<void> {
    if (!this.pool.ending) await this.pool.end();
  }

  /** A text's name; undefined past PREPARED_MAX texts (pg-boss builds a few dozen). */
  private nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < PREPARED_MAX) {
      name = `pgboss_${createHash('sha1').update(text).digest('hex')}`;
      this.names.set(text, name);
    }
    return name;
  }

  /** A new name for a text whose plan under `stale` went stale (once, for concurrent failures). */
  private renamed(text: string, stale: string): string {
    if (this.names.get(text) === stale) {
      const generation = (this.generations.get(text) ?? 0) + 1;
      this.generations.set(text, generation);
      this.names.set(text, `pgboss_${createHash('sha1').update(text).digest('hex')}_${generation}`);
    }
    return this.names.get(text)!;
  }
}

/** One LISTEN connection that keeps itself listening (QueueDb.listen). */
class Listener {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Ticks onReconnect while the connection is away (whileAwayMs). */
  private away: NodeJS.Timeout | undefined;
  private closed = false;
  private failures = 0;
  private readonly config: pg.ClientConfig;
  private readonly channel: string;
  private readonly onNotification: (payload: string) => void;
  private readonly onReconnect: () => void;
  private readonly whileAwayMs: number | undefined;

  constructor(
    config: pg.ClientConfig,
    channel: string,
    onNotification: (payload: string) => void,
    onReconnect: () => void,
    whileAwayMs?: number,
  ) {
    this.config = config;
    this.channel = channel;
    this.onNotification = onNotification;
    this.onReconnect = onReconnect;
    this.whileAwayMs = whileAwayMs;
  }

  /** Connects and listens; throws if it cannot. */
  async connect(): Promise<void> {
    const client = new pg.Client({ ...this.config, keepAlive: true });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.payload !== undefined) this.onNotification(message.payload);
    });
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`);
    } catch (err) {
      client.removeAllListeners();
      await client.end().catch(() => {});
      if (this.client === client) this.client = undefined;
      throw err;
    }
    this.failures = 0;
    clearInterval(this.away);
    this.away = undefined;
    this.schedule(() => this.heartbeat(client), LISTEN_HEARTBEAT_MS);
    this.onReconnect(); // after every (re)subscribe, the first too, as pg-boss's own pool does
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.away);
    const client = this.client;
    this.client = undefined;
    client?.removeAllListeners();
    await client?.end().catch(() => {});
  }

  private schedule(fn: () => Promise<void>, ms: number): void {
    clearTimeout(this.timer);
    if (this.closed) return;
    this.timer = setTimeout(() => void fn(), ms);
    this.timer.unref();
  }

  /** Checks that the connection still listens (it answers, and PostgreSQL still has the channel). */
  private async heartbeat(client: pg.Client): Promise<void> {
    try {
      const { rows } = await client.query({
        text: 'SELECT $1::text = ANY (ARRAY(SELECT pg_listening_channels())) AS listening',
        values: [this.channel],
        query_timeout: LISTEN_HEARTBEAT_MS / 2,
      } as pg.QueryConfig);
      if (!(rows[0] as { listening: boolean }).listening) throw new Error('LISTEN registration lost');
      this.schedule(() => this.heartbeat(client), LISTEN_HEARTBEAT_MS);
    } catch {
      this.lost(client);
    }
  }

  /** The connection failed: drop it, and listen again with backoff (telling the caller once it does). */
  private lost(client: pg.Client): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners();
    client.on('error', () => {}); // a late error of a dropped connection
    void client.end().catch(() => {});
    // Notices sent while away are lost: until it listens again (a backoff of up to
    // LISTEN_BACKOFF_MAX_MS after a long outage), the caller is told to re-read every whileAwayMs.
    if (this.whileAwayMs !== undefined && !this.away) {
      this.away = setInterval(() => this.onReconnect(), this.whileAwayMs);
      this.away.unref();
    }
    const retry = async () => {
      try {
        await this.connect();
      } catch {
        this.failures++;
        this.schedule(retry, Math.min(LISTEN_BACKOFF_MAX_MS, 1000 * 2 ** Math.min(this.failures, 5)));
      }
    };
    this.schedule(retry, 1000 * 2 ** Math.min(this.failures, 5));
  }
}
