"""The ``fetchc`` command for the pytest tests, through the fork server.

:data:`FETCHC` is the argv prefix that runs ``python -m fetchc.cli`` (the
tests' spelling of the ``fetchc`` command): through :mod:`fetchc_server`,
started for this process on first import (so once per pytest process, and
once per pytest-xdist worker), or as a plain process with
``FETCHC_TEST_SERVER=0`` or where the server cannot run.  A command the
server cannot reproduce (another environment, ``ulimit``, see
:func:`fetchc_server.refusal`) runs as a real process by itself, so a test
that sets ``env=`` or ``preexec_fn`` for a subprocess still gets what it
asked for.  :data:`REAL` is always a fresh process, for the tests whose
subject is the process itself (start-up, imports).  The server is stopped at
exit, and exits by itself when this process is gone.
"""

from __future__ import annotations

import atexit
import os
import sys
from pathlib import Path

import fetchc_server

__all__ = ["FETCHC", "REAL", "SERVER"]

REAL = [sys.executable, "-m", "fetchc.cli"]
CLIENT = Path(__file__).with_name("fetchc_client.py")


def _start() -> fetchc_server.Server | None:
    if os.environ.get("FETCHC_TEST_SERVER", "1") == "0":
        return None
    server = fetchc_server.launch(sys.executable, dict(os.environ))
    if server is not None:
        atexit.register(server.stop)
    return server


SERVER = _start()
FETCHC = REAL if SERVER is None else [sys.executable, "-I", "-S", str(CLIENT), SERVER.socket_path, "-m", "fetchc.cli"]
