"""Finding the standin executable, starting `standin start` on free loopback ports and stopping it.

The process writes a ready file once every port listens (`--ready-file`); waiting for that file is
the only wall-clock wait here, and it is bounded. Tests themselves never wait on wall time: they
move standin's virtual clock through the control API.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence


class StandinStartError(RuntimeError):
    """standin did not become ready; the message is standin's own one-line error when it gave one."""


@dataclass(frozen=True)
class StartOptions:
    """What `standin start` is given. Hashable, so processes can be shared between equal options."""

    fixtures: tuple = ()  # paths or shipped names, applied in order
    seed: Optional[int] = None
    start_time: Optional[str] = None
    clock: Optional[str] = None
    control_token: Optional[str] = None
    tls: bool = False
    args: tuple = ()  # further `standin start` arguments, as given
    bin: Optional[str] = None  # the executable (a path or a command line); None: STANDIN_BIN, PATH, npx
    cwd: Optional[str] = None
    start_timeout: float = 30.0


def find_command(explicit: Optional[str] = None) -> List[str]:
    """The command that runs standin: the option, then STANDIN_BIN, then `standin` on PATH, then
    the `standin` the Node project in the working directory has installed, through npx.
    `npx --no-install`, so a project without it fails with npx's message instead of downloading
    a package of that name."""
    for given in (explicit, os.environ.get("STANDIN_BIN")):
        if given:
            return [given]
    on_path = shutil.which("standin")
    if on_path:
        return [on_path]
    npx = shutil.which("npx")
    if npx:
        return [npx, "--no-install", "standin"]
    raise StandinStartError(
        "standin: no executable found: set the standin_bin ini option or STANDIN_BIN, put `standin` on PATH, or install the npm package (npx standin)"
    )


@dataclass
class StandinProcess:
    """A running `standin start`, with the URLs its ready file gave."""

    process: subprocess.Popen
    urls: Dict[str, str]
    workdir: Path
    ca_file: Optional[str] = None

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (standin closes its ports and exits), SIGKILL after `timeout` seconds. The
        process leads its own process group, so an `npx` wrapper and its node child both go."""
        if self.process.poll() is None:
            _signal_group(self.process, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                _signal_group(self.process, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def start_arguments(options: StartOptions, ready_file: Path, tls_dir: Path) -> List[str]:
    args = ["start", "--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0", "--ready-file", str(ready_file)]
    for fixture in options.fixtures:
        args += ["--fixture", str(fixture)]
    if options.seed is not None:
        args += ["--seed", str(options.seed)]
    if options.start_time is not None:
        args += ["--start-time", options.start_time]
    if options.clock is not None:
        args += ["--clock", options.clock]
    if options.control_token is not None:
        args += ["--control-token", options.control_token]
    if options.tls:
        args += ["--tls-dir", str(tls_dir)]
    return args + list(options.args)


def start(options: StartOptions) -> StandinProcess:
    """Starts standin and returns once its ready file is written; raises StandinStartError with
    standin's one-line error if it exits first, or after `start_timeout` seconds."""
    command = find_command(options.bin)
    workdir = Path(tempfile.mkdtemp(prefix="standin-pytest-"))
    ready_file, tls_dir, log = workdir / "ready.json", workdir / "tls", workdir / "standin.log"
    with open(log, "wb") as log_out:
        try:
            process = subprocess.Popen(
                command + start_arguments(options, ready_file, tls_dir),
                cwd=options.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log_out,
                start_new_session=True,
            )
        except OSError as error:
            shutil.rmtree(workdir, ignore_errors=True)
            raise StandinStartError(f"standin: cannot run {' '.join(command)}: {error.strerror}") from None
    deadline = time.monotonic() + options.start_timeout
    while not ready_file.exists():
        if process.poll() is not None:
            message = _last_line(log) or f"standin exited with status {process.returncode} before it was ready"
            shutil.rmtree(workdir, ignore_errors=True)
            raise StandinStartError(message)
        if time.monotonic() > deadline:
            _signal_group(process, signal.SIGKILL)
            process.wait()
            shutil.rmtree(workdir, ignore_errors=True)
            raise StandinStartError(f"standin was not ready within {options.start_timeout:g}s ({' '.join(command)})")
        time.sleep(0.01)
    # The ready file is written atomically (renamed into place), so one read sees all of it.
    urls = json.loads(ready_file.read_text())
    ca_file = (urls.get("ca") or str(tls_dir / "ca.pem")) if options.tls else None
    return StandinProcess(process=process, urls=urls, workdir=workdir, ca_file=ca_file)


def _document_file(document: dict) -> str:
    text = json.dumps(document, sort_keys=True)
    path = Path(tempfile.gettempdir()) / f"standin-fixture-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text)
        os.replace(partial, path)  # atomic, so parallel workers never read half a file
    return str(path)


def _last_line(log: Path) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def normalize_fixtures(value: object, base: Path) -> tuple:
    """A fixture option as `--fixture` values: a shipped name stays a name; a relative path that
    exists under `base` (the pytest root directory) becomes absolute, so the process's working
    directory does not matter; a dict (a fixture document) is written to a file named by its
    content, so equal documents share one file and one process."""
    items: Sequence[object] = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for item in items:
        if item is None or item == "":
            continue
        if isinstance(item, dict):
            out.append(_document_file(item))
            continue
        text = os.fspath(item) if isinstance(item, os.PathLike) else str(item)
        candidate = base / text
        out.append(str(candidate.resolve()) if not os.path.isabs(text) and candidate.exists() else text)
    return tuple(out)
