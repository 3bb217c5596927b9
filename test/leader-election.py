"""A leader-election client on Debian's python3-consul (0.7.1), for the
leader-election-failover scenario.

Run with the interpreter that has the package (/usr/bin/python3):

    leader-election.py <registry-url> [node] [key] [max-rounds]

It does what a standby replica of a service does with Consul's lock recipe:
creates a session on its node through the agent (bound to the node's
serfHealth check), then loops: a blocking read of the key (index/wait); when
the key has no holder it tries to acquire it with its session. A refused
acquire on a free key means the key's lock-delay is running, so it waits a
short retry time (a blocking read with wait=5s, Consul's DefaultLockRetryTime)
and tries again. When it holds the key it prints one JSON line and exits 0:

    {"leader": "node-b", "session": "...", "key": "service/leader",
     "value": "node-b", "lockIndex": 2, "rounds": 9,
     "acquireAttempts": [false, false, true], "now": "2026-01-01T00:02:16Z"}

(`now` is the emulator's virtual time, read from its control API, which is
served on every port; null if that read fails.) After max-rounds (default 100)
reads without becoming leader it prints {"error": ...} and exits 1.

The emulator should run with the auto clock (`standin start --clock auto`),
so that virtual time skips ahead while this client's reads are parked.
"""
import json
import sys
import urllib.request
from urllib.parse import urlparse

import consul

HOLD_WAIT = "1m"  # blocking read while another session holds the key
RETRY_WAIT = "5s"  # after an acquire refused on a free key (lock-delay)


def virtual_now(url):
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/_standin/clock", timeout=60) as response:
            return json.load(response)["now"]
    except Exception:  # the control API may need a token, or not be there
        return None


def value_of(entry):
    value = entry.get("Value") if entry else None
    return value.decode("utf-8") if isinstance(value, bytes) else value


def main():
    url = sys.argv[1]
    node = sys.argv[2] if len(sys.argv) > 2 else "node-b"
    key = sys.argv[3] if len(sys.argv) > 3 else "service/leader"
    max_rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    parsed = urlparse(url)
    c = consul.Consul(host=parsed.hostname, port=parsed.port)

    session = c.session.create(name="leader-" + node, node=node, lock_delay=15, behavior="release")
    attempts = []
    index = None
    wait = HOLD_WAIT
    for rounds in range(1, max_rounds + 1):
        index, entry = c.kv.get(key, index=index, wait=wait)
        holder = entry.get("Session") if entry else None
        if holder == session:
            result = {
                "leader": node,
                "session": session,
                "key": key,
                "value": value_of(entry),
                "lockIndex": entry["LockIndex"],
                "rounds": rounds,
                "acquireAttempts": attempts,
                "now": virtual_now(url),
            }
            json.dump(result, sys.stdout)
            sys.stdout.write("\n")
            return 0
        if holder is None:
            acquired = c.kv.put(key, node, acquire=session)
            attempts.append(acquired)
            # Acquired: the next read (the index moved) shows us as the holder.
            # Refused on a free key: the lock-delay runs; retry after a short wait.
            wait = HOLD_WAIT if acquired else RETRY_WAIT
            if acquired:
                index = None
        else:
            wait = HOLD_WAIT
    json.dump({"error": "not leader after %d rounds" % max_rounds, "session": session, "acquireAttempts": attempts}, sys.stdout)
    sys.stdout.write("\n")
    return 1


if __name__ == "__main__":
    sys.exit(main())
