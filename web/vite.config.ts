import { defineConfig } from 'vite';

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
  server: { port: 5177, strictPort: true },
});
