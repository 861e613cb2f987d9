/** Reading a Prometheus text exposition in tests (GET /metrics). */

/** The value of the sample `name{labels}` in a text exposition, or undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2] ? m[2].split(/,(?=[a-z_]+=")/) : [];
    if (want.every((w) => have.includes(w))) return Number(m[3]);
  }
  return undefined;
}
