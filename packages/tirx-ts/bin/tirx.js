#!/usr/bin/env node
// The CLI runs from the built package; `npm ci` builds it (root "prepare": tsc -b).
import("../dist/cli.js").then(
  (m) => m.main(process.argv.slice(2)).then((code) => process.exit(code)),
  (e) => {
    console.error(
      `tirx: cannot start (${e.message}). Run "npm run build" in the tirx-ts repository first.`,
    );
    process.exit(2);
  },
);
