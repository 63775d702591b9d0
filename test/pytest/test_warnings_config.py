"""pytest's ``filterwarnings`` (pyproject.toml) hides xDSL's own warnings
and nothing of fetchc's (issue 27, item 8).  The test runs under those
filters (pytest installs them around every test), so what it records is what
a run of the suite would show."""

from __future__ import annotations

import warnings

from fetchc.diagnostics import Diagnostic, DiagnosticWarning


def _shown(*emit) -> list[str]:
    """The messages of the warnings ``emit`` (``warn_explicit`` argument
    tuples) that the active filters let through."""
    with warnings.catch_warnings(record=True) as got:  # keeps the active filters, records instead of printing
        for message, category, module in emit:
            warnings.warn_explicit(message, category, f"{module.replace('.', '/')}.py", 1, module=module)
    return [str(w.message) for w in got]


def test_xdsl_warnings_are_hidden_and_ours_are_not():
    ours = DiagnosticWarning(Diagnostic("warning", "argument 'pad' is not used by the kernel", ("k.mlir", 3, 5)))
    shown = _shown(
        ("hello", DeprecationWarning, "xdsl.utils.arg_spec"),
        ("Unable to remove cast X because it is not unifiable with its uses", UserWarning,
         "xdsl.transforms.reconcile_unrealized_casts"),
        (ours, DiagnosticWarning, "fetchc.golden.run"),
        ("hello", DeprecationWarning, "fetchc.driver"),  # the same text from fetchc: not filtered
        ("hello again", DeprecationWarning, "xdsl.utils.arg_spec"),  # another xDSL deprecation: not filtered
        ("Unable to remove cast Y", UserWarning, "fetchc.passes.place_dm"),
    )  # fmt: skip
    assert shown == [str(ours), "hello", "hello again", "Unable to remove cast Y"]


def test_the_real_xdsl_deprecation_is_hidden():
    """Instantiating xDSL's ``test-deprecation`` pass from a pipeline (as
    test_xdsl_passes.py does) warns from ``xdsl.utils.arg_spec``: filtered."""
    from fetchc.driver import parse_pipeline

    with warnings.catch_warnings(record=True) as got:
        (p,) = parse_pipeline("test-deprecation")
    assert p.name == "test-deprecation"
    assert [str(w.message) for w in got] == []
