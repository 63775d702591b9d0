"""Compatibility path: ``fetchc.diagnostics`` is
:mod:`fetchc.frontend.diagnostics` (the model and rendering), plus
:func:`~fetchc.frontend.verify.verify_module` and
:func:`~fetchc.frontend.verify_diagnostics.check_expected`."""

from fetchc.frontend.diagnostics import *  # noqa: F401,F403
from fetchc.frontend.diagnostics import __all__ as _all
from fetchc.frontend.verify import verify_module  # noqa: F401
from fetchc.frontend.verify_diagnostics import check_expected  # noqa: F401

__all__ = [*_all, "verify_module", "check_expected"]
