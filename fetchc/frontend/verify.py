"""Verifying a module: every op, one error each, as diagnostics.

Spec: ir.md §3 (one op gets one error: the first rule it breaks).
"""

from __future__ import annotations

from collections.abc import Collection

from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from fetchc.diagnostics import Diagnostic, OpError

from fetchc.frontend.locations import exception_text, op_error
from fetchc.frontend.xdsl_compat import verify_op_alone
from fetchc.rewriting import walk

__all__ = ["verify_module"]


def verify_module(module: Operation, only: Collection[Operation] | None = None) -> list[Diagnostic]:
    """Verify ``module`` and every op nested in it (or, with ``only``, just
    those of its ops: the set a pass created, :class:`fetchc.rewriting.ChangeTracker`);
    return all errors.

    Each op is verified on its own (``op.verify(verify_nested_ops=False)``,
    minus xDSL's IR dump, see :func:`~fetchc.frontend.xdsl_compat.verify_op_alone`), in pre-order (the order of ``module.walk()``).  An op gives at most one
    error: an :class:`OpError` becomes its message plus notes, any other
    ``VerifyException`` its first argument (xDSL's ``__notes__``, a dump of
    the whole IR, are ignored), and any other exception raised by a verifier
    becomes ``verifier failed with <Type>: <message>``.  Every message gets
    MLIR's ``'<op name>' op`` prefix and the op's location.

    Unlike ``mlir-opt``, which stops at the first op that fails, this reports
    every failing op, so one run shows every problem of a file.

    Returns the errors in walk order (empty list = the module verifies).
    Raises nothing but ``MemoryError``: verifier exceptions never propagate.
    """
    diagnostics: list[Diagnostic] = []
    for op in walk(module):
        if only is not None and op not in only:
            continue
        try:
            verify_op_alone(op)
        except OpError as err:
            diagnostics.append(op_error(op, err.message, err.notes))
        except VerifyException as err:
            diagnostics.append(op_error(op, exception_text(err)))
        except MemoryError:
            raise  # a resource, not the input: the command line says "out of memory"
        except Exception as err:  # noqa: BLE001 - a broken verifier is a diagnostic
            diagnostics.append(
                op_error(
                    op,
                    f"verifier failed with {type(err).__name__}: "
                    f"{exception_text(err)}",
                )
            )
    return diagnostics
