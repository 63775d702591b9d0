"""``--verify-diagnostics`` with MLIR's semantics.

:func:`check_expected` compares the diagnostics of one input against the
``// expected-*`` comments of its text, as MLIR's
``SourceMgrDiagnosticVerifierHandler`` does, and returns the failures
``mlir-opt`` would print (empty list = success).

Spec: ir.md §5 (``--verify-diagnostics``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from fetchc.diagnostics import Diagnostic, Loc, display_name, flatten
from fetchc.frontend.ere import Regex, RegexError, compile_expected

__all__ = ["check_expected"]
# --------------------------------------------------------------------------- #

_LINE_BREAK_RE = re.compile(r"\r\n?|\n")

# Same pattern as MLIR's SourceMgrDiagnosticVerifierHandlerImpl::expected.
_EXPECTED_RE = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *"
    r"(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$"
)


@dataclass
class _Expected:
    severity: str
    line: int  # target line (original-file numbering); 0 = @unknown
    loc: Loc  # where the expected-* comment is
    text: str  # the {{...}} content as written
    designator: str  # "" or "@+1", "@above", ...
    regex: Regex | None = None
    unknown: bool = False
    dangling: bool = False
    matched: bool = False

    def match(self, message: str) -> bool:
        if self.regex is not None:
            return self.regex.search(message)
        return self.text in message


def _parse_expectations(text: str, filename: str, line_offset: int) -> tuple[list[_Expected], list[Diagnostic]]:
    """Scan ``text`` for ``expected-*`` designators (MLIR's
    ``computeExpectedDiags``); return them and errors for malformed ones."""
    expectations: list[_Expected] = []
    errors: list[Diagnostic] = []
    lines = _LINE_BREAK_RE.split(text)  # `\n`, `\r\n`, lone `\r`
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the text ends with a newline: no line after it
    last_non_designator = 0  # 0-based index of the last ordinary line
    pending_below: list[_Expected] = []
    for index, raw in enumerate(lines):
        found = _EXPECTED_RE.search(raw.rstrip())
        if found is None:
            for exp in pending_below:
                exp.line = index + 1 + line_offset
                exp.dangling = False
            pending_below.clear()
            last_non_designator = index
            continue
        severity, is_re, designator, where, content = found.groups()
        loc = (filename, index + 1 + line_offset, found.start() + 1)
        exp = _Expected(severity, index + 1 + line_offset, loc, content, designator or "")
        if is_re:
            try:
                exp.regex = compile_expected(content)
            except RegexError as err:  # "found start of regex with no end '}}'", "invalid regex: ..."
                errors.append(Diagnostic("error", str(err), loc))
                continue
        if where is None:
            pass
        elif where[0] in "+-":
            delta = int(where[1:])
            exp.line += delta if where[0] == "+" else -delta
        elif where == "unknown":
            exp.unknown = True
            exp.line = 0
        elif where == "above":
            exp.line = last_non_designator + 1 + line_offset
        else:  # below: the next line that is not itself a designator
            exp.dangling = True
            exp.line = -1  # matches nothing until that line is found
            pending_below.append(exp)
        expectations.append(exp)
    return expectations, errors


def check_expected(
    diagnostics: Sequence[Diagnostic],
    text: str,
    filename: str,
    line_offset: int = 0,
) -> list[Diagnostic]:
    """Check ``diagnostics`` against the ``expected-*`` comments of ``text``
    (``--verify-diagnostics``, MLIR semantics); return the failures.

    ``text`` is one input (a whole file, or one ``--split-input-file`` chunk
    whose first line is line ``line_offset + 1`` of ``filename``);
    ``diagnostics`` are all diagnostics produced for it (parser, verifier,
    passes).  Every diagnostic and every note (flattened, recursively) is
    matched against the expectations:

    * ``// expected-error {{text}}`` (also ``-note``, ``-warning``,
      ``-remark``) expects a diagnostic of that severity on the same line
      whose message *contains* ``text``; ``expected-error-re {{a{{[0-9]+}}b}}``
      matches literal text with ``{{regex}}`` blocks, each a POSIX extended
      regular expression as ``llvm::Regex`` reads it (``[[:alpha:]]``...),
      matched in linear time (:mod:`fetchc.frontend.ere`: no pattern can
      make the check run for minutes).
    * ``@+N`` / ``@-N``: N lines below / above; ``@above``: the closest line
      above that holds no ``expected-*``; ``@below``: the next such line
      below; ``@unknown``: a diagnostic without location.
    * Several expectations on one line each match one diagnostic; a further
      diagnostic matching an already matched expectation is accepted (as in
      MLIR).  Diagnostics without a location only match ``@unknown``.

    Failures, as ``mlir-opt`` prints them: ``unexpected <severity>: <msg>``
    at each unmatched diagnostic; ``'<sev>' diagnostic emitted when expecting
    a '<sev>'`` at the expectation when only the severity differs; then, at
    each unmatched expectation's comment, ``expected <severity> "<text>" was
    not produced`` (with the reason appended when its designator points
    outside ``text``); malformed ``-re`` patterns give ``invalid regex: ...``.

    Returns the failure diagnostics (all ``error``); empty list = success.
    Raises nothing.
    """
    expectations, failures = _parse_expectations(text, filename, line_offset)
    n_lines = sum(1 for _ in _LINE_BREAK_RE.finditer(text)) + (0 if text.endswith(("\n", "\r")) else 1)
    first, last = line_offset + 1, line_offset + max(n_lines, 1)
    unexpected = [
        failure for diag in flatten(diagnostics) if (failure := _match(diag, expectations, filename)) is not None
    ]
    missing = [_missing(exp, first, last) for exp in expectations if not exp.matched]
    return failures + unexpected + missing


def _match(diag: Diagnostic, expectations: list[_Expected], filename: str) -> Diagnostic | None:
    """Mark the expectation ``diag`` meets; else the failure to report."""
    located = diag.loc is not None and diag.loc[1] > 0
    if located:
        assert diag.loc is not None
        same_file = display_name(diag.loc[0]) == display_name(filename)
        candidates = [e for e in expectations if same_file and not e.unknown and e.line == diag.loc[1]]
    else:
        candidates = [e for e in expectations if e.unknown]
    hit = next(
        (
            e
            for e in sorted(candidates, key=lambda e: e.matched)
            if e.severity == diag.severity and e.match(diag.message)
        ),
        None,
    )
    if hit is not None:
        hit.matched = True
        return None
    near = next((e for e in candidates if e.match(diag.message)), None)
    if near is not None:  # MLIR's words, verbatim ("expecting a 'error'"): tests compare the two tools' output
        return Diagnostic("error", f"'{diag.severity}' diagnostic emitted when expecting a '{near.severity}'", near.loc)
    return Diagnostic(
        "error",
        f"unexpected {diag.severity}: {diag.message}",
        diag.loc if located else None,
        op=None if located else diag.op,
        location=None if located else diag.location,
    )


def _missing(exp: _Expected, first: int, last: int) -> Diagnostic:
    """The failure for an expectation no diagnostic met."""
    message = f'expected {exp.severity} "{exp.text}" was not produced'
    if exp.dangling:
        message += f": no line follows its '{exp.designator}' designator"
    elif not exp.unknown and not first <= exp.line <= last:
        message += (
            f": its designator '{exp.designator}' points at line {exp.line}, outside the input (lines {first}-{last})"
        )
    return Diagnostic("error", message, exp.loc)
