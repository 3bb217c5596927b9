/**
 * Counts the turns of the event loop other work gets while `work` runs: a
 * writer that slices its work gives some; one that holds the loop gives none.
 * (An order of events, not a time: no test asserts on timing.)
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { result: await work(), turns };
  } finally {
    running = false;
  }
}
