import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { measureThroughput, throughputFixture, ROUTES } from "./throughput.mjs";
const only = (process.argv[2] ?? "echo").split(",");
for (let i = ROUTES.length - 1; i >= 0; i--) if (!only.includes(ROUTES[i].id)) ROUTES.splice(i, 1);
const dir = await mkdtemp(join(tmpdir(), "sc-"));
const f = join(dir, "f.json");
await writeFile(f, JSON.stringify(throughputFixture()));
const r = await measureThroughput({ connections: 10, warmupSeconds: 0.5, durationSeconds: 2, rounds: Number(process.argv[3] ?? 3) }, { fixtureFile: f });
for (const [id, v] of Object.entries(r))
  console.log(
    id,
    "standin",
    v.cpu.standin.toFixed(1),
    "hono",
    v.cpu.hono.toFixed(1),
    "floor",
    v.cpu.floor.toFixed(1),
    "ratio",
    (v.cpu.standin / v.cpu.hono).toFixed(2),
    JSON.stringify(v.rounds.map((x) => [x.standinCpuUs.toFixed(0), x.honoCpuUs.toFixed(0)])),
  );
process.exit(0);
