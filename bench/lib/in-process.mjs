/**
 * Measures 2 and 3: the in-process API, no sockets. These run inside the
 * bench process itself, where dist/ is already imported, so module loading
 * is not part of what is timed (measure 1 covers a cold process).
 */
import { createStandin } from "../../dist/index.js";

async function createAndAskReady() {
  const started = performance.now();
  const emu = await createStandin();
  const response = await emu.scheduler.request("/_standin/ready");
  const elapsed = performance.now() - started;
  // Checked outside the timed interval: a measurement of a failing request would be meaningless.
  if (response.status !== 200) throw new Error(`/_standin/ready answered ${response.status}`);
  emu.close();
  return elapsed;
}

export async function measureCreate({ warmups, iterations }) {
  for (let i = 0; i < warmups; i++) await createAndAskReady();
  const samples = [];
  for (let i = 0; i < iterations; i++) samples.push(await createAndAskReady());
  return samples;
}

export async function measureReset({ warmups, iterations }) {
  const emu = await createStandin();
  try {
    for (let i = 0; i < warmups; i++) await emu.reset();
    const samples = [];
    for (let i = 0; i < iterations; i++) {
      const started = performance.now();
      await emu.reset();
      samples.push(performance.now() - started);
    }
    return samples;
  } finally {
    emu.close();
  }
}
