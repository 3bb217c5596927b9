/**
 * `POST|PUT /v1/jobs/parse`: Nomad HCL2 job files (jobspec2) turned into the
 * api.Job JSON as Nomad 1.9 answers it, through HTTP. Expected values come
 * from Nomad's jobspec2 behaviour (shared/reference/hcl-jobspec-nomad.md):
 * labels as IDs and names, durations in nanoseconds, free-form `config`,
 * ports split by `static`, vault/template defaults, variables, locals,
 * functions, dynamic blocks, runtime `${…}` left alone, and the 400 texts.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call, type Answer } from "../support/call.js";

type Json = Record<string, any>;

let shared: Standin | undefined;
async function emulator(): Promise<Standin> {
  shared ??= await createStandin();
  return shared;
}

async function parse(hcl: string, extra: Json = {}, emu?: Standin): Promise<Answer> {
  return call((emu ?? (await emulator())).scheduler, "POST", "/v1/jobs/parse", { JobHCL: hcl, ...extra });
}

async function parsed(hcl: string, extra: Json = {}): Promise<Json> {
  const res = await parse(hcl, extra);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function failure(hcl: string, extra: Json = {}): Promise<string> {
  const res = await parse(hcl, extra);
  expect(res.status, res.text).toBe(400);
  expect(res.text.startsWith("Failed to parse job: "), res.text).toBe(true);
  return res.text.slice("Failed to parse job: ".length);
}

const group = (job: Json, i = 0): Json => job.TaskGroups[i];
const task = (job: Json, g = 0, t = 0): Json => job.TaskGroups[g].Tasks[t];

describe("POST /v1/jobs/parse: the api.Job Nomad's parser builds", () => {
  it('job "foo" {} is ID and Name from the label and every other field null or zero', async () => {
    const job = await parsed('job "foo" {}');
    expect(job).toEqual({
      Affinities: null,
      AllAtOnce: null,
      Constraints: null,
      ConsulNamespace: null,
      ConsulToken: null,
      CreateIndex: null,
      Datacenters: null,
      DispatchIdempotencyToken: null,
      Dispatched: false,
      ID: "foo",
      JobModifyIndex: null,
      Meta: null,
      Migrate: null,
      ModifyIndex: null,
      Multiregion: null,
      Name: "foo",
      Namespace: null,
      NodePool: null,
      NomadTokenID: null,
      ParameterizedJob: null,
      ParentID: null,
      Payload: null,
      Periodic: null,
      Priority: null,
      Region: null,
      Reschedule: null,
      Spreads: null,
      Stable: null,
      Status: null,
      StatusDescription: null,
      Stop: null,
      SubmitTime: null,
      TaskGroups: null,
      Type: null,
      UI: null,
      Update: null,
      VaultNamespace: null,
      VaultToken: null,
      Version: null,
      VersionTag: null,
    });
  });

  it("PUT answers too, keys match case-insensitively, HCLv1 is ignored (Nomad 1.9 has no HCL1 parser); GET is 405", async () => {
    const emu = await emulator();
    const put = await call(emu.scheduler, "PUT", "/v1/jobs/parse", { jobhcl: 'job "a" {}', HCLv1: true });
    expect(put.status, put.text).toBe(200);
    expect(put.body.ID).toBe("a");
    const get = await call(emu.scheduler, "GET", "/v1/jobs/parse");
    expect(get.status).toBe(405);
  });

  it("an HCL1-only job file fails with HCL2's diagnostics even with HCLv1: true", async () => {
    const text = await failure('job "x" {\n  group "g" {\n    network {\n      reserved_ports = [8080]\n    }\n  }\n}\n', { HCLv1: true });
    expect(text).toBe('input.hcl:4,7-21: Unsupported argument; An argument named "reserved_ports" is not expected here. Did you mean to define a block of type "reserved_ports"?');
  });

  it("job arguments, id/name overrides, meta in block and attribute form", async () => {
    const job = await parsed(`
job "default" {
  id          = "job1"
  name        = "My Job"
  region      = "eu"
  namespace   = "team"
  type        = "batch"
  priority    = 52
  all_at_once = true
  datacenters = ["us2", "eu1"]
  node_pool   = "gpu"
  meta {
    foo = "bar"
    n   = 10
  }
}`);
    expect(job).toMatchObject({
      ID: "job1",
      Name: "My Job",
      Region: "eu",
      Namespace: "team",
      Type: "batch",
      Priority: 52,
      AllAtOnce: true,
      Datacenters: ["us2", "eu1"],
      NodePool: "gpu",
    });
    expect(job.Meta).toEqual({ foo: "bar", n: "10" });
    const attrForm = await parsed('job "x" {\n  meta = { "key.dot" = "v", other = 1 }\n}');
    expect(attrForm.Meta).toEqual({ "key.dot": "v", other: "1" });
  });

  it("constraint and affinity, with the operator shorthands", async () => {
    const job = await parsed(`
job "x" {
  constraint {
    attribute = "\${attr.kernel.name}"
    value     = "linux"
  }
  constraint {
    attribute = "\${attr.kernel.version}"
    version   = ">= 3.14"
  }
  constraint {
    attribute = "\${meta.tags}"
    regexp    = "[a-z]+"
  }
  constraint {
    distinct_hosts = true
  }
  constraint {
    distinct_hosts = false
  }
  constraint {
    distinct_property = "\${meta.rack}"
    value             = "2"
  }
  affinity {
    attribute    = "\${node.datacenter}"
    set_contains = "dc1,dc2"
    weight       = -50
  }
  affinity {
    attribute = "\${meta.x}"
    value     = "y"
  }
}`);
    expect(job.Constraints).toEqual([
      { LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" },
      { LTarget: "${attr.kernel.version}", RTarget: ">= 3.14", Operand: "version" },
      { LTarget: "${meta.tags}", RTarget: "[a-z]+", Operand: "regexp" },
      // decodeConstraint writes the bool itself as RTarget (fmt.Sprint), false included.
      { LTarget: "", RTarget: "true", Operand: "distinct_hosts" },
      { LTarget: "", RTarget: "false", Operand: "distinct_hosts" },
      { LTarget: "${meta.rack}", RTarget: "2", Operand: "distinct_property" },
    ]);
    expect(job.Affinities).toEqual([
      { LTarget: "${node.datacenter}", RTarget: "dc1,dc2", Operand: "set_contains", Weight: -50 },
      { LTarget: "${meta.x}", RTarget: "y", Operand: "=", Weight: null },
    ]);
  });

  it("update, migrate, reschedule, restart, spread: durations as nanoseconds, unset pointers null, spread targets in file order", async () => {
    const job = await parsed(`
job "x" {
  update {
    stagger           = "60s"
    max_parallel      = 2
    health_check      = "checks"
    min_healthy_time  = "10s"
    healthy_deadline  = "1m30s"
    progress_deadline = "10m"
    auto_revert       = true
    canary            = 1
  }
  reschedule {
    attempts       = 15
    interval       = "30m"
    delay          = "30s"
    delay_function = "exponential"
    max_delay      = "1h"
    unlimited      = false
  }
  migrate {
    max_parallel = 3
  }
  spread {
    attribute = "\${node.datacenter}"
    weight    = 100
    target "us-west1" {
      percent = 60
    }
    target "us-east1" {
      percent = 40
    }
  }
  group "g" {
    restart {
      attempts = 3
      interval = "5m"
      delay    = "25s"
      mode     = "delay"
    }
    shutdown_delay = "6s"
  }
}`);
    expect(job.Update).toEqual({
      Stagger: 60e9,
      MaxParallel: 2,
      HealthCheck: "checks",
      MinHealthyTime: 10e9,
      HealthyDeadline: 90e9,
      ProgressDeadline: 600e9,
      Canary: 1,
      AutoRevert: true,
      AutoPromote: null,
    });
    expect(job.Reschedule).toEqual({ Attempts: 15, Interval: 1800e9, Delay: 30e9, DelayFunction: "exponential", MaxDelay: 3600e9, Unlimited: false });
    expect(job.Migrate).toEqual({ MaxParallel: 3, HealthCheck: null, MinHealthyTime: null, HealthyDeadline: null });
    expect(job.Spreads).toEqual([
      {
        Attribute: "${node.datacenter}",
        Weight: 100,
        SpreadTarget: [
          { Value: "us-west1", Percent: 60 },
          { Value: "us-east1", Percent: 40 },
        ],
      },
    ]);
    expect(group(job).RestartPolicy).toEqual({ Interval: 300e9, Attempts: 3, Delay: 25e9, Mode: "delay", RenderTemplates: null });
    expect(group(job).ShutdownDelay).toBe(6e9);
  });

  it("groups and tasks in file order; job-level tasks become groups of their own, first; ports split by static", async () => {
    const job = await parsed(`
job "x" {
  group "zeta" {
    count = 3
    network {
      mode = "bridge"
      port "http" {
        to = 8080
      }
      port "db" {
        static = 5432
      }
      port "admin" {}
    }
    task "web" {
      driver = "docker"
    }
    task "api" {
      driver = "exec"
    }
  }
  group "alpha" {
    task "only" {
      driver = "raw_exec"
    }
  }
  task "outside" {
    driver = "docker"
  }
}`);
    expect(job.TaskGroups.map((g: Json) => g.Name)).toEqual(["outside", "zeta", "alpha"]);
    expect(group(job, 0).Tasks.map((t: Json) => t.Name)).toEqual(["outside"]);
    expect(group(job, 0).Count).toBeNull();
    expect(group(job, 1).Tasks.map((t: Json) => t.Name)).toEqual(["web", "api"]);
    expect(group(job, 1).Count).toBe(3);
    const net = group(job, 1).Networks[0];
    expect(net.Mode).toBe("bridge");
    expect(net.ReservedPorts).toEqual([{ Label: "db", Value: 5432, To: 0, HostNetwork: "", IgnoreCollision: false }]);
    expect(net.DynamicPorts).toEqual([
      { Label: "http", Value: 0, To: 8080, HostNetwork: "", IgnoreCollision: false },
      { Label: "admin", Value: 0, To: 0, HostNetwork: "", IgnoreCollision: false },
    ]);
    expect(net.MBits).toBeNull();
  });

  it("task blocks: config free-form, env, resources with device, logs, artifact, template, lifecycle, volume and volume_mount, services and checks", async () => {
    const job = await parsed(`
job "x" {
  group "g" {
    volume "data" {
      type      = "host"
      source    = "shared"
      read_only = true
    }
    ephemeral_disk {
      size   = 500
      sticky = true
    }
    service {
      name = "web"
      port = "http"
      tags = ["a", "b"]
      check {
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "2s"
        header {
          Authorization = ["Basic x"]
        }
        check_restart {
          limit = 3
          grace = "90s"
        }
      }
      meta {
        version = 2
      }
    }
    task "t" {
      driver = "docker"
      user   = "nobody"
      config {
        image   = "redis:7"
        args    = ["-c", "echo \${NOMAD_ALLOC_DIR}"]
        port_map {
          db = 6379
        }
        labeled_block "l1" {
          k = "b"
        }
        sysctl = { "net.core.somaxconn" = "16384" }
        mounts = [{ type = "tmpfs", tmpfs_options = { size = 1 } }]
        ratio  = 0.5
      }
      env {
        PORT = "\${NOMAD_PORT_http}"
        N    = 3
      }
      resources {
        cpu    = 500
        memory = 256
        device "nvidia/gpu" {
          count = 2
          constraint {
            attribute = "\${device.attr.memory}"
            operator  = ">="
            value     = "2 GiB"
          }
        }
      }
      logs {
        max_files     = 5
        max_file_size = 15
      }
      artifact {
        source      = "https://example.com/file.tgz"
        destination = "local/x"
        options {
          checksum = "md5:abc"
        }
      }
      template {
        data        = "key={{ key \\"x\\" }}"
        destination = "local/app.env"
        env         = true
      }
      lifecycle {
        hook    = "prestart"
        sidecar = false
      }
      volume_mount {
        volume      = "data"
        destination = "/srv"
      }
      kill_timeout   = "20s"
      shutdown_delay = "3s"
      kill_signal    = "SIGINT"
      leader         = true
    }
  }
}`);
    const g = group(job);
    expect(g.Volumes).toEqual({ data: { Name: "data", Type: "host", Source: "shared", ReadOnly: true, AccessMode: "", AttachmentMode: "", MountOptions: null, PerAlloc: false } });
    expect(g.EphemeralDisk).toEqual({ Sticky: true, Migrate: null, SizeMB: 500 });
    const service = g.Services[0];
    expect(service).toMatchObject({ Name: "web", PortLabel: "http", Tags: ["a", "b"], Meta: { version: "2" }, AddressMode: "", Provider: "" });
    expect(service.Checks[0]).toMatchObject({
      Type: "http",
      Path: "/health",
      Interval: 10e9,
      Timeout: 2e9,
      Header: { Authorization: ["Basic x"] },
      CheckRestart: { Limit: 3, Grace: 90e9, IgnoreWarnings: false },
    });
    const t = task(job);
    expect(t.Config).toEqual({
      args: ["-c", "echo ${NOMAD_ALLOC_DIR}"],
      image: "redis:7",
      labeled_block: [{ l1: [{ k: "b" }] }],
      mounts: [{ tmpfs_options: { size: 1 }, type: "tmpfs" }],
      port_map: [{ db: 6379 }],
      ratio: 0.5,
      sysctl: [{ "net.core.somaxconn": "16384" }],
    });
    expect(t.Env).toEqual({ N: "3", PORT: "${NOMAD_PORT_http}" });
    expect(t.Resources).toEqual({
      CPU: 500,
      Cores: null,
      MemoryMB: 256,
      MemoryMaxMB: null,
      DiskMB: null,
      Networks: null,
      Devices: [{ Name: "nvidia/gpu", Count: 2, Constraints: [{ LTarget: "${device.attr.memory}", RTarget: "2 GiB", Operand: ">=" }], Affinities: null }],
      NUMA: null,
      SecretsMB: null,
      IOPS: null,
    });
    expect(t.LogConfig).toEqual({ MaxFiles: 5, MaxFileSizeMB: 15, Enabled: null, Disabled: null });
    expect(t.Artifacts).toEqual([
      {
        GetterSource: "https://example.com/file.tgz",
        GetterOptions: { checksum: "md5:abc" },
        GetterHeaders: null,
        GetterMode: null,
        GetterInsecure: null,
        RelativeDest: "local/x",
        Chown: false,
      },
    ]);
    // jobspec2 fills ChangeMode, Perms, Splay and ErrMissingKey itself; the rest waits for Canonicalize.
    expect(t.Templates).toEqual([
      {
        SourcePath: null,
        DestPath: "local/app.env",
        EmbeddedTmpl: 'key={{ key "x" }}',
        ChangeMode: "restart",
        ChangeScript: null,
        ChangeSignal: null,
        Splay: 5e9,
        Perms: "0644",
        Uid: null,
        Gid: null,
        LeftDelim: null,
        RightDelim: null,
        Envvars: true,
        VaultGrace: null,
        Wait: null,
        ErrMissingKey: false,
      },
    ]);
    expect(t.Lifecycle).toEqual({ Hook: "prestart", Sidecar: false });
    expect(t.VolumeMounts).toEqual([{ Volume: "data", Destination: "/srv", ReadOnly: null, PropagationMode: null, SELinuxLabel: null }]);
    expect(t).toMatchObject({ Driver: "docker", User: "nobody", KillTimeout: 20e9, ShutdownDelay: 3e9, KillSignal: "SIGINT", Leader: true });
  });

  it("vault defaults and inheritance, periodic spec type, parameterized, identities, task and group scaling", async () => {
    const job = await parsed(`
job "x" {
  vault {
    policies = ["job"]
  }
  periodic {
    cron             = "*/5 * * *"
    prohibit_overlap = true
  }
  parameterized {
    payload       = "required"
    meta_required = ["foo"]
  }
  group "g" {
    scaling {
      min = 1
      max = 5
      policy {
        cooldown = "1m"
        check "cpu" {
          query = "q"
        }
      }
    }
    vault {
      policies = ["group"]
      change_mode = "noop"
    }
    task "inherits" {
      driver = "docker"
      identity {
        env  = true
        file = true
      }
      identity {
        name = "consul"
        aud  = ["consul.io"]
        ttl  = "1h"
      }
      scaling "cpu" {
        enabled = true
        min     = 50
        max     = 1000
        policy {
          test = "cpu"
        }
      }
    }
    task "own" {
      driver = "docker"
      vault {
        policies = ["own"]
      }
      dispatch_payload {
        file = "input.txt"
      }
    }
  }
}`);
    const g = group(job);
    expect(task(job, 0, 0).Vault).toEqual({
      Policies: ["group"],
      Role: "",
      Namespace: null,
      Cluster: "",
      Env: true,
      DisableFile: false,
      ChangeMode: "noop",
      ChangeSignal: null,
      AllowTokenExpiration: null,
    });
    expect(task(job, 0, 1).Vault).toMatchObject({ Policies: ["own"], Env: true, DisableFile: false, ChangeMode: "restart" });
    expect(job.Periodic).toEqual({ Enabled: null, Spec: "*/5 * * *", Specs: null, SpecType: "cron", ProhibitOverlap: true, TimeZone: null });
    expect(job.ParameterizedJob).toEqual({ Payload: "required", MetaRequired: ["foo"], MetaOptional: null });
    expect(task(job, 0, 1).DispatchPayload).toEqual({ File: "input.txt" });
    expect(task(job).Identity).toMatchObject({ Name: "", Env: true, File: true });
    expect(task(job).Identities).toEqual([
      { Name: "consul", Audience: ["consul.io"], ChangeMode: "", ChangeSignal: "", Env: false, File: false, Filepath: "", ServiceName: "", TTL: 3600e9 },
    ]);
    expect(task(job).ScalingPolicies).toEqual([
      { ID: "", Namespace: "", Type: "vertical_cpu", Target: null, Min: 50, Max: 1000, Policy: { test: "cpu" }, Enabled: true, CreateIndex: 0, ModifyIndex: 0 },
    ]);
    expect(g.Scaling).toEqual({
      ID: "",
      Namespace: "",
      Type: "horizontal",
      Target: null,
      Min: 1,
      Max: 5,
      Policy: { check: [{ cpu: [{ query: "q" }] }], cooldown: "1m" },
      Enabled: null,
      CreateIndex: 0,
      ModifyIndex: 0,
    });
  });
});

describe("POST /v1/jobs/parse: HCL2 language features", () => {
  it("variables: defaults, types, the Variables text, validation, unset", async () => {
    const hcl = `
variable "region" {
  type    = string
  default = "eu"
}
variable "count" {
  type    = number
  default = 2
}
variable "dcs" {
  type    = list(string)
  default = ["dc1"]
}
variables {
  team = "core"
}
variable "image" {
  type = string
  validation {
    condition     = strlen(var.image) > 4
    error_message = "The image name is too short."
  }
}
job "x" {
  region      = var.region
  datacenters = var.dcs
  meta {
    team = var.team
  }
  group "g" {
    count = var.count
    task "t" {
      driver = "docker"
      config {
        image = var.image
      }
    }
  }
}`;
    const job = await parsed(hcl, { Variables: 'image = "redis:7"\ncount = "5"\nunknown = 1' });
    expect(job.Region).toBe("eu");
    expect(job.Datacenters).toEqual(["dc1"]);
    expect(job.Meta).toEqual({ team: "core" });
    expect(group(job).Count).toBe(5);
    expect(task(job).Config).toEqual({ image: "redis:7" });

    expect(await failure(hcl)).toBe(
      '<nil>: Unset variable "image"; A used variable must be set or have a default value; see https://developer.hashicorp.com/nomad/docs/job-specification/hcl2/variables for details.',
    );
    expect(await failure(hcl, { Variables: 'image = "r"' })).toBe(
      "input.hcl:1,9-12: Invalid value for varfile variable; The image name is too short.\n\nThis was checked by the validation rule at input.hcl:19,3-13.",
    );
    expect(await failure(hcl, { Variables: 'image = "redis:7"\ncount = "many"' })).toBe(
      "input.hcl:2,9-15: Invalid value for variable; The value for count is not compatible with the variable's type constraint: a number is required.",
    );
    expect(await failure(hcl, { Variables: "image = " })).toBe(
      "unable to parse var content: input.hcl:1,9-9: Invalid expression; Expected the start of an expression, but found an invalid expression token.",
    );
    expect(await failure(hcl, { Variables: 'image = upper("x")' })).toBe("input.hcl:1,9-19: Function calls not allowed; Functions may not be called here.");
  });

  it("a default that does not fit the type, and a reference to an undeclared variable", async () => {
    expect(await failure('variable "n" {\n  type    = number\n  default = "abc"\n}\njob "x" {}')).toBe(
      "input.hcl:3,13-18: Invalid default value for variable; This default value is not compatible with the variable's type constraint: a number is required.",
    );
    expect(await failure('job "x" {\n  region = var.nope\n}')).toBe('input.hcl:2,15-20: Unsupported attribute; This object does not have an attribute named "nope".');
  });

  it("locals in any order, templates, for expressions, conditionals, splats, heredocs and directives", async () => {
    const job = await parsed(`
locals {
  region = "\${local.base}-1"
  base   = upper(var.env)
}
variable "env" {
  default = "eu"
}
job "x" {
  region      = local.region
  datacenters = [for s in ["dc1", "dc2"] : upper(s) if s != "dc3"]
  type        = var.env == "eu" ? "batch" : "service"
  meta = {
    ports = join(",", [for p in [{ n = 80 }, { n = 443 }] : p.n])
    names = join(",", [{ name = "a" }, { name = "b" }][*].name)
    single = jsonencode({ name = "x" }[*].name)
    count = length({ a = 1, b = 2 })
    math  = 7 % 4 + 2 * 3
  }
  group "g" {
    task "t" {
      driver = "docker"
      template {
        destination = "local/x"
        data        = <<-EOT
          region=\${local.region}
          %{~ for i in [1, 2] }
          n\${i}
          %{~ endfor }
          runtime={{ env "NOMAD_ALLOC_ID" }}
          EOT
      }
    }
  }
}`);
    expect(job.Region).toBe("EU-1");
    expect(job.Datacenters).toEqual(["DC1", "DC2"]);
    expect(job.Type).toBe("batch");
    expect(job.Meta).toEqual({ count: "2", math: "9", names: "a,b", ports: "80,443", single: '["x"]' });
    // `%{~` trims only the indentation token before it on its own line, which leaves that line starting with an
    // empty literal: <<- then finds zero common indentation and strips nothing (parseTemplateParts, then
    // flushHeredocTemplateParts).
    expect(task(job).Templates[0].EmbeddedTmpl).toBe('          region=EU-1\n\n          n1\n\n          n2\n\n          runtime={{ env "NOMAD_ALLOC_ID" }}\n');
  });

  it("strings: escapes, nested quotes in interpolations, if/else directives, plain heredocs, comments, one-line blocks", async () => {
    const job = await parsed(`
# a comment
// another
/* and a
   block comment */
job "x" {
  meta {
    esc    = "tab\\there \\"quoted\\" back\\\\slash \\u00e9 $\${literal} %%{literal}"
    nested = "\${"inner \${upper("q")}"}"
    cond   = "%{ if 1 + 2 * 3 == 7 }seven%{ else }other%{ endif }"
    strip  = "a   %{~ if true ~}   b   %{~ endif ~}   c"
    colon  = jsonencode({ "k1" : 1, k2 = [true, null] })
    neg    = -5 + 2
  }
  constraint { distinct_hosts = true }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        script  = <<EOF
  keep \${"indent"}
EOF
      }
    }
  }
}`);
    expect(job.Meta).toEqual({
      colon: '{"k1":1,"k2":[true,null]}',
      cond: "seven",
      esc: 'tab\there "quoted" back\\slash é ${literal} %{literal}',
      neg: "-3",
      nested: "inner Q",
      strip: "abc",
    });
    expect(job.Constraints).toEqual([{ LTarget: "", RTarget: "true", Operand: "distinct_hosts" }]);
    expect(task(job).Config).toEqual({ command: "/bin/sh", script: "  keep indent\n" });
  });

  it("standard functions: strings, collections, encodings, hashes, networks, dates", async () => {
    const job = await parsed(`
job "x" {
  meta = {
    format    = format("%s-%03d", "web", 7)
    replace   = replace("a-b-c", "-", "_")
    split     = jsonencode(split(",", "a,b"))
    trim      = trimspace("  x  ")
    title     = title("hello world")
    substr    = substr("hello", 1, 3)
    lookup    = lookup({ a = "1" }, "b", "default")
    merge     = jsonencode(merge({ a = 1 }, { b = 2 }))
    keys      = jsonencode(keys({ b = 1, a = 2 }))
    contains  = contains(["a"], "a")
    distinct  = jsonencode(distinct([1, 1, 2]))
    flatten   = jsonencode(flatten([[1], [2, [3]]]))
    range     = jsonencode(range(3))
    zipmap    = jsonencode(zipmap(["a"], [1]))
    coalesce  = coalesce("", "x")
    b64       = base64encode("hi")
    unb64     = base64decode("aGk=")
    jsondec   = jsondecode("{\\"a\\":[1]}").a[0]
    url       = urlencode("a b&c")
    sha256    = sha256("abc")
    md5       = md5("abc")
    uuidv5    = uuidv5("dns", "example.com")
    cidr      = cidrsubnet("10.0.0.0/16", 8, 2)
    host      = cidrhost("10.0.0.0/24", 5)
    date      = formatdate("YYYY-MM-DD hh:mm", "2024-03-01T10:20:30Z")
    timeadd   = timeadd("2024-03-01T10:20:30Z", "1h30m")
    can       = can(var.nothing)
    try       = try(var.nothing, "fallback")
    max       = max(1, 5, 3)
    parseint  = parseint("ff", 16)
    convert   = convert(5, string)
  }
}`);
    expect(job.Meta).toEqual({
      b64: "aGk=",
      can: "false",
      cidr: "10.0.2.0/24",
      coalesce: "", // cty's coalesce skips null only (Terraform's also skips "")
      contains: "true",
      convert: "5",
      date: "2024-03-01 10:20",
      distinct: "[1,2]",
      flatten: "[1,2,3]",
      format: "web-007",
      host: "10.0.0.5",
      jsondec: "1",
      keys: '["a","b"]',
      lookup: "default",
      max: "5",
      md5: "900150983cd24fb0d6963f7d28e17f72",
      merge: '{"a":1,"b":2}',
      parseint: "255",
      range: "[0,1,2]",
      replace: "a_b_c",
      sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
      split: '["a","b"]',
      substr: "ell",
      timeadd: "2024-03-01T11:50:30Z",
      title: "Hello World",
      trim: "x",
      try: "fallback",
      unb64: "hi",
      url: "a+b%26c",
      uuidv5: "cfbff0d1-9375-5685-968c-48ce8b15ae17",
      zipmap: '{"a":1}',
    });
  });

  it("uuidv4() comes from the seeded generator: the same seed gives the same UUIDs, another seed others", async () => {
    const hcl = 'job "x" {\n  meta {\n    a = uuidv4()\n    b = uuidv4()\n  }\n}';
    const first = await createStandin({ seed: 42 });
    const again = await createStandin({ seed: 42 });
    const other = await createStandin({ seed: 43 });
    const metaOf = async (emu: Standin) => (await parse(hcl, {}, emu)).body.Meta as { a: string; b: string };
    const [m1, m2, m3] = [await metaOf(first), await metaOf(again), await metaOf(other)];
    expect(m1.a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(m1.a).not.toBe(m1.b);
    expect(m2).toEqual(m1);
    expect(m3.a).not.toBe(m1.a);
    for (const emu of [first, again, other]) await emu.close();
  });

  it("functions Nomad does not have, and filesystem functions, fail as Nomad fails them", async () => {
    expect(await failure('job "x" {\n  region = timestamp()\n}')).toBe('input.hcl:2,12-21: Call to unknown function; There is no function named "timestamp".');
    expect(await failure('job "x" {\n  region = uper("x")\n}')).toBe('input.hcl:2,12-16: Call to unknown function; There is no function named "uper". Did you mean "upper"?');
    expect(await failure('job "x" {\n  region = file("/etc/hosts")\n}')).toBe(
      'input.hcl:2,12-17: Error in function call; Call to function "file" failed: filesystem function disabled.',
    );
  });

  it("dynamic blocks: groups with labels from for_each, a custom iterator, nested dynamic ports", async () => {
    const job = await parsed(`
locals {
  groups = [{ name = "groupA", idx = 1 }, { name = "groupB", idx = 2 }]
}
job "x" {
  dynamic "group" {
    for_each = local.groups
    labels   = [group.value.name]
    content {
      count = group.value.idx
      meta {
        VERSION = group.value.idx
      }
      network {
        dynamic "port" {
          for_each = ["http", "grpc"]
          iterator = p
          labels   = [p.value]
          content {
            to = 8000 + p.key
          }
        }
      }
      task "t" {
        driver = "docker"
        config {
          command = group.value.name
        }
        env {
          ID = format("id:%s", group.value.idx)
        }
      }
    }
  }
}`);
    expect(job.TaskGroups.map((g: Json) => [g.Name, g.Count, g.Meta])).toEqual([
      ["groupA", 1, { VERSION: "1" }],
      ["groupB", 2, { VERSION: "2" }],
    ]);
    expect(group(job, 1).Networks[0].DynamicPorts.map((p: Json) => [p.Label, p.To])).toEqual([
      ["http", 8000],
      ["grpc", 8001],
    ]);
    expect(task(job, 1).Config).toEqual({ command: "groupB" });
    expect(task(job, 0).Env).toEqual({ ID: "id:1" });
  });

  it("Nomad's runtime references stay as written: ${NOMAD_*}, attr/node/meta roots, bare references and $${} escapes", async () => {
    const job = await parsed(`
variable "v" {
  default = "set"
}
job "x" {
  region = meta.mytest
  meta {
    a = "\${NOMAD_META_team}-\${var.v}"
    b = "with spaces \${   attr.kernel.name  }"
    c = "$\${var.v}"
    d = "\${env["BLAH"]}"
  }
}`);
    expect(job.Region).toBe("${meta.mytest}");
    expect(job.Meta).toEqual({ a: "${NOMAD_META_team}-set", b: "with spaces ${   attr.kernel.name  }", c: "${var.v}", d: '${env["BLAH"]}' });
  });
});

describe("POST /v1/jobs/parse: Canonicalize", () => {
  const hcl = `
job "web" {
  group "g" {
    task "t" {
      driver = "docker"
      template {
        data        = "x"
        destination = "local/x"
        change_mode = "signal"
      }
      artifact {
        source = "https://example.com/app.tar.gz"
        mode   = "file"
      }
      service {
        port = "http"
        check {
          type     = "tcp"
          interval = "10s"
          timeout  = "2s"
        }
        check_restart {
          limit = 2
        }
      }
    }
  }
}`;

  it("false (the default) leaves what the file does not set null", async () => {
    const job = await parsed(hcl);
    expect(job).toMatchObject({ Region: null, Namespace: null, Type: null, Priority: null, Update: null });
    expect(group(job)).toMatchObject({ Count: null, RestartPolicy: null, EphemeralDisk: null, ReschedulePolicy: null, Migrate: null, Consul: null });
    expect(task(job)).toMatchObject({ Resources: null, KillTimeout: null, LogConfig: null, RestartPolicy: null });
    expect(task(job).Services[0].Name).toBe("");
  });

  it("true applies the Go client's api.Job.Canonicalize defaults", async () => {
    const job = await parsed(hcl, { Canonicalize: true });
    expect(job).toMatchObject({
      ID: "web",
      Name: "web",
      Region: "global",
      Namespace: "default",
      Type: "service",
      Priority: 50,
      Stop: false,
      AllAtOnce: false,
      NodePool: "",
      ParentID: "",
      Version: 0,
    });
    expect(job.Datacenters).toBeNull();
    expect(job.Update).toEqual({
      Stagger: 30e9,
      MaxParallel: 1,
      HealthCheck: "checks",
      MinHealthyTime: 10e9,
      HealthyDeadline: 300e9,
      ProgressDeadline: 600e9,
      Canary: 0,
      AutoRevert: false,
      AutoPromote: false,
    });
    const g = group(job);
    expect(g.Count).toBe(1);
    expect(g.EphemeralDisk).toEqual({ Sticky: false, Migrate: false, SizeMB: 300 });
    expect(g.RestartPolicy).toEqual({ Interval: 1800e9, Attempts: 2, Delay: 15e9, Mode: "fail", RenderTemplates: false });
    expect(g.ReschedulePolicy).toEqual({ Attempts: 0, Interval: 0, Delay: 30e9, DelayFunction: "exponential", MaxDelay: 3600e9, Unlimited: true });
    expect(g.Migrate).toEqual({ MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10e9, HealthyDeadline: 300e9 });
    expect(g.Update).toEqual(job.Update);
    expect(g.Consul).toEqual({ Namespace: "", Cluster: "default", Partition: "" });
    const t = task(job);
    expect(t.Resources).toMatchObject({ CPU: 100, Cores: 0, MemoryMB: 300 });
    expect(t.KillTimeout).toBe(5e9);
    expect(t.LogConfig).toEqual({ MaxFiles: 10, MaxFileSizeMB: 10, Enabled: null, Disabled: false });
    expect(t.RestartPolicy).toEqual(g.RestartPolicy);
    expect(t.Templates[0]).toMatchObject({ ChangeMode: "signal", ChangeSignal: "SIGHUP", LeftDelim: "{{", RightDelim: "}}", Envvars: false, VaultGrace: 0, SourcePath: "" });
    expect(t.Artifacts[0]).toMatchObject({ GetterMode: "file", GetterInsecure: false, RelativeDest: "local/app.tar.gz" });
    const service = t.Services[0];
    expect(service).toMatchObject({ Name: "web-g-t", AddressMode: "auto", OnUpdate: "require_healthy", Provider: "consul", Cluster: "default" });
    expect(service.Checks[0].CheckRestart).toEqual({ Limit: 2, Grace: 1e9, IgnoreWarnings: false });
    expect(service.Checks[0].OnUpdate).toBe("require_healthy");
  });

  it("what parse returns registers through PUT /v1/jobs", async () => {
    const emu = await createStandin();
    const job = (
      await parse(
        'job "web" {\n  datacenters = ["dc1"]\n  group "g" {\n    task "t" {\n      driver = "docker"\n      config {\n        image = "nginx"\n      }\n    }\n  }\n}',
        {},
        emu,
      )
    ).body;
    const res = await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job });
    expect(res.status, res.text).toBe(200);
    const stored = await call(emu.scheduler, "GET", "/v1/job/web");
    expect(stored.body.TaskGroups[0].Tasks[0].Config).toEqual({ image: "nginx" });
    await emu.close();
  });
});

describe("POST /v1/jobs/parse: errors in Nomad's words", () => {
  it("request problems: empty spec, missing body, wrong JSON type", async () => {
    const emu = await emulator();
    const empty = await call(emu.scheduler, "POST", "/v1/jobs/parse", { JobHCL: "" });
    expect([empty.status, empty.text]).toEqual([400, "Job spec is empty"]);
    const none = await call(emu.scheduler, "POST", "/v1/jobs/parse");
    expect([none.status, none.text]).toEqual([400, "Request body is empty"]);
    const wrong = await call(emu.scheduler, "POST", "/v1/jobs/parse", { JobHCL: 'job "x" {}', Canonicalize: "yes" });
    expect([wrong.status, wrong.text]).toEqual([400, "json: cannot unmarshal string into Go struct field JobsParseRequest.Canonicalize of type bool"]);
  });

  it.each([
    [
      "syntax: block content on the next line",
      'job "x"\n{\n}',
      'input.hcl:1,8-2,1: Invalid block definition; A block definition must have block content delimited by "{" and "}", starting on the same line as the block header.',
    ],
    [
      "syntax: invalid{hcl",
      "invalid{hcl",
      'input.hcl:1,9-12: Argument or block definition required; An argument or block definition is required here. To set an argument, use the equals sign "=" to introduce the argument value.',
    ],
    [
      "syntax: unclosed block",
      'job "x" {\n  group "g" {\n}',
      "input.hcl:1,9-10: Unclosed configuration block; There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
    ],
    ["syntax: missing value", 'job "x" {\n  region =\n}', "input.hcl:2,11-3,1: Invalid expression; Expected the start of an expression, but found an invalid expression token."],
    [
      "syntax: comma between arguments",
      'job "x" {\n  region = "a", type = "b"\n}',
      "input.hcl:2,15-16: Unexpected comma after argument; Argument definitions must be separated by newlines, not commas. An argument definition must end with a newline.",
    ],
    [
      "unknown argument, with a suggestion",
      'job "x" {\n  group "g" {\n    cont = 1\n  }\n}',
      'input.hcl:3,5-9: Unsupported argument; An argument named "cont" is not expected here. Did you mean "count"?',
    ],
    ["unknown block type", 'job "x" {\n  grop "g" {}\n}', 'input.hcl:2,3-7: Unsupported block type; Blocks of type "grop" are not expected here. Did you mean "group"?'],
    [
      "an argument written as a block",
      'job "x" {\n  region {}\n}',
      'input.hcl:2,3-9: Unsupported block type; Blocks of type "region" are not expected here. Did you mean to define argument "region"? If so, use the equals sign to assign it a value.',
    ],
    [
      "a second single block",
      'job "x" {\n  update {}\n  update {}\n}',
      "input.hcl:3,3-9: Duplicate update block; Only one update block is allowed. Another was defined at input.hcl:2,3-9.",
    ],
    [
      "a label where none is expected",
      'job "x" {\n  group "g" {\n    service "s" {}\n  }\n}',
      "input.hcl:3,13-16: Extraneous label for service; No labels are expected for service blocks.",
    ],
    ["a group without its name", 'job "x" {\n  group {}\n}', "input.hcl:2,9-10: Missing name for group; All group blocks must have 1 labels (name)."],
    [
      "a bad duration",
      'job "x" {\n  group "g" {\n    shutdown_delay = "1d"\n  }\n}',
      'input.hcl:3,23-25: Unsuitable value type; Unsuitable duration value: time: unknown unit "d" in duration "1d"',
    ],
    ["a count that is not a number", 'job "x" {\n  group "g" {\n    count = "many"\n  }\n}', "input.hcl:3,14-18: Unsuitable value type; Unsuitable value: a number is required"],
    [
      "env as a list",
      'job "x" {\n  group "g" {\n    task "t" {\n      env = ["a"]\n    }\n  }\n}',
      "input.hcl:4,13-14: Unsuitable value type; Unsuitable value: map of string required",
    ],
    [
      "env twice",
      'job "x" {\n  group "g" {\n    task "t" {\n      env = {}\n      env {}\n    }\n  }\n}',
      "input.hcl:5,7-10: Duplicate env block; env may not be defined more than once. Another definition is defined at input.hcl:4,7-15.",
    ],
    [
      "a for expression without in",
      'locals {\n  a = [for x of [1] : x]\n}\njob "x" {}',
      "input.hcl:2,14-16: Invalid 'for' expression; For expression requires the 'in' keyword after its name declarations.",
    ],
    [
      "a for expression without its value name",
      'locals {\n  a = [for k, 1 in [1] : k]\n}\njob "x" {}',
      "input.hcl:2,15-16: Invalid 'for' expression; For expression requires value variable name after comma.",
    ],
    [
      "a template for directive without in",
      'locals {\n  a = "%{ for x of [1] }${x}%{ endfor }"\n}\njob "x" {}',
      "input.hcl:2,17-19: Invalid 'for' directive; For directive requires 'in' keyword after names.",
    ],
    ["no job block", "locals {\n  a = 1\n}", "<nil>: Missing job block; A job block is required"],
    ["two job blocks", 'job "a" {}\njob "b" {}', 'input.hcl:2,1-8: Duplicate job block; Only one block of type "job" is allowed. Previous definition was at input.hcl:1,1-8.'],
    ["something else at the top", 'region = "x"\njob "a" {}', 'input.hcl:1,1-7: Unsupported argument; An argument named "region" is not expected here.'],
    [
      "a task scaling policy not cpu or mem",
      'job "x" {\n  group "g" {\n    task "t" {\n      scaling "disk" {\n        max = 1\n      }\n    }\n  }\n}',
      'input.hcl:4,15-21: Invalid scaling policy name; scaling policy name must be "cpu" or "mem"',
    ],
    [
      "a group scaling block without max",
      'job "x" {\n  group "g" {\n    scaling {\n      min = 1\n    }\n  }\n}',
      'input.hcl:3,13-13: Missing required argument; The argument "max" is required, but no definition was found.',
    ],
  ])("%s", async (_name, hcl, expected) => {
    expect(await failure(hcl)).toBe(expected);
  });

  it("problems inside config come after the rest, as HCL's one-line summary", async () => {
    const text = 'job "x" {\n  group "g" {\n    task "t" {\n      config {\n        a = var.one\n        b = var.two\n      }\n    }\n  }\n}';
    expect(await failure(text)).toBe('input.hcl:5,16-20: Unsupported attribute; This object does not have an attribute named "one"., and 1 other diagnostic(s)');
    expect(await failure(text.replace("driver", "x").replace('task "t" {', 'task "t" {\n      drvr = "docker"'))).toBe(
      'input.hcl:4,7-11: Unsupported argument; An argument named "drvr" is not expected here. Did you mean "driver"?',
    );
  });

  it("several problems come back together, one per line", async () => {
    expect(await failure('job "x" {\n  cnt = 1\n  group "g" {\n    kill_timeout = "1s"\n  }\n}')).toBe(
      'input.hcl:2,3-6: Unsupported argument; An argument named "cnt" is not expected here.\ninput.hcl:4,5-17: Unsupported argument; An argument named "kill_timeout" is not expected here.',
    );
  });
});

describe("POST /v1/jobs/parse: hostile input is a 400, never a crash or a runaway", () => {
  it("deep nesting, runaway for expressions and huge paddings are refused with a diagnostic", async () => {
    const deep = `job "x" {\n  region = ${"(".repeat(5000)}1${")".repeat(5000)}\n}`;
    expect(await failure(deep)).toMatch(/^input\.hcl:2,\d+-\d+: Nesting too deep; /);
    const runaway = 'job "x" {\n  meta = { n = length(flatten([for i in range(1000) : [for j in range(1000) : [for k in range(1000) : k]]])) }\n}';
    expect(await failure(runaway)).toMatch(/^input\.hcl:2,\d+-\d+: Evaluation too large; /);
    expect(await failure('job "x" {\n  region = format("%999999999d", 1)\n}')).toBe(
      'input.hcl:2,12-19: Error in function call; Call to function "format" failed: width 999999999 in "%999999999d" is larger than standin allows (100000).',
    );
  });

  it("random bytes and truncated files get a diagnostic", async () => {
    const source = 'job "x" {\n  group "g" {\n    task "t" {\n      driver = "docker"\n      config {\n        image = "${var.x}"\n      }\n    }\n  }\n}\n';
    for (let cut = 1; cut < source.length; cut += 7) {
      const res = await parse(source.slice(0, cut));
      expect(res.status, source.slice(0, cut)).toBe(400);
      expect(res.text.startsWith("Failed to parse job: ")).toBe(true);
    }
  });
});

describe("POST /v1/jobs/parse: Consul Connect", () => {
  const connectJob = `
job "mesh" {
  group "api" {
    network {
      mode = "bridge"
    }
    service {
      name = "count-api"
      port = "9001"
      connect {
        sidecar_service {
          proxy {
            upstreams {
              destination_name = "count-db"
              local_bind_port  = 5432
              mesh_gateway {
                mode = "local"
              }
            }
            expose {
              path {
                path            = "/health"
                protocol        = "http"
                local_path_port = 9001
                listener_port   = "healthcheck"
              }
            }
            config {
              protocol = "http"
            }
          }
        }
        sidecar_task {
          resources {
            cpu    = 50
            memory = 64
          }
          shutdown_delay = "5s"
        }
      }
    }
  }
}`;

  it("sidecar service, plural upstreams blocks, expose paths and the proxy's free-form config", async () => {
    const connect = group(await parsed(connectJob)).Services[0].Connect;
    expect(connect.Native).toBe(false);
    expect(connect.SidecarService.Proxy.Upstreams).toEqual([
      {
        DestinationName: "count-db",
        DestinationNamespace: "",
        DestinationPeer: "",
        DestinationPartition: "",
        DestinationType: "",
        LocalBindPort: 5432,
        Datacenter: "",
        LocalBindAddress: "",
        LocalBindSocketPath: "",
        LocalBindSocketMode: "",
        MeshGateway: { Mode: "local" },
        Config: null,
      },
    ]);
    expect(connect.SidecarService.Proxy.Expose).toEqual({ Paths: [{ Path: "/health", Protocol: "http", LocalPathPort: 9001, ListenerPort: "healthcheck" }], Path: null });
    expect(connect.SidecarService.Proxy.Config).toEqual({ protocol: "http" });
    expect(connect.SidecarTask).toMatchObject({ Resources: { CPU: 50, MemoryMB: 64 }, ShutdownDelay: 5e9, KillTimeout: null, LogConfig: null });
  });

  it("Canonicalize fills the sidecar task's defaults", async () => {
    const connect = group(await parsed(connectJob, { Canonicalize: true })).Services[0].Connect;
    expect(connect.SidecarTask).toMatchObject({
      Resources: { CPU: 50, Cores: 0, MemoryMB: 64 },
      ShutdownDelay: 5e9,
      KillTimeout: 5e9,
      LogConfig: { MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false },
    });
    expect(connect.SidecarService.Tags).toBeNull();
  });
});

/**
 * Differences the HCL corpus found (test/scheduler/hcl-corpus/), each checked
 * against Nomad 1.9.7, its HCL fork (hashicorp/hcl 55d9c02d147d) and go-cty
 * 1.16.2, and pinned here on its own.
 */
describe("POST /v1/jobs/parse: details the corpus found", () => {
  it("distinct_hosts writes the bool as RTarget, true or false (decodeConstraint's fmt.Sprint)", async () => {
    const job = await parsed('job "x" {\n  constraint {\n    distinct_hosts = true\n  }\n  constraint {\n    distinct_hosts = false\n  }\n}');
    expect(job.Constraints).toEqual([
      { LTarget: "", RTarget: "true", Operand: "distinct_hosts" },
      { LTarget: "", RTarget: "false", Operand: "distinct_hosts" },
    ]);
  });

  it("volume blocks with different labels build the Volumes map; a repeated label is no error, the later block wins", async () => {
    const job = await parsed(`
job "x" {
  group "g" {
    volume "b" {
      type   = "host"
      source = "first"
    }
    volume "a" {
      type   = "csi"
      source = "vol-a"
    }
    volume "b" {
      type   = "host"
      source = "second"
    }
  }
}`);
    const volumes = group(job).Volumes;
    expect(Object.keys(volumes)).toEqual(["a", "b"]);
    expect(volumes.a).toMatchObject({ Name: "a", Type: "csi", Source: "vol-a", AccessMode: "", AttachmentMode: "" });
    expect(volumes.b).toMatchObject({ Name: "b", Type: "host", Source: "second" });
  });

  it("pointer arguments are never required: change_script without fail_on_error or command, wait without min or max", async () => {
    const job = await parsed(`
job "x" {
  group "g" {
    task "t" {
      template {
        data        = "x"
        destination = "local/a"
        change_mode = "script"
        change_script {
          command = "/bin/reload"
        }
      }
      template {
        data        = "y"
        destination = "local/b"
        change_script {}
        wait {
          min = "2s"
        }
      }
    }
  }
}`);
    const [first, second] = task(job).Templates;
    // jobspec2's normalizeChangeScript fills what the file leaves out.
    expect(first.ChangeScript).toEqual({ Command: "/bin/reload", Args: [], Timeout: 5e9, FailOnError: false });
    expect(second.ChangeScript).toEqual({ Command: null, Args: [], Timeout: 5e9, FailOnError: false });
    expect(second.Wait).toEqual({ Min: 2e9, Max: null });
  });

  it("a duplicate block's range is its type and labels, not the brace (hclsyntax Block.DefRange)", async () => {
    expect(await failure('job "x" {\n  group "g" {\n    volume "v" {}\n    update {}\n    update {}\n  }\n}')).toBe(
      "input.hcl:5,5-11: Duplicate update block; Only one update block is allowed. Another was defined at input.hcl:4,5-11.",
    );
    expect(await failure('job "a" {\n}\njob   "b"   {}')).toBe(
      'input.hcl:3,1-10: Duplicate job block; Only one block of type "job" is allowed. Previous definition was at input.hcl:1,1-8.',
    );
  });

  it("jsonencode writes object keys sorted, plain decimals and Go's HTML-safe escapes (cty/json marshal)", async () => {
    const job = await parsed(`
job "x" {
  meta {
    obj   = jsonencode({ zeta = 1, alpha = [true, null], Mid = { b = "<&>", a = 0.0000001 } })
    big   = jsonencode(1e21)
    plain = jsonencode("tab\\there")
  }
}`);
    expect(job.Meta).toEqual({
      obj: '{"Mid":{"a":0.0000001,"b":"\\u003c\\u0026\\u003e"},"alpha":[true,null],"zeta":1}',
      big: "1000000000000000000000",
      plain: '"tab\\there"',
    });
  });

  it('Canonicalize fills ConsulToken and VaultToken with "" and PreventRescheduleOnLost with false (Nomad 1.9.7 api)', async () => {
    const job = await parsed('job "x" {\n  group "g" {}\n  group "h" {\n    prevent_reschedule_on_lost = true\n  }\n}', { Canonicalize: true });
    expect(job).toMatchObject({ ConsulToken: "", VaultToken: "", ConsulNamespace: "", VaultNamespace: "" });
    expect(job.TaskGroups.map((g: Json) => g.PreventRescheduleOnLost)).toEqual([false, true]);
    const raw = await parsed('job "x" {\n  group "g" {}\n}');
    expect([raw.ConsulToken, raw.VaultToken, group(raw).PreventRescheduleOnLost]).toEqual([null, null, null]);
  });
});

describe("POST /v1/jobs/parse: strip markers and <<- on HCL's per-line heredoc tokens", () => {
  const meta = async (body: string): Promise<Json> => (await parsed(`locals {\n  xs = ["a", "b"]\n}\njob "x" {\n  meta {\n${body}\n  }\n}`)).Meta;

  it("~} trims the rest of its own line only: the next line keeps its indentation", async () => {
    const m = await meta("    v = <<EOT\n[\n%{ for x in local.xs ~}\n  ${x},\n%{ endfor ~}\n]\nEOT");
    expect(m.v).toBe("[\n  a,\n  b,\n]\n");
  });

  it("%{~ trims the whitespace token right before it, which may be the previous line's newline but never more", async () => {
    const m = await meta("    v = <<EOT\nstart\n\n%{~ for x in local.xs }${x}%{ endfor }\nEOT\n    w = <<EOT\nstart\n  %{~ if true }y%{ endif }\nEOT");
    expect(m.v).toBe("start\nab\n");
    expect(m.w).toBe("start\ny\n");
  });

  it("<<- counts the lines that still start lines after stripping; a stripped line's successor keeps its spaces", async () => {
    const m = await meta("    v = <<-EOT\n      [\n      %{ for x in local.xs ~}\n        ${x},\n      %{ endfor ~}\n      ]\n    EOT");
    expect(m.v).toBe("[\n        a,\n        b,\n      ]\n");
  });

  it("<<- leaves whitespace-only lines alone and counts an interpolation at a line's start as no indentation", async () => {
    const m = await meta('    v = <<-EOT\n      a\n        \n      b\n    EOT\n    w = <<-EOT\n${"x"}\n      c\n    EOT');
    expect(m.v).toBe("a\n        \nb\n");
    expect(m.w).toBe("x\n      c\n");
  });

  it("a template is passed through unconverted only when it is one interpolation alone: a literal a ~ emptied still counts", async () => {
    expect((await parsed('job "x" {\n  datacenters = "${["dc1"]}"\n}')).Datacenters).toEqual(["dc1"]);
    expect(await failure('job "x" {\n  datacenters = "${["dc1"] ~} "\n}')).toBe(
      "input.hcl:2,20-27: Invalid template interpolation value; Cannot include the given value in a string template: string required.",
    );
  });

  it("%{~ on an indented line empties that line's indentation token (not the newline before), so <<- finds nothing common to strip", async () => {
    const m = await meta("    v = <<-EOT\n      a\n      %{~ if true }b%{ endif }\n    EOT");
    expect(m.v).toBe("      a\nb\n");
  });
});

describe("POST /v1/jobs/parse: format argument indexes", () => {
  it("%[n] picks argument n and the next plain verb goes on from n+1 (cty's format grammar: flags, width, precision, index)", async () => {
    const job = await parsed('job "x" {\n  meta {\n    a = format("%[2]s-%[1]s-%s", "one", "two")\n    b = format("%5.1[2]f|%[1]d", 3, 2.26)\n  }\n}');
    expect(job.Meta).toEqual({ a: "two-one-two", b: "  2.3|3" });
  });

  it("%v writes strings and numbers as themselves (numbers as Go's %g), anything else and %#v as cty's JSON", async () => {
    const job = await parsed('job "x" {\n  meta {\n    a = format("%v|%v|%v|%v", "s", 1234567, 0.5, { b = 1, a = [true] })\n    b = format("%#v|%v", "s", null)\n  }\n}');
    expect(job.Meta).toEqual({ a: 's|1.234567e+06|0.5|{"a":[true],"b":1}', b: '"s"|null' });
  });

  it("an index past the arguments is cty's error", async () => {
    expect(await failure('job "x" {\n  region = format("ab%[3]s", "x")\n}')).toContain(
      'Call to function "format" failed: not enough arguments for "%[3]s" at 2: need index 3 but have 1 total.',
    );
  });
});

/** yamlencode / yamldecode as Nomad 1.9 has them (go-cty-yaml 1.1 and libyaml's emitter). */
describe("POST /v1/jobs/parse: yamlencode and yamldecode", () => {
  const meta = async (body: string): Promise<Json> => (await parsed(`job "x" {\n  meta {\n${body}\n  }\n}`)).Meta;

  it("yamlencode: sorted double-quoted keys, double-quoted strings, plain scalars, indentless sequences under keys, flow empties", async () => {
    const m = await meta(
      `    doc = yamlencode({ name = "web", ports = [80, 443], tls = { enabled = true, ca = null }, tags = [], extra = {}, jobs = [{ b = 1, a = "x" }, [1, [2]]] })`,
    );
    expect(m.doc).toBe(
      [
        '"extra": {}',
        '"jobs":',
        '- "a": "x"',
        '  "b": 1',
        "- - 1",
        "  - - 2",
        '"name": "web"',
        '"ports":',
        "- 80",
        "- 443",
        '"tags": []',
        '"tls":',
        '  "ca": null',
        '  "enabled": true',
        "",
      ].join("\n"),
    );
  });

  it("yamlencode: a plain scalar document ends with ..., a string does not; multi-line strings are literal blocks with chomping hints", async () => {
    const m = await meta(
      [
        "    n     = yamlencode(1.5)",
        "    b     = yamlencode(false)",
        '    s     = yamlencode("true")',
        '    clip  = yamlencode({ t = "a\\nb\\n" })',
        '    strip = yamlencode(["a\\nb"])',
        '    keep  = yamlencode("a\\n\\n")',
        '    lead  = yamlencode("  a\\nb")',
        '    tabs  = yamlencode("a\\tb\\nc")',
      ].join("\n"),
    );
    expect(m).toEqual({
      n: "1.5\n...\n",
      b: "false\n...\n",
      s: '"true"\n',
      clip: '"t": |\n  a\n  b\n',
      strip: "- |-\n  a\n  b\n",
      keep: "|+\n  a\n\n...\n",
      lead: "|2-\n    a\n  b\n",
      // A tab is not printable in YAML's sense, so the block style is refused and the string escaped.
      tabs: '"a\\tb\\nc"\n',
    });
  });

  it("yamlencode: escapes what YAML cannot print and folds long double-quoted strings past column 80", async () => {
    const words = "lorem ipsum dolor sit amet ".repeat(4).trim();
    const m = await meta(`    esc  = yamlencode("q\\" b\\\\ \\u00e9 \\U0001F600 \\u2028")\n    long = yamlencode("${words}")`);
    expect(m.esc).toBe('"q\\" b\\\\ é \\U0001F600 \\L"\n');
    expect(m.long).toBe('"lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum dolor sit amet\n  lorem ipsum dolor sit amet"\n');
  });

  it("yamldecode: go-cty-yaml's scalar rules (YAML 1.1 booleans, 0o/0x integers, timestamps, quoted text stays text)", async () => {
    const m = await meta(
      [
        "    v = jsonencode(yamldecode(<<EOT",
        "replicas: 5",
        "on: yes",
        "quoted: 'no'",
        "hex: 0x1F",
        "octal: 0o17",
        "underscored: 1_000",
        "when: 2001-12-14 21:59:43.10",
        "zoned: 2001-12-14t21:59:43-05:00",
        "empty:",
        "float: .5",
        "forced: !!str 12",
        "text: |",
        "  two",
        "  lines",
        "EOT",
        "    ))",
      ].join("\n"),
    );
    expect(JSON.parse(m.v)).toEqual({
      replicas: 5,
      true: true,
      quoted: "no",
      hex: 31,
      octal: 15,
      underscored: "1_000",
      when: "2001-12-14T21:59:43Z",
      zoned: "2001-12-14T21:59:43-05:00",
      empty: null,
      float: 0.5,
      forced: "12",
      text: "two\nlines\n",
    });
  });

  it("yamldecode: anchors, aliases and << merges; sequences are tuples", async () => {
    const m = await meta('    v = jsonencode(yamldecode("base: &b {x: 1, z: 2}\\nd:\\n  <<: *b\\n  z: 3\\nl: [a, *b]"))');
    expect(JSON.parse(m.v)).toEqual({ base: { x: 1, z: 2 }, d: { x: 1, z: 3 }, l: ["a", { x: 1, z: 2 }] });
  });

  it("yamldecode: what go-cty-yaml refuses is a function call error, placed by libyaml's 0-based line (none on the first)", async () => {
    const cases: [string, string][] = [
      ['""', "on line 1, column 1: missing start of document"],
      ['"a: 1\\n---\\nb: 2"', "on line 1, column 1: only a single document is allowed"],
      ['"x: 1\\ny: !!bool maybe"', 'on line 1, column 4: cannot parse \\"maybe\\" as tag:yaml.org,2002:bool'],
      ['"x: 1\\n<<: 5"', "on line 1, column 1: cannot merge number into mapping"],
      ['"a: .nan"', "floating point NaN is not supported"],
      ['"a: &x [*x]"', 'cannot refer to anchor \\"x\\" from inside its own definition'],
      ['"~: 1"', "mapping key cannot be null"],
      ['"a: !!bool maybe"', 'cannot parse \\"maybe\\" as tag:yaml.org,2002:bool'],
      ['"a: !custom 1"', 'unsupported tag \\"!custom\\"'],
    ];
    for (const [arg, message] of cases) {
      const text = await failure(`job "x" {\n  meta {\n    v = yamldecode(${arg})\n  }\n}`);
      expect(text, arg).toContain(`Error in function call; Call to function "yamldecode" failed: ${message.replace(/\\"/g, '"')}.`);
    }
  });

  it("yamldecode: nested aliases that would expand without bound are refused, not built", async () => {
    const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 8; i++)
      lines.push(
        `${"abcdefgh"[i]}: &${"abcdefgh"[i]} [${Array(10)
          .fill(`*${"abcdefgh"[i - 1]}`)
          .join(", ")}]`,
      );
    const text = await failure(`job "x" {\n  meta {\n    v = length(yamldecode(${JSON.stringify(lines.join("\n"))}))\n  }\n}`);
    expect(text).toContain('Call to function "yamldecode" failed: the document expands to more than 100000 values.');
  });
});
