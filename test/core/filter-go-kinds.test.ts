/**
 * Regression tests for the differences the go-bexpr oracle (test/conformance/oracle-bexpr.test.ts) found
 * in src/core/filter: JSON cannot say that a field is a time.Time, a slice of struct pointers, a nil
 * pointer to a non-struct, a map[string]string or a nil []byte, and go-bexpr v0.1.13 treats each of
 * those by its Go kind. Expected answers are go-bexpr's own, as the oracle printed them.
 */
import { describe, expect, test } from "vitest";
import { compileFilter, FilterEvaluationError } from "../../src/core/filter/index.js";

const ALLOC = {
  ID: "a1",
  DeploymentStatus: { Healthy: null, Timestamp: "2026-01-01T00:00:11.1Z", Canary: false },
  TaskStates: {
    web: {
      State: "running",
      StartedAt: "2026-01-01T00:00:01.1Z",
      FinishedAt: null,
      Events: [
        { Type: "Received", Details: {} },
        { Type: "Task Setup", Details: { message: "Building" } },
      ],
    },
  },
  Job: { ID: "j", Payload: null, TaskGroups: [{ Name: "g", Constraints: null, Networks: [], ShutdownDelay: null, StopAfterClientDisconnect: null, Update: null, Tasks: [] }] },
};

function outcome(expression: string, datum: unknown = ALLOC): boolean | string {
  try {
    return compileFilter(expression).matches(datum);
  } catch (e) {
    expect(e).toBeInstanceOf(FilterEvaluationError);
    return `error: ${(e as Error).message}`;
  }
}

const IN_STRUCT = 'error: unable to find suitable primitive comparison function for "in" comparison';

describe("time.Time fields are structs to go-bexpr", () => {
  test.each([
    ['TaskStates.web.StartedAt == "2026-01-01T00:00:01.1Z"', "error: unable to find suitable primitive comparison function for matching"],
    ['TaskStates.web.StartedAt matches "2026"', "error: Value of type time.Time is not convertible to []byte"],
    ['"2026" in TaskStates.web.StartedAt', 'error: Cannot perform in/contains operations on type struct for selector: "TaskStates.web.StartedAt"'],
    // the zero time (JSON null) is a struct too, not a nil value
    ['"x" in TaskStates.web.FinishedAt', 'error: Cannot perform in/contains operations on type struct for selector: "TaskStates.web.FinishedAt"'],
    ['DeploymentStatus.Timestamp != ""', "error: unable to find suitable primitive comparison function for matching"],
  ])("%s", (expression, expected) => {
    expect(outcome(expression)).toBe(expected);
  });

  test("is empty on a time.Time (a panic in go-bexpr) is refused", () => {
    expect(outcome("TaskStates.web.StartedAt is empty")).toMatch(/^error: /);
  });

  test("any/all over a time.Time is not a list or a map", () => {
    expect(outcome("any TaskStates.web.StartedAt as v { v is empty }")).toBe("error: TaskStates.web.StartedAt is not a list or a map");
  });
});

describe("slices of struct pointers: in/contains fails even when empty or nil", () => {
  test.each([
    ['"x" in Job.TaskGroups.0.Constraints', IN_STRUCT],
    ['"x" not in Job.TaskGroups.0.Networks', IN_STRUCT],
    ['Job.TaskGroups.0.Tasks contains "t"', IN_STRUCT],
  ])("%s", (expression, expected) => {
    expect(outcome(expression)).toBe(expected);
  });

  test("is empty still works on them", () => {
    expect(outcome("Job.TaskGroups.0.Constraints is empty")).toBe(true);
    expect(outcome("Job.TaskGroups.0.Networks is empty")).toBe(true);
  });

  test("a slice of strings that is empty still finds nothing", () => {
    expect(outcome('"x" in Tags', { Tags: [] })).toBe(false);
  });
});

describe("nil pointers to non-structs are go-bexpr's invalid value", () => {
  test.each(["Job.TaskGroups.0.ShutdownDelay", "Job.TaskGroups.0.StopAfterClientDisconnect", "DeploymentStatus.Healthy", "Job.TaskGroups.0.Update"])(
    "in over nil %s",
    (selector) => {
      expect(outcome(`"x" in ${selector}`)).toBe(`error: Cannot perform in/contains operations on type invalid for selector: "${selector}"`);
    },
  );

  test("is empty over a nil *time.Duration (a panic in go-bexpr) is refused", () => {
    expect(outcome("Job.TaskGroups.0.ShutdownDelay is empty")).toMatch(/^error: /);
  });
});

describe("event Details are a map[string]string", () => {
  test("any/all iterate it", () => {
    expect(outcome('any TaskStates.web.Events.1.Details as k, v { k == "message" }')).toBe(true);
    expect(outcome('all TaskStates.web.Events.0.Details as k, _ { k == "x" }')).toBe(true);
  });

  test("a missing key is not present rather than an error", () => {
    expect(outcome('TaskStates.web.Events.0.Details.message == "x"')).toBe(false);
    expect(outcome('TaskStates.web.Events.0.Details.message != "x"')).toBe(true);
  });

  test("in tests its keys", () => {
    expect(outcome('"message" in TaskStates.web.Events.1.Details')).toBe(true);
  });
});

describe("a nil []byte (Payload) is still a byte slice", () => {
  test.each([
    ["`team` in Job.Payload", 'error: error getting match value in expression: strconv.ParseUint: parsing "team": invalid syntax'],
    ["1 in Job.Payload", false],
    ["Job.Payload is empty", true],
    ['Job.Payload matches "^$"', true],
  ])("%s", (expression, expected) => {
    expect(outcome(expression)).toBe(expected);
  });
});

describe("a null map value or slice element is a nil pointer to go-bexpr", () => {
  const ALLOC_RESOURCES = {
    AllocatedResources: { TaskLifecycles: { web: null, sidecar: { Hook: "prestart", Sidecar: true } } },
    Config: { args: [null, "x"], opt: null, ports: [80, 443] },
  };

  test.each([
    ['"x" in AllocatedResources.TaskLifecycles.web', 'error: Cannot perform in/contains operations on type invalid for selector: "AllocatedResources.TaskLifecycles.web"'],
    ['"x" in Config.opt', 'error: Cannot perform in/contains operations on type invalid for selector: "Config.opt"'],
    ['"x" in Config.args.0', 'error: Cannot perform in/contains operations on type invalid for selector: "Config.args.0"'],
    // a Config slice is a []interface{}: a nil element makes go-bexpr panic, a value it cannot coerce is skipped
    ['"x" in Config.args', 'error: in over "Config.args", a []interface {} holding nil: go-bexpr panics on it (Nomad fails the request)'],
    ['"abc" in Config.ports', false],
    ["443 in Config.ports", true],
  ])("%s", (expression, expected) => {
    expect(outcome(expression, ALLOC_RESOURCES)).toBe(expected);
  });

  test("is empty over one (a panic in go-bexpr) is refused", () => {
    expect(outcome("AllocatedResources.TaskLifecycles.web is empty", ALLOC_RESOURCES)).toMatch(/^error: /);
  });

  test("== over one finds no primitive comparison", () => {
    expect(outcome('AllocatedResources.TaskLifecycles.web == "x"', ALLOC_RESOURCES)).toBe("error: unable to find suitable primitive comparison function for matching");
  });

  test("a present value next to it is read as usual", () => {
    expect(outcome("AllocatedResources.TaskLifecycles.sidecar.Sidecar == true", ALLOC_RESOURCES)).toBe(true);
  });
});

describe("fields the name tables would misread", () => {
  const JOB = {
    ID: "render",
    Payload: null,
    ParameterizedJob: { Payload: "optional", MetaRequired: null },
    TaskGroups: [{ Services: [{ Name: "web", CanaryMeta: null, Meta: null }] }],
  };

  test("ParameterizedJob.Payload is a string, the job's Payload a []byte", () => {
    expect(outcome('"opt" in ParameterizedJob.Payload', JOB)).toBe(true);
    expect(outcome('ParameterizedJob.Payload == "optional"', JOB)).toBe(true);
    expect(outcome('"opt" in Payload', JOB)).toBe('error: error getting match value in expression: strconv.ParseUint: parsing "opt": invalid syntax');
  });

  test("a nil CanaryMeta is a nil map: a missing key is not present", () => {
    expect(outcome('TaskGroups.0.Services.0.CanaryMeta.k == "v"', JOB)).toBe(false);
    expect(outcome('TaskGroups.0.Services.0.CanaryMeta.k not matches "v"', JOB)).toBe(true);
  });
});
