// The tool calls this process is serving, so that a client's `notifications/cancelled` reaches
// the call it names. The server is stateless (router.ts): the notification comes in a request of
// its own, served by a fresh MCP server that never saw the call, so the SDK's own per-server
// bookkeeping cannot find it; this process-wide table can.

/**
 * Calls by whose they are and the JSON-RPC id the client gave them. Ids are the client's own
 * counter (each connection starts again at 0), so the key also holds the caller's sign-in (its
 * token chain, router.ts callerKey): two clients of one user never cancel each other's calls, and
 * a client whose token was refreshed meanwhile still cancels its own.
 */
export class InFlightCalls {
  private readonly calls = new Map<string, Set<AbortController>>();

  /** Records a call; the returned function forgets it (when it ends, however it ends). */
  add(caller: string, requestId: string | number, controller: AbortController): () => void {
    const key = keyOf(caller, requestId);
    let set = this.calls.get(key);
    if (!set) this.calls.set(key, (set = new Set()));
    set.add(controller);
    return () => {
      set.delete(controller);
      if (!set.size && this.calls.get(key) === set) this.calls.delete(key);
    };
  }

  /** Aborts the caller's calls of that id here; whether there was one. */
  cancel(caller: string, requestId: string | number, reason: string): boolean {
    const set = this.calls.get(keyOf(caller, requestId));
    for (const controller of set ?? []) controller.abort(new Error(reason));
    return Boolean(set?.size);
  }
}

// A string id and a number id are different ids (JSON-RPC 2.0): the key keeps them apart.
const keyOf = (caller: string, requestId: string | number) => `${caller} ${typeof requestId} ${requestId}`;
