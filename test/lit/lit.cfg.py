# lit configuration for fetchc's regression tests.
#
# Substitutions: %fetchc (the compiler), %xdsl-opt, FileCheck / filecheck
# (the `filecheck` package), %examples (the shipped examples), and lit's
# built-in `not`.  Tools are taken from the Python environment running lit.
import os
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
for var in ("HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

repo = os.path.dirname(os.path.dirname(config.test_source_root))
config.substitutions.append(("%fetchc", "fetchc"))
config.substitutions.append(("%xdsl-opt", "xdsl-opt"))
config.substitutions.append(("%examples", os.path.join(repo, "examples")))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("FileCheck", "filecheck"))
