import { isTirxError, renderDiagnostics } from "@tirx-ts/core";

const INSTALLED = Symbol.for("tirx-ts.uncaught-handler");

/**
 * Make an uncaught `TirxError` (thrown or rejected, and not handled by the program) print as a
 * diagnostic with its code frame on stderr (every error it carries, sorted, with a count, when the
 * verifier found several: `renderDiagnostics`) and exit with code 1, instead of Node's stack dump.
 * Any other uncaught error keeps Node's default behavior, and so does everything when the
 * program has its own 'uncaughtException' listener. Installed once per process by importing
 * `tirx-ts`; installing again is a no-op.
 */
export function installUncaughtHandler(): void {
  const g = globalThis as { [INSTALLED]?: true };
  if (g[INSTALLED]) return;
  g[INSTALLED] = true;
  process.on("uncaughtExceptionMonitor", (err) => {
    if (!isTirxError(err) || process.listenerCount("uncaughtException") > 0) return;
    process.stderr.write(
      renderDiagnostics(err, { color: process.stderr.isTTY, cwd: process.cwd() }) + "\n",
    );
    process.exit(1);
  });
}
