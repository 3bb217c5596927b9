/**
 * Conformance: the leader-election recipe (sessions, acquire/release, TTL
 * expiry on the virtual clock, lock-delay, blocking reads, uint64 flags) with
 * Debian's python3-consul and python3-consul2 (the two conflict as packages:
 * .ci/run unpacks python3-consul2 into .cache/python3-consul2, put first on
 * PYTHONPATH here).
 */
import { pythonChecks } from "./support/python-checks.js";

pythonChecks("leader election", "lock_recipe.py", ["lock-and-handover-by-ttl-expiry", "flags-exact", "blocking-loop-request-count"]);
