// The lab's build: a static page (relative asset URLs, no CDN) whose worker bundles the
// browser-clean packages from source. "tirx-ts" and "@tirx-ts/runtime" resolve to the lab's
// module (src/tirx-lab.ts: the simulated device only; the Node package loads the CUDA driver).
import { fileURLToPath } from "node:url";
import { defaultClientConditions, defineConfig } from "vite";

const lab = fileURLToPath(new URL("./src/tirx-lab.ts", import.meta.url));
const nodeStub = fileURLToPath(new URL("./src/node-stub.ts", import.meta.url));
const repo = fileURLToPath(new URL("../..", import.meta.url));

export default defineConfig({
  base: "./",
  resolve: {
    conditions: ["source", ...defaultClientConditions],
    alias: [
      { find: /^tirx-ts$/, replacement: lab },
      { find: /^@tirx-ts\/runtime$/, replacement: lab },
      // Node built-ins that kernels imports (gemm()'s tuning cache): a stub with no files.
      { find: /^(node:)?(fs|path)$/, replacement: nodeStub },
      // The CLI's browser-clean files (layout pictures, pattern arguments), not in its exports.
      { find: /^tirx-ts\/src\/(.*)$/, replacement: `${repo}packages/tirx-ts/src/$1` },
    ],
  },
  server: { fs: { allow: [repo] } },
  // The dev server bundles these before the first page load (none found later reloads the page).
  optimizeDeps: {
    entries: ["index.html", "src/worker.ts"],
    include: [
      "codemirror",
      "@codemirror/state",
      "@codemirror/view",
      "@codemirror/lang-javascript",
      "@codemirror/language",
      "@codemirror/lint",
      "sucrase",
      "typescript",
    ],
  },
  worker: {
    format: "es",
    // dsl's span capture skips stack frames of files under packages/<package>/(src|dist)/ as the
    // library's own: the worker's bundle is named so that its frames are skipped too and a span
    // is the author's line in the editor's module.
    rollupOptions: {
      output: {
        entryFileNames: "assets/packages/tirx-ts/dist/[name]-[hash].js",
        chunkFileNames: "assets/packages/tirx-ts/dist/[name]-[hash].js",
      },
    },
  },
  build: { target: "es2022", chunkSizeWarningLimit: 16384, reportCompressedSize: false },
});
