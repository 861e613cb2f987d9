import { defineConfig } from 'vite';

/**
 * The app is served by the Bazaar server at /app/ (`npm start`), so every asset URL starts with /app/.
 * `npm run dev -w @bazaar/web` serves it on http://localhost:5177/app/ and calls the API at
 * VITE_BAZAAR_URL (web/.env.development: http://localhost:3000, the origin `npm start` announces).
 */
export default defineConfig({
  base: '/app/',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
  server: { port: 5177, strictPort: true },
});
