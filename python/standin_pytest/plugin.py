"""The pytest plugin (registered by the `pytest11` entry point, or with `-p standin_pytest.plugin`):
the `standin`, `standin_module` and `standin_session` fixtures, the `standin` marker and the
`standin_*` ini options.

pytest fixes a fixture's scope where it is declared, so the three scopes are three names:
- `standin` (function): a fresh start state for every test. Starting a process costs far more than
  `reset()` (microseconds), so tests with the same options share one process, reset before each
  test, as standin's Node helpers do; `standin_reuse = false` gives each test its own process.
- `standin_module`: one process per test module, not reset between its tests.
- `standin_session`: one process for the whole run (ini options only), not reset.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from .client import Standin
from .process import StandinProcess, StandinStartError, StartOptions, normalize_fixtures, start

MARKER_OPTIONS = ("fixture", "seed", "start_time", "clock", "control_token", "tls", "args", "bin")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("standin_fixture", "standin's start fixtures: file paths (relative to the root directory) or shipped names, one a line", type="linelist", default=[])
    parser.addini("standin_seed", "the seed (default: the fixture's)", default="")
    parser.addini("standin_start_time", "the virtual clock's start (RFC 3339, or now)", default="")
    parser.addini("standin_clock", "the clock mode: manual, auto or realtime (default: the fixture's)", default="")
    parser.addini("standin_control_token", "require this bearer token on the control API", default="")
    parser.addini("standin_tls", "serve HTTPS with a CA made at start (Standin.ca_file)", type="bool", default=False)
    parser.addini("standin_args", "further `standin start` arguments", type="args", default=[])
    parser.addini("standin_bin", "the standin executable (default: STANDIN_BIN, then standin on PATH, then npx standin)", default="")
    parser.addini("standin_start_timeout", "seconds to wait for standin to be ready", default="30")
    parser.addini("standin_reuse", "share one process between function-scoped tests with equal options, reset before each test", type="bool", default=True)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "standin(fixture=None, seed=None, start_time=None, clock=None, control_token=None, tls=False, args=(), bin=None): "
        "options for the standin fixtures of this test, class or module (they override the standin_* ini options)",
    )
    config.stash[_POOL] = _Pool()


def pytest_unconfigure(config: pytest.Config) -> None:
    pool = config.stash.get(_POOL, None)
    if pool is not None:
        pool.close()


class _Pool:
    """The processes function-scoped tests share, one per set of start options, stopped at the end of the run."""

    def __init__(self) -> None:
        self._running: Dict[StartOptions, StandinProcess] = {}

    def get(self, options: StartOptions) -> StandinProcess:
        running = self._running.get(options)
        if running is None or running.process.poll() is not None:
            running = self._running[options] = start(options)
        return running

    def discard(self, options: StartOptions) -> None:
        running = self._running.pop(options, None)
        if running is not None:
            running.stop()

    def close(self) -> None:
        for running in self._running.values():
            running.stop()
        self._running.clear()


_POOL = pytest.StashKey[_Pool]()


def _ini_options(config: pytest.Config) -> StartOptions:
    def text(name: str) -> "str | None":
        return str(config.getini(name)).strip() or None

    seed, timeout = text("standin_seed"), text("standin_start_timeout") or "30"
    try:
        start_timeout = float(timeout)
    except ValueError:
        raise pytest.UsageError(f"standin_start_timeout: {timeout!r} is not a number of seconds") from None
    return StartOptions(
        fixtures=normalize_fixtures(list(config.getini("standin_fixture")), config.rootpath),
        seed=int(seed) if seed is not None and seed.lstrip("-").isdigit() else seed,
        start_time=text("standin_start_time"),
        clock=text("standin_clock"),
        control_token=text("standin_control_token"),
        tls=bool(config.getini("standin_tls")),
        args=tuple(config.getini("standin_args")),
        bin=text("standin_bin"),
        cwd=str(Path.cwd()),
        start_timeout=start_timeout,
    )


def _options(request: pytest.FixtureRequest, use_marker: bool = True) -> StartOptions:
    """The ini options, overridden by the `standin` markers: the module's, then the class's, then
    the test's, each keyword from the closest marker that gives it."""
    options = _ini_options(request.config)
    markers = list(request.node.iter_markers("standin")) if use_marker else []
    given: Dict[str, Any] = {}
    for marker in reversed(markers):  # iter_markers starts at the closest
        if marker.args:
            pytest.fail(f"@pytest.mark.standin takes keywords only ({', '.join(MARKER_OPTIONS)}), not {marker.args!r}", pytrace=False)
        unknown = sorted(set(marker.kwargs) - set(MARKER_OPTIONS))
        if unknown:
            pytest.fail(f"@pytest.mark.standin: unknown option {', '.join(unknown)} (options: {', '.join(MARKER_OPTIONS)})", pytrace=False)
        given.update(marker.kwargs)
    changes: Dict[str, Any] = {}
    for name, value in given.items():
        if name == "fixture":
            changes["fixtures"] = normalize_fixtures(value, request.config.rootpath)
        elif name == "args":
            changes["args"] = tuple(value)
        else:
            changes[name] = value
    return replace(options, **changes)


def _handle(running: StandinProcess, options: StartOptions) -> Standin:
    return Standin(running.urls, control_token=options.control_token, ca_file=running.ca_file)


def _start_or_fail(options: StartOptions) -> StandinProcess:
    try:
        return start(options)
    except StandinStartError as error:
        pytest.fail(str(error), pytrace=False)
        raise  # unreachable: pytest.fail raises


def _own_process(options: StartOptions) -> Iterator[Standin]:
    running = _start_or_fail(options)
    try:
        yield _handle(running, options)
    finally:
        running.stop()


@pytest.fixture
def standin(request: pytest.FixtureRequest) -> Iterator[Standin]:
    """A standin in its start state for this test (options: the `standin` marker, the ini file)."""
    options = _options(request)
    if not request.config.getini("standin_reuse"):
        yield from _own_process(options)
        return
    pool = request.config.stash[_POOL]
    try:
        running = pool.get(options)
    except StandinStartError as error:
        pytest.fail(str(error), pytrace=False)
    handle = _handle(running, options)
    handle.reset()
    yield handle
    if handle.replaced_start:
        # reset(fixture=…) replaced the start fixture: a reset would no longer give the next test
        # the start state its options name, so the next test gets a new process.
        pool.discard(options)


@pytest.fixture(scope="module")
def standin_module(request: pytest.FixtureRequest) -> Iterator[Standin]:
    """A standin for this module's tests (options: a module-level `pytestmark = pytest.mark.standin(…)`, the ini file)."""
    yield from _own_process(_options(request))


@pytest.fixture(scope="session")
def standin_session(request: pytest.FixtureRequest) -> Iterator[Standin]:
    """One standin for the whole run (options: the ini file)."""
    yield from _own_process(_options(request, use_marker=False))
