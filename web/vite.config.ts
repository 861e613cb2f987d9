import { brotliCompressSync, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/**
 * Pre-compressed copies of the built text assets (`.gz`, `.br` next to each file), made once at build
 * time at the highest levels, so the server can send them without compressing on every request.
 */
function precompress(): Plugin {
  return {
    name: 'bazaar-precompress',
    apply: 'build',
    generateBundle(_options, bundle) {
      for (const [name, file] of Object.entries(bundle)) {
        if (!/\.(js|css|html|svg|json)$/.test(name)) continue;
        const bytes = Buffer.from(file.type === 'chunk' ? file.code : file.source);
        if (bytes.length < 1024) continue;
        this.emitFile({ type: 'asset', fileName: `${name}.gz`, source: gzipSync(bytes, { level: 9 }) });
        this.emitFile({ type: 'asset', fileName: `${name}.br`, source: brotliCompressSync(bytes) });
      }
    },
  };
}

/**
 * The app is Preact with the React API (preact/compat) so that React libraries (TanStack Query) run
 * on it: `react` and `react-dom` resolve to preact/compat. It is served by the Bazaar server at /app/
 * (`npm start`), so every asset URL starts with /app/. `npm run dev -w @bazaar/web` serves it on
 * http://localhost:5177/app/ and calls the API at VITE_BAZAAR_URL (web/.env.development:
 * http://localhost:3000, the origin `npm start` announces).
 */
export default defineConfig({
  base: '/app/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: {
    alias: [
      { find: /^react$/, replacement: 'preact/compat' },
      { find: /^react-dom$/, replacement: 'preact/compat' },
      { find: /^react\/jsx-runtime$/, replacement: 'preact/jsx-runtime' },
    ],
  },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
  plugins: [precompress()],
  server: { port: 5177, strictPort: true },
});
