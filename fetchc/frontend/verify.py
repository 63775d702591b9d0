"""Verifying a module: every op, one error each, as diagnostics.

Spec: ir.md §3 (one op gets one error: the first rule it breaks).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from fetchc.diagnostics import Diagnostic, OpError
from fetchc.frontend.locations import exception_text, op_error
from fetchc.frontend.xdsl_compat import verify_op_alone
from fetchc.process import memory_failure
from fetchc.rewriting import walk

__all__ = ["verify_module", "xdsl_message"]


_NOT_TERMINATOR = re.compile(r"Operation \S+ terminates block in single-block region but is not a terminator")
_BASE_ATTRIBUTE = re.compile(
    r"(operand|result) '(\w+)' at position (\d+) does not verify:\s*(.+) should be of base attribute (\S+)", re.S
)


def xdsl_message(op: Operation, text: str) -> str:
    """A message of xDSL's generic verification in fetchc's words (MLIR-like,
    one line, saying the fix), for the messages users meet:

    * a block whose last op is no terminator: in a ``func.func`` body, "a
      function body must end with func.return";
    * an operand or result of the wrong kind (``operand 'x' at position 2
      does not verify: T should be of base attribute B``): "its operand 'x'
      (#2) is T, but must be B".

    Any other message is returned unchanged."""
    if _NOT_TERMINATOR.fullmatch(text):
        parent = op.parent_op()
        if isinstance(parent, FuncOp):
            outs = parent.function_type.outputs.data
            ret = "func.return" + (f" %v : {', '.join(str(t) for t in outs)}" if outs else "")
            return (
                f"is the last op of the body of func @{parent.sym_name.data}, but a function body must end with "
                f"func.return: add '{ret}' after it"
            )
        if parent is not None:
            return (
                f"is the last op of a block of '{parent.name}', but it is not a terminator: end the block with "
                f"the terminator '{parent.name}' expects"
            )
    m = _BASE_ATTRIBUTE.fullmatch(text.strip())
    if m:
        kind, name, pos, got, want = m.groups()
        return f"its {kind} '{name}' (#{pos}) is {' '.join(got.split())}, but must be {want}"
    return text


def verify_module(module: Operation, only: Collection[Operation] | None = None) -> list[Diagnostic]:
    """Verify ``module`` and every op nested in it (or, with ``only``, just
    those of its ops: the set a pass created, :class:`fetchc.rewriting.ChangeTracker`);
    return all errors.

    Each op is verified on its own (``op.verify(verify_nested_ops=False)``,
    minus xDSL's IR dump, see :func:`~fetchc.frontend.xdsl_compat.verify_op_alone`),
    in pre-order (the order of ``module.walk()``).  An op gives at most one
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
            diagnostics.append(op_error(op, xdsl_message(op, exception_text(err))))
        except MemoryError:
            raise  # a resource, not the input: the command line says "out of memory"
        except Exception as err:  # noqa: BLE001 - a broken verifier is a diagnostic
            if memory_failure(err):
                raise MemoryError from err
            diagnostics.append(
                op_error(
                    op,
                    f"verifier failed with {type(err).__name__}: {exception_text(err)}",
                )
            )
    return diagnostics
