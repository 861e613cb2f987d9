/**
 * The benchmarks' command-line options: `--name=value`, or `--name` alone for a flag (read as 'true').
 * Returns `def` when the option is absent.
 */
export function arg(name: string, def?: string): string | undefined {
  const hit = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (!hit) return def;
  return hit.includes('=') ? hit.slice(hit.indexOf('=') + 1) : 'true';
}
