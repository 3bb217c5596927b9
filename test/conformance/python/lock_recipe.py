"""The leader-election recipe with a Python Consul client (Debian's python3-consul,
or python3-consul2 when it is first on PYTHONPATH), against a running standin.

Usage: lock_recipe.py <registry-url> <control-url>
Prints one JSON line per named check: {"check", "ok", "error"}.
"""
import json
import sys
import threading
import urllib.parse
import urllib.request

import consul

REGISTRY, CONTROL = sys.argv[1], sys.argv[2]
url = urllib.parse.urlparse(REGISTRY)
c = consul.Consul(host=url.hostname, port=url.port)
SEMAPHORE_FLAG = 16210313421097356768  # the Go client's SemaphoreFlagValue, 0xe0f69a2baa414de0


def advance(by):
    request = urllib.request.Request(CONTROL + "/_standin/clock/advance", data=json.dumps({"by": by}).encode(), method="POST")
    with urllib.request.urlopen(request) as response:
        assert response.status == 200, response.status


def expect(ok, message):
    if not ok:
        raise AssertionError(message)


def blocking_get(key, index, out):
    out["result"] = c.kv.get(key, index=index, wait="60s")


def check_lock_and_handover():
    key = "conformance/py/leader"
    a = c.session.create(name="a", ttl=10, lock_delay=15)
    b = c.session.create(name="b", ttl=120, lock_delay=15)
    expect(c.kv.put(key, "a", acquire=a) is True, "A's acquire refused")
    expect(c.kv.put(key, "b", acquire=b) is False, "B acquired a held lock")
    index, entry = c.kv.get(key)
    expect(entry["Session"] == a and entry["LockIndex"] == 1, "held: %r" % entry)
    expect(c.session.renew(b)["ID"] == b, "renew")

    # B long-polls the key; A's TTL lapses on the virtual clock (2 x TTL), which releases it.
    out = {}
    waiter = threading.Thread(target=blocking_get, args=(key, index, out))
    waiter.start()
    c.kv.put("conformance/py/noise", "x")  # another key's write must not wake B
    advance("21s")
    waiter.join(60)
    expect(not waiter.is_alive(), "B's blocking read did not wake on the release")
    woke_index, woke = out["result"]
    expect(woke_index > index and woke.get("Session") is None, "after expiry: %r" % (woke,))
    expect(c.session.info(a)[1] is None, "A's session outlived 2 x TTL")

    expect(c.kv.put(key, "b", acquire=b) is False, "the lock-delay did not refuse B")
    advance("16s")
    expect(c.kv.put(key, "b", acquire=b) is True, "B's acquire after the lock-delay refused")
    index, entry = c.kv.get(key)
    expect(entry["Session"] == b and entry["LockIndex"] == 2, "handed over: %r" % entry)
    expect(c.kv.put(key, "b", release=b) is True, "release")


def check_flags_exact():
    key = "conformance/py/flags"
    expect(c.kv.put(key, "x", flags=SEMAPHORE_FLAG) is True, "put")
    _, entry = c.kv.get(key)
    expect(entry["Flags"] == SEMAPHORE_FLAG, "flags read back %r" % entry["Flags"])


def check_blocking_loop_count():
    key = "conformance/py/watched"
    c.kv.put(key, "v1")
    requests = []
    first = threading.Event()

    def loop():
        index = None
        while True:
            index, entry = c.kv.get(key, index=index, wait="60s")
            requests.append(index)
            first.set()
            if entry and entry["Value"] == b"stop":
                return

    thread = threading.Thread(target=loop)
    thread.start()
    expect(first.wait(60), "the first read never answered")
    for i in range(20):
        c.kv.put("conformance/py/noise/%d" % i, "x")
    c.kv.put(key, "stop")
    thread.join(60)
    expect(not thread.is_alive(), "the loop never saw its key change")
    expect(len(requests) == 2, "the loop made %d requests for one change amid 20 other writes, want 2" % len(requests))


for name, fn in [
    ("lock-and-handover-by-ttl-expiry", check_lock_and_handover),
    ("flags-exact", check_flags_exact),
    ("blocking-loop-request-count", check_blocking_loop_count),
]:
    try:
        fn()
        print(json.dumps({"check": name, "ok": True}), flush=True)
    except Exception as error:  # one check's failure must not hide the others
        print(json.dumps({"check": name, "ok": False, "error": "%s: %s" % (type(error).__name__, error)}), flush=True)
