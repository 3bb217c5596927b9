/**
 * Debian's python3-consul (0.7.1) under /usr/bin/python3, for the tests that
 * drive a real Python client: whether it is there, and the note a skipped
 * test carries when it is not (.ci/run installs it).
 */
import { execFileSync } from "node:child_process";

export const PYTHON = "/usr/bin/python3";

export const pythonConsul = (() => {
  try {
    execFileSync(PYTHON, ["-c", "import consul"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

export const PYTHON_SKIP_NOTE = pythonConsul ? "" : ` [SKIPPED: \`${PYTHON} -c "import consul"\` failed; install Debian's python3-consul]`;

/** Says once, on stderr, which tests are skipped and why. */
export function warnIfNoPythonConsul(what: string): void {
  if (!pythonConsul) console.warn(`${what} skipped: \`${PYTHON} -c "import consul"\` failed (apt-get install python3-consul)`);
}
