# lit configuration for fetchc's regression tests.
#
# Substitutions: %fetchc (the compiler), %xdsl-opt, FileCheck (the FileCheck
# implementation, see below), %examples (the shipped examples), %python,
# %mlir-opt (upstream MLIR's mlir-opt, see below), and lit's built-in `not`.
# fetchc, xdsl-opt and the `filecheck` package come from the Python
# environment running lit.
#
# Parameters (`lit -D NAME=VALUE test/lit`):
#   filecheck=PATH   run RUN lines' `FileCheck` with this binary (a bare name
#                    is looked up on PATH).  Default: LLVM's `FileCheck` on
#                    PATH, else the newest `FileCheck-NN` on PATH (Debian's
#                    llvm-NN-tools), else the Python `filecheck` package
#                    (`-D filecheck=filecheck` chooses that one).
#   fetchc_server=0  run every `%fetchc` as its own process instead of
#                    through the fork server (test/support/fetchc_server.py,
#                    default on: it imports fetchc once and forks a fresh
#                    child per command; see docs/architecture.md, Tests).
#   mlir_opt=PATH    the mlir-opt to use for the tests marked
#                    `REQUIRES: mlir-opt` (default: `mlir-opt` on PATH, else
#                    the newest `mlir-opt-NN` on PATH, as Debian's
#                    mlir-NN-tools installs it); `-D mlir_opt=` (empty)
#                    disables them.  Without an mlir-opt they are reported
#                    UNSUPPORTED (skipped).
#
# Features: `mlir-opt` when an mlir-opt runs; `mlir-opt-f4` when it also knows
# the f4E2M1FN and f8E8M0FNU types (MLIR 20 and later; MLIR 19 does not, so
# the FP4 examples cannot go through it).
import atexit
import os
import re
import shutil
import subprocess
import sys

import lit.formats

config.name = "fetchc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")

bindir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bindir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PYTHONHASHSEED"] = os.environ.get("PYTHONHASHSEED", "0")
# Every compile verifies the whole module after every pass (--verify-each).
config.environment["FETCHC_VERIFY_EACH"] = os.environ.get("FETCHC_VERIFY_EACH", "1")
# Every compile is a real one: no kernel compile cache (tested in test_compile_cache.py).
config.environment["FETCHC_NO_CACHE"] = os.environ.get("FETCHC_NO_CACHE", "1")
for var in ("HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
search_path = config.environment["PATH"]


def _tool(value, what):
    """A tool given as a path or a name on PATH; a fatal error if missing."""
    found = value if os.sep in value else shutil.which(value, path=search_path)
    if not found or not os.access(found, os.X_OK) or os.path.isdir(found):
        lit_config.fatal(f"-D {what}={value}: no such executable")
    return os.path.abspath(found)


repo = os.path.dirname(os.path.dirname(config.test_source_root))
support = os.path.join(repo, "test", "support")


def _fetchc_command():
    """`%fetchc`: the fork server's client when the server starts (and
    -D fetchc_server=0 does not turn it off), else the `fetchc` command."""
    real = shutil.which("fetchc", path=search_path)
    if lit_config.params.get("fetchc_server", "1") == "0" or not real:
        lit_config.note("%fetchc: the fetchc command (a process per RUN line)")
        return "fetchc"
    sys.path.insert(0, support)
    try:
        import fetchc_server
    finally:
        sys.path.remove(support)
    os.makedirs(config.test_exec_root, exist_ok=True)
    log = open(os.path.join(config.test_exec_root, "fetchc_server.log"), "w")
    server = fetchc_server.launch(sys.executable, dict(config.environment), log)
    log.close()
    if server is None:
        lit_config.warning("the fetchc fork server did not start (see Output/fetchc_server.log): %fetchc runs fetchc")
        return "fetchc"

    def stop():
        stats = server.stop()
        if stats:
            sys.stderr.write(f"fetchc fork server: {stats}\n")

    atexit.register(stop)
    lit_config.note("%fetchc: through the fork server (-D fetchc_server=0: a process per RUN line)")
    client = os.path.join(support, "fetchc_client.py")
    return f"{sys.executable} -I -S {client} {server.socket_path} {real}"


config.substitutions.append(("%fetchc", _fetchc_command()))
config.substitutions.append(("%xdsl-opt", "xdsl-opt"))
config.substitutions.append(("%examples", os.path.join(repo, "examples")))
config.substitutions.append(("%python", sys.executable))


def _runs(argv, stdin=""):
    try:
        return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _newest_versioned(tool):
    """The newest `tool-NN` on PATH (as Debian installs LLVM's tools), or None."""
    versioned = []
    for directory in search_path.split(os.pathsep):
        try:
            names = os.listdir(directory or ".")
        except OSError:
            continue
        for name in names:
            m = re.fullmatch(re.escape(tool) + r"-(\d+)", name)
            path = os.path.join(directory, name)
            if m and os.access(path, os.X_OK):
                versioned.append((int(m.group(1)), path))
    return max(versioned)[1] if versioned else None


# FileCheck: -D filecheck=..., else LLVM's FileCheck (FileCheck, FileCheck-NN)
# when one is on PATH (it starts in milliseconds, the Python package in 60 ms
# of CPU), else the Python `filecheck` package.
filecheck = lit_config.params.get("filecheck")
if filecheck:
    filecheck = _tool(filecheck, "filecheck")
else:
    filecheck = shutil.which("FileCheck", path=search_path) or _newest_versioned("FileCheck") or "filecheck"
    if filecheck != "filecheck" and not _runs([filecheck, "--version"]):
        filecheck = "filecheck"
lit_config.note(f"FileCheck: {filecheck}" + (" (the Python filecheck package)" if filecheck == "filecheck" else ""))


def _find_mlir_opt():
    given = lit_config.params.get("mlir_opt")
    if given is not None:
        return _tool(given, "mlir_opt") if given else None
    return shutil.which("mlir-opt", path=search_path) or _newest_versioned("mlir-opt")


mlir_opt = _find_mlir_opt()
if mlir_opt and _runs([mlir_opt, "--version"]):
    config.available_features.add("mlir-opt")
    f4_probe = '%0:2 = "probe.op"() : () -> (f4E2M1FN, f8E8M0FNU)\n'
    if _runs([mlir_opt, "--allow-unregistered-dialect", "-"], f4_probe):
        config.available_features.add("mlir-opt-f4")
    lit_config.note(f"mlir-opt: {mlir_opt}" + ("" if "mlir-opt-f4" in config.available_features else " (no FP4 types: FP4 examples skipped)"))
else:
    mlir_opt = "mlir-opt-not-found"
    lit_config.note("mlir-opt: not found; tests that need it are UNSUPPORTED (give one with -D mlir_opt=PATH)")
config.substitutions.append(("%mlir-opt", mlir_opt))
config.substitutions.append(("FileCheck", filecheck))
