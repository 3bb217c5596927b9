"""The handle a test gets: the services' addresses, the environment the official clients read, and
the control API (`/_standin`) as methods, with the same names as the Go helper's `Server`."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Optional, Union
from urllib.parse import urlparse

Duration = Union[int, float, str, timedelta]


class StandinError(Exception):
    """The control API refused a request: `status` and the JSON `body` it answered."""

    def __init__(self, method: str, path: str, status: int, body: Any):
        self.status, self.body = status, body
        message = body.get("error") if isinstance(body, dict) and "error" in body else body
        super().__init__(f"{method} /_standin{path}: {status} {message}")


class AwaitTimeout(StandinError, AssertionError):
    """`await_` gave up (408): the conditions did not all hold within the virtual time allowed.
    An AssertionError, so pytest reports it as a failed expectation; `body["observed"]` says what
    held at the limit."""


def go_duration(value: Duration) -> str:
    """Seconds (int/float), a timedelta or a Go duration string ("30s", "1h30m") as a Go duration.
    Whole milliseconds: the virtual clock counts in milliseconds."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, timedelta)):
        raise TypeError(f"a duration is seconds, a timedelta or a string such as '30s', not {value!r}")
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    millis = round(seconds * 1000)
    return f"{millis // 1000}s" if millis % 1000 == 0 else f"{millis}ms"


def rfc3339(when: Union[datetime, str]) -> str:
    """A datetime as standin's instants are written (UTC, `Z`); naive datetimes are taken as UTC."""
    if isinstance(when, str):
        return when
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    text = when.astimezone(timezone.utc).isoformat(timespec="milliseconds")
    return text.replace(".000+00:00", "Z").replace("+00:00", "Z")


def parse_instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class Standin:
    """A running standin. `nomad_addr` (Nomad's NOMAD_ADDR form, a URL), `consul_addr` (Consul's
    CONSUL_HTTP_ADDR form, host:port), `consul_host`/`consul_port` (python-consul's arguments),
    `registry_url`, `echo_url`, `control_url`, `ca_file` (with TLS) and `env`."""

    def __init__(self, urls: Dict[str, str], control_token: Optional[str] = None, ca_file: Optional[str] = None):
        self.nomad_addr = urls["scheduler"]
        self.scheduler_url = urls["scheduler"]
        self.registry_url = urls["registry"]
        self.echo_url = urls["echo"]
        self.control_url = urls["control"]
        registry = urlparse(self.registry_url)
        self.consul_host, self.consul_port = registry.hostname or "127.0.0.1", registry.port or 8500
        self.consul_addr = f"{self.consul_host}:{self.consul_port}"
        self.ca_file = ca_file
        self.replaced_start = False  # set by reset(fixture=…): the start state is no longer the options'
        self._token = control_token
        self._tls = ssl.create_default_context(cafile=ca_file) if ca_file else None

    # --- environment for the official clients ---

    @property
    def env(self) -> Dict[str, str]:
        """The variables Nomad's and Consul's clients read (python-consul reads CONSUL_HTTP_ADDR
        and CONSUL_HTTP_SSL when a `consul.Consul()` is made), plus standin's own STANDIN_*."""
        env = {
            "NOMAD_ADDR": self.nomad_addr,
            "CONSUL_HTTP_ADDR": self.consul_addr,
            "STANDIN_URL": self.scheduler_url,
            "STANDIN_SCHEDULER_URL": self.scheduler_url,
            "STANDIN_REGISTRY_URL": self.registry_url,
            "STANDIN_ECHO_URL": self.echo_url,
            "STANDIN_CONTROL_URL": self.control_url,
        }
        if self.ca_file:
            env.update({"CONSUL_HTTP_SSL": "true", "CONSUL_CACERT": self.ca_file, "NOMAD_CACERT": self.ca_file})
        return env

    def set_env(self, monkeypatch) -> None:
        """Sets `env` through pytest's monkeypatch, so the variables are undone after the test."""
        for name, value in self.env.items():
            monkeypatch.setenv(name, value)

    # --- the virtual clock ---

    def now(self) -> datetime:
        """The virtual clock's instant (UTC)."""
        return parse_instant(self._call("GET", "/clock")["now"])

    def clock(self) -> Dict[str, Any]:
        """The clock's status: now, nowMs, mode, pendingTimers, nextTimerAt…"""
        return self._call("GET", "/clock")

    def advance(self, by: Duration) -> Dict[str, Any]:
        """Moves the virtual clock by seconds, a timedelta or a Go duration ("30s"), firing every
        due timer in order → `{now, fired}`."""
        return self._call("POST", "/clock/advance", {"by": go_duration(by)})

    def advance_to(self, when: Union[datetime, str]) -> Dict[str, Any]:
        """Moves the clock to an instant (backwards is refused: StandinError 409)."""
        return self._call("POST", "/clock/advance-to", {"to": rfc3339(when)})

    # --- state ---

    def reset(self, fixture: Optional[Union[dict, str]] = None) -> Dict[str, Any]:
        """Back to the start state (start fixtures, seed and time); with `fixture` (a document or
        a shipped name), that becomes the start fixture first."""
        if fixture is not None:
            self.replaced_start = True  # a shared process is not handed to the next test
        return self._call("POST", "/reset", {"fixture": fixture} if fixture is not None else None)

    def apply_fixture(self, fixture: dict) -> Dict[str, Any]:
        """Adds a fixture document to the current state (no file paths: job files as `hclSource`)."""
        return self._call("POST", "/fixtures", fixture)

    def snapshot(self) -> bytes:
        """The whole state as standin's snapshot document (bytes, for `restore`)."""
        return self._request("GET", "/snapshot", None)[1]

    def restore(self, snapshot: bytes) -> None:
        """Restores a `snapshot()` exactly (a bad document is refused and changes nothing)."""
        self._call("PUT", "/snapshot", snapshot)

    def state_hash(self) -> str:
        return self._call("GET", "/state/hash")["hash"]

    # --- scenarios ---

    def await_(self, until: Optional[Dict[str, Any]] = None, within: Optional[Duration] = None, **conditions: Any) -> Dict[str, Any]:
        """Moves the clock timer by timer until every condition holds (`POST /_standin/await`) →
        `{met, waited, observed, now, fired, index}`; raises AwaitTimeout when they do not within
        `within` of virtual time. Conditions as a dict or keywords (`kv={"key": …, "held": False}`;
        Python names with `_` stand for the condition's `-`, e.g. `nomad_service`)."""
        merged = dict(until or {})
        merged.update({name.replace("_", "-"): value for name, value in conditions.items()})
        body: Dict[str, Any] = {"until": merged}
        if within is not None:
            body["within"] = go_duration(within)
        status, raw = self._request("POST", "/await", json.dumps(body).encode(), accept_error=True)
        answer = json.loads(raw)
        if status == 408:
            raise AwaitTimeout("POST", "/await", status, answer)
        if status != 200:
            raise StandinError("POST", "/await", status, answer)
        return answer

    def act(self, do: str, **arguments: Any) -> Dict[str, Any]:
        """Runs one named action now (`POST /_standin/actions`), e.g. `act("node-down", node="client-1")`."""
        return self._call("POST", "/actions", {"do": do, **arguments})

    def tape(self) -> bytes:
        """Everything since the last reset, for `standin replay` (409 when the tape is off)."""
        return self._request("GET", "/tape", None)[1]

    # --- HTTP ---

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = body if isinstance(body, (bytes, bytearray)) or body is None else json.dumps(body).encode()
        return json.loads(self._request(method, path, data)[1])

    def _request(self, method: str, path: str, data: Optional[bytes], accept_error: bool = False):
        request = urllib.request.Request(self.control_url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self._token:
            request.add_header("Authorization", f"Bearer {self._token}")
        try:
            with urllib.request.urlopen(request, context=self._tls) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            raw = error.read()
            if accept_error:
                return error.code, raw
            try:
                answer = json.loads(raw)
            except ValueError:
                answer = raw.decode(errors="replace")
            raise StandinError(method, path, error.code, answer) from None
