# lit configuration for fetchc's regression tests.
#
# Substitutions: %fetchc (the compiler), %xdsl-opt, FileCheck (the FileCheck
# implementation, see below), %examples (the shipped examples), %python,
# %mlir-opt (upstream MLIR's mlir-opt, see below), and lit's built-in `not`.
# fetchc, xdsl-opt and the `filecheck` package come from the Python
# environment running lit.
#
# Parameters (`lit -D NAME=VALUE test/lit`):
#   filecheck=PATH   run RUN lines' `FileCheck` with this binary, e.g. LLVM's
#                    `-D filecheck=/usr/lib/llvm-19/bin/FileCheck` (default:
#                    the Python `filecheck` package).  A bare name is looked
#                    up on PATH.
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
config.substitutions.append(("%fetchc", "fetchc"))
config.substitutions.append(("%xdsl-opt", "xdsl-opt"))
config.substitutions.append(("%examples", os.path.join(repo, "examples")))
config.substitutions.append(("%python", sys.executable))

# FileCheck: the Python `filecheck` package unless -D filecheck=... names a binary.
filecheck = lit_config.params.get("filecheck")
if filecheck:
    filecheck = _tool(filecheck, "filecheck")
    lit_config.note(f"FileCheck: {filecheck}")
else:
    filecheck = "filecheck"


def _find_mlir_opt():
    given = lit_config.params.get("mlir_opt")
    if given is not None:
        return _tool(given, "mlir_opt") if given else None
    found = shutil.which("mlir-opt", path=search_path)
    if found:
        return found
    versioned = []
    for directory in search_path.split(os.pathsep):
        try:
            names = os.listdir(directory or ".")
        except OSError:
            continue
        for name in names:
            m = re.fullmatch(r"mlir-opt-(\d+)", name)
            path = os.path.join(directory, name)
            if m and os.access(path, os.X_OK):
                versioned.append((int(m.group(1)), path))
    return max(versioned)[1] if versioned else None


def _runs(argv, stdin=""):
    try:
        return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


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
