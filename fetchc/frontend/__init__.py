"""fetchc's front end: MLIR text in, verified IR out.

:mod:`.parsing` (``parse_module``, ``--split-input-file``, UTF-8 decoding),
:mod:`.located_parser` (xDSL's parser with MLIR locations and input bounds),
:mod:`.locations` (MLIR locations as ``file:line:col``), :mod:`.render`
(diagnostics printed as ``mlir-opt`` prints them), :mod:`.verify` (every op
verified, one error each), :mod:`.structural` (the specialised IRDL checks of
fetchc's ops), :mod:`.verify_diagnostics` (``--verify-diagnostics``),
:mod:`.context` (the dialect and pass registry) and :mod:`.xdsl_compat`
(every patch of xDSL internals).  The error types are
:mod:`fetchc.diagnostics`.
"""
