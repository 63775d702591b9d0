"""XDG variables (issue 26 item 14; ``fetchc.cachedir.xdg_dir``).

A relative ``XDG_CACHE_HOME`` was used as it was, so the start-up code
cache, which the command executes, and the kernel cache were created under
whatever directory the user stood in.  The XDG Base Directory specification
says a relative path in these variables is invalid and must be ignored.
"""

from __future__ import annotations

import os

import pytest

from fetchc import cachedir, startup


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FETCHC_CACHE_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


@pytest.mark.parametrize("value", ["xdg", "./xdg", "../xdg", "~/xdg", "", " /abs"])
def test_a_relative_xdg_cache_home_is_ignored(home, monkeypatch, value):
    monkeypatch.setenv("XDG_CACHE_HOME", value)
    assert cachedir.cache_dir() == os.path.join(str(home), ".cache", "fetchc")
    assert startup.cache_path("compile").startswith(os.path.join(str(home), ".cache", "fetchc") + os.sep)


def test_an_absolute_xdg_cache_home_is_used(home, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cachedir.cache_dir() == os.path.join(str(tmp_path / "xdg"), "fetchc")


def test_no_absolute_home_means_no_cache(home, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "xdg")
    monkeypatch.setenv("HOME", "relative-home")
    assert cachedir.cache_dir() is None
    assert startup.cache_path("compile") is None


def test_fetchc_cache_dir_is_still_taken_as_given(home, monkeypatch):
    """``FETCHC_CACHE_DIR`` is fetchc's own variable, not XDG's: an explicit
    choice, used as given (``""`` turns the caches off)."""
    monkeypatch.setenv("XDG_CACHE_HOME", "xdg")
    monkeypatch.setenv("FETCHC_CACHE_DIR", "mine")
    assert cachedir.cache_dir() == "mine"
    monkeypatch.setenv("FETCHC_CACHE_DIR", "")
    assert cachedir.cache_dir() is None
