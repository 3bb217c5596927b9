/**
 * Conformance: the agent's services and TTL checks (register with a TTL
 * check, ttl_pass, the TTL lapsing on the virtual clock, `health.service`
 * with `passing=True` leaving the lapsed instance out until the next
 * ttl_pass, deregister) with
 * Debian's python3-consul and python3-consul2 (unpacked by .ci/run into
 * .cache/python3-consul2, put first on PYTHONPATH here). python3-consul
 * 0.7.1 sends check/pass and service/deregister as GETs, which Consul (and
 * standin) answer with a 405: the script asserts that, then PUTs through the
 * client's own HTTP layer.
 */
import { pythonChecks } from "./support/python-checks.js";

pythonChecks("agent services", "agent_services.py", ["register-with-ttl-check", "ttl-pass-and-lapse", "health-service-passing", "deregister"]);
