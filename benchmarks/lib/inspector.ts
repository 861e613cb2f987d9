/**
 * A minimal Chrome DevTools Protocol client for a Node process started with `--inspect=127.0.0.1:0`
 * (benchmarks/memory.ts): what the memory harness needs from the process it measures, from outside,
 * without adding an endpoint to the service.
 *
 * - `memoryUsage()`: a full garbage collection (HeapProfiler.collectGarbage), then the process's own
 *   `process.memoryUsage()` (bytes: rss, heapTotal, heapUsed, external, arrayBuffers);
 * - `scripts()`: every script V8 has compiled in the process (Debugger.scriptParsed is replayed for the
 *   scripts already loaded when the debugger is enabled), with its source length in characters: the
 *   module graph the process actually loaded;
 * - `heapSnapshot(file)`: HeapProfiler.takeHeapSnapshot streamed to `file` (the .heapsnapshot format
 *   Chrome DevTools opens); summarise it with `summariseSnapshot`.
 *
 * Protocol reference: https://chromedevtools.github.io/devtools-protocol/v8/ (HeapProfiler, Debugger, Runtime).
 */
import { createWriteStream, readFileSync } from 'node:fs';
import WebSocket from 'ws';

/** The debugger URL Node prints on stderr (`Debugger listening on ws://…`), once it appears in `output()`. */
export function debuggerUrl(output: string): string | null {
  return /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1] ?? null;
}

export interface LoadedScript {
  url: string;
  /** source length in characters (what V8 parsed: for tsx-loaded TypeScript, the transpiled JavaScript) */
  length: number;
}

/** `process.memoryUsage()` of the inspected process, in bytes. */
export interface MemoryUsage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export class Inspector {
  private nextId = 1;
  private pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private listeners = new Map<string, Array<(params: any) => void>>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(`${msg.error.message} (${msg.error.code})`));
        else p?.resolve(msg.result);
      } else {
        for (const l of this.listeners.get(msg.method) ?? []) l(msg.params);
      }
    });
  }

  /** Connect to `url` (ws://127.0.0.1:port/uuid). */
  static async connect(url: string): Promise<Inspector> {
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1 << 30 });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new Inspector(ws);
  }

  /** Send one protocol command; resolves with its result, rejects with the protocol error. */
  send<T = any>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Call `fn` for each `method` event until the returned function is called. */
  on(method: string, fn: (params: any) => void): () => void {
    const list = this.listeners.get(method) ?? [];
    list.push(fn);
    this.listeners.set(method, list);
    return () => this.listeners.set(method, (this.listeners.get(method) ?? []).filter((f) => f !== fn));
  }

  /** A full GC, then `process.memoryUsage()` in the inspected process. */
  async memoryUsage(): Promise<MemoryUsage> {
    await this.send('HeapProfiler.collectGarbage');
    await this.send('HeapProfiler.collectGarbage');
    const r = await this.send('Runtime.evaluate', { expression: 'process.memoryUsage()', returnByValue: true });
    return r.result.value as MemoryUsage;
  }

  /** Every script compiled in the process so far (Node's internal scripts included, url `node:…`). */
  async scripts(): Promise<LoadedScript[]> {
    const seen: LoadedScript[] = [];
    const off = this.on('Debugger.scriptParsed', (p) => {
      seen.push({ url: p.url || `<eval ${p.scriptId}>`, length: p.length ?? 0 });
    });
    // scriptParsed for the loaded scripts arrive before enable's answer. While the debugger is enabled a
    // `debugger;` statement would pause the process: skip all pauses, sent in the same breath as enable
    await Promise.all([this.send('Debugger.enable'), this.send('Debugger.setSkipAllPauses', { skip: true })]);
    await this.send('Debugger.disable');
    off();
    return seen;
  }

  /** Write a heap snapshot of the process to `file` (forces a GC first, as V8 does for every snapshot). */
  async heapSnapshot(file: string): Promise<void> {
    const out = createWriteStream(file);
    const off = this.on('HeapProfiler.addHeapSnapshotChunk', (p) => out.write(p.chunk));
    await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false, captureNumericValue: false });
    off();
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }

  close(): void {
    this.ws.close();
  }
}

/** One line of a heap snapshot summary: all nodes of one kind (`type:name`). */
export interface SnapshotGroup {
  /** `object:Map`, `closure`, `string`, `code`, `array`, `native:…`, … */
  key: string;
  count: number;
  /** shallow (self) size in bytes */
  selfBytes: number;
}

/**
 * Summarise a .heapsnapshot file: nodes grouped by type and, for objects and native objects, by
 * constructor name; shallow sizes (V8's self_size). Sorted by size, largest first.
 */
export function summariseSnapshot(file: string): { totalBytes: number; nodes: number; groups: SnapshotGroup[] } {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const iType = fields.indexOf('type');
  const iName = fields.indexOf('name');
  const iSize = fields.indexOf('self_size');
  const groups = new Map<string, SnapshotGroup>();
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + iType]!]!;
    const size = snap.nodes[i + iSize]!;
    total += size;
    const name = snap.strings[snap.nodes[i + iName]!]!;
    const key = type === 'object' || type === 'native' ? `${type}:${name.slice(0, 60)}` : type;
    const g = groups.get(key) ?? { key, count: 0, selfBytes: 0 };
    g.count++;
    g.selfBytes += size;
    groups.set(key, g);
  }
  return { totalBytes: total, nodes: snap.nodes.length / width, groups: [...groups.values()].sort((a, b) => b.selfBytes - a.selfBytes) };
}

/** Groups of `after` whose count grew since `before`, largest growth in bytes first. */
export function snapshotGrowth(before: SnapshotGroup[], after: SnapshotGroup[]): Array<SnapshotGroup & { countDelta: number; bytesDelta: number }> {
  const b = new Map(before.map((g) => [g.key, g]));
  return after
    .map((g) => ({ ...g, countDelta: g.count - (b.get(g.key)?.count ?? 0), bytesDelta: g.selfBytes - (b.get(g.key)?.selfBytes ?? 0) }))
    .filter((g) => g.countDelta > 0)
    .sort((x, y) => y.bytesDelta - x.bytesDelta);
}
