"""Drives Debian's python3-consul (0.7.1) against the registry, one step per run.

Run with the interpreter that has the package (/usr/bin/python3):

    python_session_client.py <registry-url> <command> [args...]

Each run prints one JSON document on stdout. Errors the client raises
(consul.NotFound, consul.ConsulException, ...) are printed as
{"error": "<exception class>", "message": "<text>"} with exit status 0, so the
caller can assert on them; anything else is a crash (non-zero exit).
"""
import json
import sys
from urllib.parse import urlparse

import consul


def entry_json(entry):
    """A KV entry with its Value (bytes) decoded, so it can be printed as JSON."""
    if entry is None:
        return None
    out = dict(entry)
    if isinstance(out.get("Value"), bytes):
        out["Value"] = out["Value"].decode("utf-8")
    return out


def run(c, command, args):
    if command == "create":
        # name, ttl (seconds), behavior, lock delay (seconds)
        name, ttl, behavior, lock_delay = args
        return {"id": c.session.create(name=name, ttl=int(ttl), behavior=behavior, lock_delay=int(lock_delay))}
    if command == "info":
        index, session = c.session.info(args[0])
        return {"index": index, "session": session}
    if command == "list":
        index, sessions = c.session.list()
        return {"index": index, "sessions": sessions}
    if command == "list-in":
        # dc, consistency ("default", "stale", "consistent"): the client's per-call options
        dc, consistency = args
        index, sessions = c.session.list(dc=dc or None, consistency=consistency)
        return {"index": index, "sessions": sessions}
    if command == "create-in":
        name, node, dc = args
        return {"id": c.session.create(name=name, node=node, dc=dc)}
    if command == "node":
        index, sessions = c.session.node(args[0])
        return {"index": index, "sessions": sessions}
    if command == "renew":
        return {"session": c.session.renew(args[0])}
    if command == "destroy":
        return {"destroyed": c.session.destroy(args[0])}
    if command == "acquire":
        key, value, session_id = args
        return {"acquired": c.kv.put(key, value, acquire=session_id)}
    if command == "list-wire":
        # The same list call, with what requests (python-consul's transport) sent and got back.
        wire = {}
        original = c.http.response

        def capture(response):
            # Header names lowercased: HTTP names are case-insensitive, JSON keys are not.
            wire["requestHeaders"] = {k.lower(): v for k, v in response.request.headers.items()}
            wire["responseHeaders"] = {k.lower(): v for k, v in response.headers.items()}
            return original(response)

        c.http.response = capture
        index, sessions = c.session.list()
        return dict(wire, index=index, sessions=sessions)
    if command == "kv-get":
        index, entry = c.kv.get(args[0])
        return {"index": index, "entry": entry_json(entry)}
    raise SystemExit("unknown command %r" % command)


def main():
    url, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    parsed = urlparse(url)
    c = consul.Consul(host=parsed.hostname, port=parsed.port)
    try:
        result = run(c, command, args)
    except consul.ConsulException as error:
        # NotFound, BadRequest, ACLPermissionDenied, ... all derive from ConsulException.
        result = {"error": type(error).__name__, "message": str(error)}
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
