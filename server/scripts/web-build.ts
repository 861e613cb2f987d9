/**
 * The reference web app (`web/`, served by the server at /app) built when missing or older than its
 * sources: `npm start` and tests/web.browser.test.ts call `ensureWebApp()`. The build is the root
 * script `npm run web:build`: the SDK packages' dist/ (tsc, as the app imports the packaged SDK), then
 * `tsc` + `vite build` of web/ into web/dist (about 30 s on 2 cores; seconds when only web/ changed).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../src/db/migrate.js';
import { WEB_APP_DIR } from '../src/http/web-app.js';

/** Sources whose change requires a new build (the SDK packages are part of the bundle). */
const SOURCES = ['web/src', 'web/index.html', 'web/vite.config.ts', 'web/package.json', 'client-sdk/src', 'contract/src'];

function newestMtimeMs(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = 0;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtimeMs(join(path, name)));
  return newest;
}

/** true when web/dist/index.html is missing or older than any source of the app or the SDK. */
export function webAppNeedsBuild(): boolean {
  const index = join(WEB_APP_DIR, 'index.html');
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return SOURCES.some((s) => newestMtimeMs(join(REPO_ROOT, s)) > built);
}

/**
 * Build the web app when needed (`npm run -s web:build`, output to this process's stdout/stderr when
 * `quiet` is false). Returns whether it built; throws with the build's output when the build fails.
 */
export function ensureWebApp(opts: { quiet?: boolean } = {}): boolean {
  if (!webAppNeedsBuild()) return false;
  const r = spawnSync('npm', ['run', '-s', 'web:build'], {
    cwd: REPO_ROOT,
    stdio: opts.quiet ? 'pipe' : 'inherit',
    encoding: 'utf8',
    // a production build whatever the caller runs under (vitest sets NODE_ENV=test, which Vite honours)
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (r.status !== 0) {
    throw new Error(`npm run web:build failed (exit ${r.status}):\n${(r.stdout ?? '') + (r.stderr ?? '')}`.trim());
  }
  return true;
}
