"""Verifying a module: every op, one error each, as diagnostics.

Spec: ir.md §3 (one op gets one error: the first rule it breaks).
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from fetchc.frontend.diagnostics import Diagnostic, OpError, exception_text, op_error
from fetchc.frontend.xdsl_compat import verify_op_alone

__all__ = ["verify_module"]


def _walk_preorder(root: Operation) -> Iterator[Operation]:
    """Pre-order walk (same order as ``Operation.walk()``), iterative so that
    deeply nested IR cannot exhaust Python's recursion limit."""
    stack: list[Operation] = [root]
    while stack:
        op = stack.pop()
        yield op
        children: list[Operation] = []
        for region in op.regions:
            for block in region.blocks:
                children.extend(block.ops)
        stack.extend(reversed(children))


def verify_module(module: Operation) -> list[Diagnostic]:
    """Verify ``module`` and every op nested in it; return all errors.

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
    for op in _walk_preorder(module):
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
