"""``fetchc.process.gc_paused`` across threads (issue 26 item 11).

A compile pauses Python's cyclic collector; a library call must leave the
host's collector exactly as the host leaves it, whatever its threads do.
The old pause called ``gc.disable()`` and re-enabled on exit when it had
found the collector enabled: a host's ``gc.disable()`` made on another
thread while a compile ran was undone when the compile ended, and two
compiles reading ``gc.isenabled()`` could take each other's state for the
host's.  The pause now never touches the switch (it raises generation 0's
threshold, counted and locked across threads; the last pause puts the
host's threshold back unless the host set one meanwhile).

Every ordering here is forced with events, never with timing.
"""

from __future__ import annotations

import gc
import itertools
import threading

import pytest
from samples import DECODE

import fetchc
import fetchc.api
from fetchc.process import gc_is_paused, gc_paused


@pytest.fixture(autouse=True)
def host_collector():
    """Each test starts with the collector enabled at its usual threshold
    and leaves it so."""
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    gc.enable()
    yield
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


class Pauser:
    """A thread that enters ``gc_paused`` when told, and leaves when told."""

    def __init__(self) -> None:
        self.go_in, self.is_in = threading.Event(), threading.Event()
        self.go_out, self.is_out = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.go_in.wait()
        with gc_paused():
            self.is_in.set()
            self.go_out.wait()
        self.is_out.set()

    def enter(self) -> None:
        self.go_in.set()
        assert self.is_in.wait(10)

    def leave(self) -> None:
        self.go_out.set()
        assert self.is_out.wait(10)
        self.thread.join(10)


def test_no_automatic_collection_starts_inside_and_does_again_after():
    runs: list[str] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            runs.append(phase)

    def cycles() -> None:
        for _ in range(20000):  # 20000 cyclic objects: ~30 collections at the usual threshold of 700
            a: list = []
            a.append(a)

    gc.callbacks.append(count)
    try:
        with gc_paused():
            cycles()
            assert runs == [] and gc_is_paused()
        cycles()
        assert runs and not gc_is_paused()
    finally:
        gc.callbacks.remove(count)


HOST_ACTIONS = {
    "nothing": lambda: None,
    "disable": gc.disable,
    "enable": gc.enable,
    "set_threshold": lambda: gc.set_threshold(500, 9, 8),
}


def _state() -> tuple[bool, tuple[int, ...]]:
    return gc.isenabled(), gc.get_threshold()


@pytest.mark.parametrize("initially_enabled", [True, False])
@pytest.mark.parametrize("order", ["AB AB", "AB BA"])
def test_every_interleaving_of_two_pauses_and_a_host_leaves_the_host_s_state(initially_enabled, order):
    """Two threads pause (A enters, B enters, then they leave in either
    order); the host thread (this one) does one action at each of the five
    points in between and around.  Afterwards the collector is exactly as
    the host's last action left it, and no automatic collection was possible
    while a pause was active (unless the host itself set a threshold)."""
    points = 5
    for action, point in itertools.product(sorted(HOST_ACTIONS), range(points)):
        gc.set_threshold(700, 10, 10)
        (gc.enable if initially_enabled else gc.disable)()
        a, b = Pauser(), Pauser()
        first, second = (a, b) if order == "AB AB" else (b, a)
        steps = [a.enter, b.enter, first.leave, second.leave]
        for k in range(points):
            if k == point:
                HOST_ACTIONS[action]()
                expected = _state()  # what the host now has, the pause's threshold aside
                if expected[1][0] > 1 << 30:
                    expected = (expected[0], (700, 10, 10))
            if k < len(steps):
                steps[k]()
                if 1 <= k <= 2 and not (action == "set_threshold" and point <= k):
                    assert gc_is_paused()  # a pause is active: no automatic collection
        assert _state() == expected, (action, point)


def test_a_host_disable_on_another_thread_during_a_compile_is_kept(monkeypatch):
    """Through ``fetchc.compile``: the compile runs on a thread and is held
    inside its pause while the host disables the collector; when it ends,
    the collector stays disabled (it was re-enabled before)."""
    inside, release = threading.Event(), threading.Event()
    real = fetchc.api.compile_uncached

    def held(*args, **kwargs):
        inside.set()
        assert release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(fetchc.api, "compile_uncached", held)
    results: list = []
    t = threading.Thread(target=lambda: results.append(fetchc.compile(DECODE, cache=False)))
    t.start()
    assert inside.wait(10)
    gc.disable()  # the host's own choice, made while the compile runs
    release.set()
    t.join(30)
    assert len(results) == 1 and results[0].programs
    assert not gc.isenabled()
    assert gc.get_threshold()[0] < 1 << 30


def test_the_pause_is_released_when_the_body_raises():
    with pytest.raises(RuntimeError):
        with gc_paused():
            raise RuntimeError("boom")
    assert gc.isenabled() and not gc_is_paused()
