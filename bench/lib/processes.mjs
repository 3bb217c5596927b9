/**
 * Child processes for the bench: every child is tracked from spawn to exit so
 * that nothing outlives the bench, whether it ends normally, throws, or is
 * interrupted (Ctrl-C, CI cancellation).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";

const live = new Set();
let interruptedBy = null;

/** The signal that interrupted the bench, if any (its children then die on purpose, not by failure). */
export function interruption() {
  return interruptedBy;
}

/** Spawns `node <args>`, with stdout/stderr captured for parsing and error messages. */
export function spawnNode(args, options = {}) {
  // process.execPath rather than the `#!/usr/bin/env node` shebang: the same
  // Node binary as the bench, and no PATH lookup inside the measured time.
  return spawnProgram(process.execPath, args, options);
}

/** Spawns the executable `file` (the single executable, a Go program) like spawnNode. */
export function spawnProgram(file, args, options = {}) {
  const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
  child.output = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  // Always drain both pipes: a full pipe buffer would block the child.
  child.stdout.on("data", (chunk) => (child.output += chunk));
  child.stderr.on("data", (chunk) => (child.output += chunk));
  live.add(child);
  child.once("exit", () => live.delete(child));
  return child;
}

/** Resolves with the first capture group of `pattern` (all of them with `allGroups`) once the child's stdout matches it. */
export function waitForOutput(child, pattern, timeoutMs = 10_000, { allGroups = false } = {}) {
  return new Promise((resolve, reject) => {
    let seen = "";
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout.off("data", onData);
      child.off("exit", onExit);
    };
    const onData = (chunk) => {
      seen += chunk;
      const match = pattern.exec(seen);
      if (match) {
        cleanup();
        resolve(allGroups ? match.slice(1) : match[1]);
      }
    };
    const onExit = (code, signal) => {
      cleanup();
      reject(new Error(`child exited (${signal ?? code}) before printing ${pattern}:\n${child.output}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${child.output}`));
    }, timeoutMs);
    child.stdout.on("data", onData);
    child.once("exit", onExit);
  });
}

function hasExited(child) {
  return child.exitCode !== null || child.signalCode !== null;
}

/** SIGTERM, wait for the exit; SIGKILL if it does not go within `graceMs`. */
export async function stopChild(child, graceMs = 5_000) {
  if (hasExited(child)) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

export async function stopAllChildren() {
  await Promise.all([...live].map((child) => stopChild(child)));
}

/**
 * Last line of defence: if the bench process exits or is interrupted while
 * children still run, kill them. `exit` handlers cannot wait, hence SIGKILL there.
 */
export function killChildrenOnExit() {
  process.once("exit", () => {
    for (const child of live) child.kill("SIGKILL");
  });
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ]) {
    process.once(signal, () => {
      interruptedBy = signal;
      process.stderr.write(`bench: ${signal}, stopping child processes\n`);
      stopAllChildren().finally(() => process.exit(code));
    });
  }
}
