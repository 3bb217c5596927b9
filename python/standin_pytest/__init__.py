"""pytest fixtures for standin: start it on free loopback ports, drive its virtual clock and
control API, stop it after. See docs/python.md."""

from .client import AwaitTimeout, Standin, StandinError
from .process import StandinStartError

__all__ = ["AwaitTimeout", "Standin", "StandinError", "StandinStartError"]
