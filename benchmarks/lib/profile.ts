/**
 * Summary of a V8 CPU profile (`node --cpu-prof`, *.cpuprofile JSON): self time by where the code
 * lives (npm package, node internals, this repository's directory, GC, idle), as a markdown table.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber?: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: `pkg` for node_modules, `server/src/<dir>`, `node:<module>`, or a V8 pseudo-frame. */
export function bucketOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] === 'internal' ? url.slice(5).split('/')[1] : url.slice(5)}`;
  const src = /\/(server\/src\/[^/]+|contract\/src|benchmarks)\//.exec(url);
  if (src) return src[1]!;
  return path.basename(url);
}

/**
 * Markdown tables of every profile in `dir`: self time by bucket (native code such as JSON.stringify or
 * socket writes is counted in the bucket of the JavaScript that called it), then the top functions.
 */
export function summariseProfile(dir: string, top = 15): string {
  const totals = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as CpuProfile;
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    /** the node itself when it has JavaScript source (or is a V8 pseudo-frame), else its nearest such caller */
    const owner = (node: ProfileNode): ProfileNode => {
      let cur: ProfileNode | undefined = node;
      while (cur && !cur.callFrame.url && !cur.callFrame.functionName.startsWith('(')) cur = byId.get(parent.get(cur.id) ?? -1);
      return cur ?? node;
    };
    p.samples.forEach((id, i) => {
      const node = byId.get(id);
      if (!node) return;
      const o = owner(node);
      const b = bucketOf(o.callFrame);
      const dt = p.timeDeltas[i] ?? 0;
      totals.set(b, (totals.get(b) ?? 0) + dt);
      if (b !== '(idle)') {
        const name = `${o.callFrame.functionName || '(anonymous)'} (${b}${o.callFrame.url ? `:${(o.callFrame.lineNumber ?? 0) + 1}` : ''})`;
        functions.set(name, (functions.get(name) ?? 0) + dt);
      }
    });
  }
  const idle = totals.get('(idle)') ?? 0;
  const busy = [...totals.entries()].filter(([b]) => b !== '(idle)').reduce((a, [, v]) => a + v, 0);
  const rows = [...totals.entries()].filter(([b]) => b !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `busy ${(busy / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s`,
    '',
    '| where | self time s | % of busy |',
    '|---|---|---|',
    ...rows.map(([b, us]) => `| ${b} | ${(us / 1e6).toFixed(2)} | ${((100 * us) / busy).toFixed(1)} % |`),
    '',
    '| function (where:line) | self time s | % of busy |',
    '|---|---|---|',
    ...[...functions.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn, us]) => `| ${fn.replace(/\|/g, '\\|')} | ${(us / 1e6).toFixed(2)} | ${((100 * us) / busy).toFixed(1)} % |`),
  ].join('\n');
}
