/**
 * Summary of a V8 CPU profile (`node --cpu-prof`, *.cpuprofile JSON): self time by where the code
 * lives (npm package, node internals, this repository's directory, GC, idle), as a markdown table.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
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

/** Markdown table of the top `top` buckets of every profile in `dir` (self time, % of busy time). */
export function summariseProfile(dir: string, top = 15): string {
  const totals = new Map<string, number>();
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as CpuProfile;
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    p.samples.forEach((id, i) => {
      const node = byId.get(id);
      if (!node) return;
      const b = bucketOf(node.callFrame);
      totals.set(b, (totals.get(b) ?? 0) + (p.timeDeltas[i] ?? 0));
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
  ].join('\n');
}
