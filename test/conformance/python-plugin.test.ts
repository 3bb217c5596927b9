/**
 * Conformance: the pytest plugin in python/ as a Python user gets it. It is
 * installed with pip from a copy of the source tree, without network
 * (`--no-build-isolation --no-deps --no-index`: Debian's python3-setuptools
 * builds it), and found by pytest through its pytest11 entry point; then
 * Debian's python3-pytest runs python/tests and examples/pytest once per
 * Debian consul client (python3-consul, and python3-consul2 first on
 * PYTHONPATH), against the built `bin/standin` (dist/: `npm test` builds it
 * first in .ci/run). One vitest test per pytest test, from its JUnit report,
 * so a failure names the Python test.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PYTHON } from "../support/python-consul.js";
import { PYTHON_CLIENTS } from "./support/python-checks.js";

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = join(ROOT, "bin/standin");

/** Every pytest test this suite expects, as `file::name`: a test lost from python/tests fails here. */
const PLUGIN_TESTS = [
  "test_control.py::test_addresses_and_env",
  "test_control.py::test_advance_takes_seconds_timedeltas_and_go_durations",
  "test_control.py::test_a_refused_request_raises_standins_error",
  "test_control.py::test_snapshot_and_restore_bring_the_state_back_exactly",
  "test_control.py::test_apply_fixture_adds_to_the_state_and_reset_takes_it_away",
  "test_control.py::test_tape_records_since_the_last_reset",
  "test_control.py::test_the_marker_names_a_shipped_fixture_and_act_runs_an_action",
  "test_control.py::test_the_marker_sets_the_seed",
  "test_control.py::test_reset_with_a_fixture_replaces_the_start_state",
  "test_control.py::test_the_next_test_does_not_inherit_a_replaced_start",
  "test_locks.py::test_a_lock_is_handed_over_when_the_holders_session_expires",
  "test_locks.py::test_await_raises_an_assertion_with_what_it_observed",
  "test_locks.py::test_a_blocking_read_wakes_on_the_write",
  "test_locks.py::test_a_blocking_read_times_out_on_the_virtual_clock",
  "test_options.py::test_ini_options_set_the_fixture_seed_and_start_time",
  "test_options.py::test_fixture_files_are_found_from_the_root_directory_and_documents_from_the_marker",
  "test_options.py::test_the_three_scopes",
  "test_options.py::test_standin_reuse_false_gives_each_test_its_own_process",
  "test_options.py::test_a_failed_start_is_an_error_with_standins_one_line_message",
  "test_options.py::test_an_executable_that_does_not_exist_is_named",
  "test_options.py::test_an_unknown_marker_option_is_refused",
  "test_options.py::test_a_control_token_is_sent_by_the_handle",
  "test_options.py::test_tls_serves_https_with_the_ca_in_ca_file",
  "test_options.py::test_the_executable_is_found_on_path",
  "test_options.py::test_npx_is_the_last_resort_and_never_installs",
  "test_options.py::test_markers_merge_from_module_to_class_to_test",
  "test_options.py::test_a_start_timeout_that_is_not_a_number_is_a_usage_error",
  "test_sessions.py::test_a_session_expires_when_the_test_advances_the_clock",
  "test_sessions.py::test_each_test_starts_from_the_start_state",
];
const EXAMPLE_TESTS = [
  "test_leader.py::test_node_b_takes_over_when_node_a_fails",
  "test_leader.py::test_every_test_starts_from_the_fixture",
  "test_leader.py::test_the_marker_picks_another_world",
];

type Outcome = { name: string; outcome: "passed" | "failed" | "error" | "skipped"; message: string };

/** The test cases of a pytest JUnit report, `file::name` each (the class name is the module's dotted path). */
function junitOutcomes(xml: string): Map<string, Outcome> {
  const outcomes = new Map<string, Outcome>();
  for (const match of xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const module = match[1]!.split(".").pop()!;
    const body = match[4] ?? "";
    const kind = /<(failure|error|skipped)\b/.exec(body)?.[1] as Outcome["outcome"] | undefined;
    const name = `${module}.py::${match[2]}`;
    outcomes.set(name, { name, outcome: kind ?? "passed", message: body.slice(0, 4000) });
  }
  return outcomes;
}

let work: string;
let site: string;

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist/cli.js"))) throw new Error("dist/ is not built: run `npm run build` (in .ci/run, `npm test` builds it first)");
  try {
    await run(PYTHON, ["-c", "import pytest, setuptools, consul"]);
  } catch {
    throw new Error(`${PYTHON} lacks pytest, setuptools or consul: apt-get install python3-pytest python3-setuptools python3-consul (.ci/run does)`);
  }
  work = mkdtempSync(join(tmpdir(), "standin-python-plugin-"));
  site = join(work, "site");
  // A copy: pip builds in the source tree, and the repository's stays clean.
  cpSync(join(ROOT, "python"), join(work, "src"), { recursive: true, filter: (path) => !path.includes("__pycache__") });
  await run(PYTHON, ["-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps", "--no-index", "--target", site, join(work, "src")], {
    env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", PIP_ROOT_USER_ACTION: "ignore" },
    timeout: 300_000,
  });
}, 300_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("pip install ./python --no-build-isolation --no-deps (no network)", () => {
  it("installs the package with its pytest11 entry point", async () => {
    const distInfo = readdirSync(site).find((name) => name.endsWith(".dist-info"));
    expect(distInfo).toBe("standin_pytest-0.1.0.dist-info");
    expect(readFileSync(join(site, distInfo!, "entry_points.txt"), "utf8")).toContain("[pytest11]\nstandin = standin_pytest.plugin");
    const { stdout } = await run(PYTHON, ["-c", "from importlib.metadata import entry_points; print([e.value for e in entry_points(group='pytest11') if e.name == 'standin'])"], {
      env: { ...process.env, PYTHONPATH: site },
    });
    expect(stdout.trim()).toBe("['standin_pytest.plugin']");
  });
});

/** The fenced blocks of a Markdown page in one language, in order. */
function fencedBlocks(page: string, lang: string): string[] {
  const text = readFileSync(join(ROOT, page), "utf8");
  const fence = "```";
  return [...text.matchAll(new RegExp(`^${fence}${lang}\\n([\\s\\S]*?)^${fence}$`, "gm"))].map((m) => m[1]!);
}

describe("the samples of docs/python.md and the README", () => {
  it("docs/python.md shows examples/pytest's files as they are", () => {
    expect(fencedBlocks("docs/python.md", "ini")).toEqual([readFileSync(join(ROOT, "examples/pytest/pytest.ini"), "utf8")]);
    expect(fencedBlocks("docs/python.md", "python")).toEqual([readFileSync(join(ROOT, "examples/pytest/test_leader.py"), "utf8")]);
  });

  it("the README's pytest sample passes as printed, with each Debian consul client", async () => {
    const [sample] = fencedBlocks("README.md", "python");
    expect(sample).toContain("def test_");
    const dir = mkdtempSync(join(work, "readme-"));
    writeFileSync(join(dir, "test_readme.py"), sample!);
    for (const client of PYTHON_CLIENTS) {
      const pythonPath = [client.env.PYTHONPATH, site].filter(Boolean).join(":");
      const { stdout } = await run(PYTHON, ["-m", "pytest", "-q", "-p", "no:cacheprovider", dir], {
        cwd: dir,
        env: { ...process.env, PYTHONPATH: pythonPath, STANDIN_BIN: BIN, PYTHONDONTWRITEBYTECODE: "1" },
        timeout: 300_000,
      });
      expect(stdout, client.name).toMatch(/\b1 passed\b/);
    }
  }, 300_000);
});

for (const client of PYTHON_CLIENTS) {
  for (const [title, dir, expected] of [
    ["python/tests", join(ROOT, "python/tests"), PLUGIN_TESTS],
    ["examples/pytest (docs/python.md)", join(ROOT, "examples/pytest"), EXAMPLE_TESTS],
  ] as const) {
    describe(`${client.name}: pytest ${title} with the installed plugin`, () => {
      let outcomes: Map<string, Outcome>;
      let output: string;
      beforeAll(async () => {
        const report = join(work, `${client.name}-${title.split(" ")[0]!.replace("/", "-")}.xml`);
        const pythonPath = [client.env.PYTHONPATH, site].filter(Boolean).join(":");
        // No -p: pytest must find the plugin through the installed entry point. The cache stays out of the repository.
        const result = await run(PYTHON, ["-m", "pytest", "-q", "-p", "no:cacheprovider", `--junitxml=${report}`, dir], {
          cwd: dir,
          env: { ...process.env, PYTHONPATH: pythonPath, STANDIN_BIN: BIN, PYTHONDONTWRITEBYTECODE: "1" },
          timeout: 600_000,
        }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? "", stderr: error.stderr ?? "" }));
        output = `${result.stdout}\n${result.stderr}`;
        outcomes = existsSync(report) ? junitOutcomes(readFileSync(report, "utf8")) : new Map();
      }, 600_000);

      it("runs exactly the tests listed here", () => {
        expect([...outcomes.keys()].sort(), output.slice(-4000)).toEqual([...expected].sort());
      });
      for (const name of expected) {
        it(name, () => {
          const outcome = outcomes.get(name);
          expect(outcome, `${name} did not run:\n${output.slice(-4000)}`).toBeDefined();
          expect(outcome!.outcome, outcome!.message).toBe("passed");
        });
      }
    });
  }
}
