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

/**
 * The clock at scale: 100 000 pending timers spread over an hour, then one
 * advance past all of them. Scheduling and firing are timed separately; the
 * handler does nothing, so this is the queue's own cost.
 */
export async function measureTimerAdvance({ timers, iterations }) {
  const schedule = [];
  const advance = [];
  for (let run = 0; run < iterations + 1; run++) {
    const emu = await createStandin();
    let fired = 0;
    emu.clock.handle("bench.tick", () => void fired++);
    const start = emu.clock.now();
    let t0 = performance.now();
    emu.store.write(() => {
      // A fixed spread (multiplicative hashing of i) so instants are out of order, as real TTLs are.
      for (let i = 0; i < timers; i++) emu.clock.schedule({ at: start + ((i * 2654435761) % 3_600_000), kind: "bench.tick" });
    });
    const scheduled = performance.now() - t0;
    t0 = performance.now();
    emu.clock.advance("2h");
    const advanced = performance.now() - t0;
    if (fired !== timers) throw new Error(`fired ${fired} of ${timers} timers`);
    emu.close();
    if (run === 0) continue; // warm-up
    schedule.push(scheduled);
    advance.push(advanced);
  }
  return { schedule, advance };
}
