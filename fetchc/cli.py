"""The ``fetchc`` command line (ir.md §5).

* ``fetchc in.mlir -o seq.bin``: compile (parse, verify,
  ``fetch-legalize-convert``, ``fetch-split-scaling``, ``fetch-to-seq``,
  serialise).  ``-`` reads stdin.  ``--emit=bin|mlir|seq``, ``-p`` /
  ``--pass-pipeline`` (either spelling of a pipeline), ``--split-input-file``,
  ``--verify-diagnostics``, ``--verify-each``, ``--mlir-print-op-generic``,
  ``--mlir-print-ir-before-all``, ``--mlir-print-ir-after-all``,
  ``--mlir-print-debuginfo`` behave as in ``mlir-opt``; ``xdsl-opt``'s
  spellings (``--print-op-generic``, ...) work too.
* ``fetchc dis seq.bin [--json]``: print a ``seq.bin`` readably.
* ``fetchc sim seq.bin (--dm image.bin | --arg NAME=FILE.npy ...) [--program NAME]
  -o out.npy``: run its programs.
* ``fetchc run kernel.mlir [--entry FUNC] --arg NAME=FILE.npy|VALUE ... -o
  out.npz``: the golden model of a whole kernel.

Exit status: 0 on success, 1 on any error (with a located ``error:``
diagnostic on stderr), 2 for command-line usage errors.  On any error no
output file is created or overwritten.
"""

from __future__ import annotations

import gc
import os
import sys


def _started_as_command() -> bool:
    """Whether this process is the ``fetchc`` command (the console script,
    or ``python -m fetchc.cli``), not a program that imports this module."""
    return __name__ == "__main__" or os.path.basename(sys.argv[0] if sys.argv else "") == "fetchc"


def _last_words(e: BaseException) -> None:
    """:func:`fetchc.command.last_words` (one ``error:`` line, exit 1)."""
    try:
        from fetchc.command import last_words
    except BaseException:  # noqa: BLE001 - out of memory for that too
        os.write(2, b"error: out of memory while starting fetchc\n")
        os._exit(1)
    last_words(e)


try:
    from fetchc import startup

    # Before xDSL is imported, with the cache of this subcommand: see fetchc/startup.py.
    startup.install(sys.argv[1] if sys.argv[1:2] and sys.argv[1] in ("dis", "sim", "run") else "compile")

    import argparse
    import contextlib
    import functools
    import json
    import stat
    from collections.abc import Callable
    from typing import TYPE_CHECKING, NoReturn

    from fetchc import __version__
    from fetchc.diagnostics import Diagnostic, DiagnosticError
    from fetchc.escape import printable
    from fetchc.process import (
        ResourceExhausted,
        call_with_deep_stack,
        gc_paused,
        is_memory_message,
        limit_malloc_arenas,
        limit_text,
        load_numpy,
        memory_failure,
        stack_text,
    )

    if TYPE_CHECKING:
        from fetchc.seqbin import SeqBin
except BaseException as _failure:  # the command shows no traceback, not even here
    try:
        _command = _started_as_command()
    except BaseException:  # noqa: BLE001 - out of memory again: it is the command that failed to start
        _command = True
    if not _command:
        raise
    try:
        _last_words(_failure)
    finally:  # _last_words never returns; if even calling it fails, still one line and exit 1
        os.write(2, b"error: out of memory while starting fetchc\n")
        os._exit(1)


class _ArgumentParser(argparse.ArgumentParser):
    """argparse, with its usage errors (which quote the command line:
    ``unrecognized arguments: ...``) escaped like every other message."""

    def error(self, message: str):
        super().error(printable(message))


class _CompileParser(_ArgumentParser):
    """The compiler's parser: ``--help`` ends with the passes and their
    options (:func:`fetchc.driver.pass_help`), built only when asked for."""

    def format_help(self) -> str:
        from fetchc.driver import pass_help

        return super().format_help() + "\n" + pass_help()


def _compile_parser() -> argparse.ArgumentParser:
    p = _CompileParser(
        prog="fetchc",
        description="Compile MLIR for the RNGD Fetch Adapter into a fetch-sequencer configuration (seq.bin). "
        "Subcommands: 'fetchc dis seq.bin' prints one, 'fetchc sim seq.bin --dm image.bin' runs one, "
        "'fetchc run kernel.mlir --arg NAME=FILE.npy ... -o out.npz' runs a whole kernel on the golden model. "
        "Options spelled as in mlir-opt and as in xdsl-opt both work. Every command and option: docs/cli.md.",
    )
    p.add_argument("input", nargs="?", default="-", help="input .mlir file, '-' for stdin (default)")
    p.add_argument("-o", dest="output", default="-", help="output file, '-' for stdout (default)")
    p.add_argument(
        "--emit",
        choices=("bin", "mlir", "seq"),
        default=None,
        help="bin: seq.bin (the default, unless -o ends in .mlir); mlir: the IR after the pipeline (default "
        "pipeline without fetch-to-seq; the default for -o FILE.mlir); seq: the IR in the fetch_seq dialect",
    )
    p.add_argument(
        "-p",
        "--pass-pipeline",
        "--passes",
        dest="passes",
        action="append",
        metavar="PIPELINE",
        help="run exactly these passes: 'PASS{option=value},PASS' (xdsl-opt) or 'builtin.module(PASS,PASS)' "
        "(mlir-opt); '' runs none; the passes are listed below",
    )
    p.add_argument("--split-input-file", action="store_true", help="'// -----' separates independent inputs")
    p.add_argument(
        "--verify-diagnostics", action="store_true", help="check '// expected-error {{...}}' etc. (MLIR semantics)"
    )
    p.add_argument(
        "--verify-each",
        action="store_true",
        default=None,
        help="verify the whole module after every pass, as mlir-opt does (default: verify after parsing, then "
        "only what each pass created; the FETCHC_VERIFY_EACH environment variable turns it on too)",
    )
    p.add_argument(
        "--mlir-print-op-generic",
        "--print-op-generic",
        dest="print_op_generic",
        action="store_true",
        help="print ops in the generic form",
    )
    p.add_argument(
        "--mlir-print-ir-before-all",
        dest="print_ir_before_all",
        action="store_true",
        help="print the IR to stderr before every pass",
    )
    p.add_argument(
        "--mlir-print-ir-after-all",
        "--print-ir-after-all",
        dest="print_ir_after_all",
        action="store_true",
        help="print the IR to stderr after every pass",
    )
    p.add_argument(
        "--mlir-print-debuginfo",
        "--print-debuginfo",
        dest="mlir_print_debuginfo",
        action="store_true",
        help="print each op's location (loc(...)) with --emit=mlir/seq, as mlir-opt does; "
        "use with --mlir-print-op-generic",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="do not use the kernel compile cache (FETCHC_NO_CACHE=1 does the same; see docs/cli.md)",
    )
    p.add_argument("--version", action="version", version=f"fetchc {__version__}")
    return p


def _error(msg: str) -> int:
    """Print ``error: msg`` (escaped: it may quote file names and names from
    the input, :func:`fetchc.escape.printable`) and return exit status 1."""
    sys.stderr.write(printable(f"error: {msg}") + "\n")
    return 1


def _warn(msg: str) -> None:
    sys.stderr.write(printable(f"warning: {msg}") + "\n")


def _file_error(path: str, err: object) -> int:
    """An error about a file's content, as ``fetchc dis`` and the compiler
    report one: ``path: error: message`` (escaped)."""
    sys.stderr.write(printable(f"{path}: error: {err}") + "\n")
    return 1


MAX_INPUT_BYTES = 1 << 30
"""The largest input file read (an MLIR text or a ``seq.bin``; a ``--dm``
image is bounded by ``fetchc sim``'s memory budget instead): far beyond what
fetchc compiles in reasonable time, and a bound for streams that never end
(``/dev/zero``)."""


def _read_input(path: str, limit: int | None = None) -> bytes:
    """The whole input ``path`` (``-``: stdin), at most ``limit`` bytes
    (default and cap: :data:`MAX_INPUT_BYTES`, less when the memory fetchc
    may use is less, :func:`fetchc.process.memory_budget`): a larger regular
    file is refused from its size, a stream (a pipe, a FIFO, ``/dev/zero``)
    once it has given more.  Raises ``OSError`` (``EFBIG`` with the reason
    for a refused input)."""
    import errno

    from fetchc.process import memory_budget

    limit = min(MAX_INPUT_BYTES if limit is None else limit, MAX_INPUT_BYTES, memory_budget(None)[0])
    f = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115 - closed below
    try:
        try:
            st = os.fstat(f.fileno())
        except (OSError, ValueError, AttributeError):  # an in-memory stdin (a test harness)
            st = None
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_size > limit:
            raise OSError(
                errno.EFBIG, f"it is {st.st_size} bytes, more than the {limit} bytes fetchc reads from one input"
            )
        chunks, size = [], 0
        while chunk := f.read(min(1 << 24, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise OSError(errno.EFBIG, f"it holds more than {limit} bytes, the most fetchc reads from one input")
        return b"".join(chunks)
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def _identities(paths) -> list:
    """The device and inode of each input that is a regular file
    (:func:`fetchc.outputs.input_identity`): ``-o`` must not be one."""
    from fetchc.outputs import input_identity

    return [i for i in (input_identity(p) for p in paths) if i is not None]


def _refused(path: str, inputs: list, binary: str | None = None, hint: str = "") -> int:
    """``error: refusing ...`` and 1 when ``-o path`` is an input or a
    terminal for binary data (:func:`fetchc.outputs.check_output`), checked
    before any work; else 0."""
    from fetchc.outputs import OutputRefused, check_output

    try:
        check_output(path, inputs=inputs, binary=binary, hint=hint)
    except OutputRefused as e:
        return _error(str(e))
    return 0


def _write(path: str, data, inputs: list, binary: str | None = None, hint: str = "", before_commit=None) -> int:
    """Write ``-o path`` (:func:`fetchc.outputs.write_output`) and return the
    exit status: 0, or 1 with ``error: ...`` (nothing created or
    overwritten): an output that is an input or a terminal for ``binary``
    data, an unwritable path, a write error (a full disk), names an ``.npz``
    cannot hold.  ``before_commit``: as for ``write_output`` (what it raises
    goes on)."""
    from fetchc.outputs import OutputRefused, write_output

    try:
        write_output(path, data, inputs=inputs, binary=binary, hint=hint, before_commit=before_commit)
    except OutputRefused as e:
        return _error(str(e))
    except OSError as e:
        return _error(f"cannot write '{path}': {e.strerror or e}")
    except ValueError as e:  # names an .npz cannot hold, an object array
        return _error(f"cannot write '{path}': {e}")
    return 0


def main_compile(argv: list[str]) -> int:
    parser = _compile_parser()
    args = parser.parse_args(argv)
    if args.passes is not None and len(args.passes) > 1:
        parser.error("give the pass pipeline once (-p, --pass-pipeline and --passes are one option)")
    args.passes = args.passes[0] if args.passes else None
    args.emit = emit_kind(args.emit, args.output)
    filename = "<stdin>" if args.input == "-" else args.input
    try:
        data = _read_input(args.input)
    except OSError as e:
        return _error(f"cannot read '{args.input}': {e.strerror or e}")
    dest = (_identities([args.input]), "seq.bin" if args.emit == "bin" else None, ", or --emit=mlir / --emit=seq")
    if not args.verify_diagnostics and _refused(args.output, *dest):
        return 1
    cached = _plain_compile(args)
    if cached:  # an exact repeat: answered before importing xDSL
        from fetchc.compile_cache import whole_get

        found = whole_get(data, filename, args.passes)
        if found is not None:
            return _write(args.output, found, *dest)
    status = _compile(args, data, filename, dest, cached)
    if status == 0 and cached and _LAST_CLEAN is not None:
        from fetchc.compile_cache import whole_put

        whole_put(data, filename, args.passes, _LAST_CLEAN)
    return status


def emit_kind(emit: str | None, output: str) -> str:
    """What the compiler writes (docs/cli.md, Compiling): an explicit
    ``--emit`` as given (``-o x.mlir --emit=bin`` writes a ``seq.bin``);
    without one, ``mlir`` when ``-o`` names a file ending in ``.mlir``
    (``-o t.mlir``), else ``bin``."""
    if emit is not None:
        return emit
    return "mlir" if output != "-" and output.endswith(".mlir") else "bin"


_LAST_CLEAN: bytes | None = None
"""The seq.bin of the last compile that printed no diagnostic and ran only
fetchc's own passes (for the whole-input cache)."""


def _plain_compile(args) -> bool:
    """Whether the kernel compile cache may serve this compile:
    ``--emit=bin`` without printing or checking options, the cache on.
    (Whether the pipeline allows it is decided once it is parsed:
    :func:`fetchc.compile_cache.cacheable_pipeline`.)"""
    from fetchc import compile_cache

    plain = args.emit == "bin" and not (
        args.verify_diagnostics
        or args.print_ir_after_all
        or args.print_ir_before_all
        or args.verify_each
        or args.no_cache
        or args.split_input_file
    )
    return plain and compile_cache.enabled()


def _compile(args, data: bytes, filename: str, dest: tuple, cached: bool = False) -> int:
    """The compile proper (after reading the input): parse, verify, run the
    pipeline, emit, write ``-o`` (``dest``: the arguments of :func:`_write`
    after the data); diagnostics on stderr.  ``cached``: through the kernel
    compile cache on disk (:meth:`fetchc.compile_cache.KernelCache.compile_module`).
    Returns the exit status."""
    global _LAST_CLEAN
    from fetchc.compile_cache import KernelCache, cacheable_pipeline
    from fetchc.driver import DEFAULT_PIPELINE, MLIR_PIPELINE, parse_pipeline
    from fetchc.frontend.context import shared_context
    from fetchc.frontend.parsing import decode_source, split_input_file
    from fetchc.frontend.render import SourceManager, render_all
    from fetchc.frontend.verify_diagnostics import check_expected

    _LAST_CLEAN = None
    if _is_seqbin(data):  # here, not before the whole-input cache: importing the format imports xDSL
        return _file_error(
            filename,
            f"this is a seq.bin (compiled output), not MLIR: use 'fetchc dis {args.input}' to "
            "read it, 'fetchc sim' to run its programs",
        )

    sources = SourceManager()
    try:
        text = decode_source(data, filename)
        if args.passes is not None:
            passes_spec = args.passes
        else:
            passes_spec = ",".join(MLIR_PIPELINE if args.emit == "mlir" else DEFAULT_PIPELINE)
        passes = parse_pipeline(passes_spec)  # reject a bad pipeline before doing any work
    except DiagnosticError as e:
        sys.stderr.write(render_all(e.diagnostics, sources))
        return 1
    sources.add(filename, text)

    chunks = split_input_file(text) if args.split_input_file else [(text, 0)]
    if args.emit == "bin" and len(chunks) > 1 and not args.verify_diagnostics:
        return _error(
            "--emit=bin makes one seq.bin per input: with --split-input-file use --emit=mlir or --emit=seq "
            "(or -o FILE.mlir)"
        )

    ctx = shared_context()
    cache = KernelCache(disk=True) if cached else None

    outputs: list[bytes] = []
    failed = printed = False
    run = functools.partial(_run_uncached, args, ctx, passes, filename)
    for chunk, offset in chunks:
        out, diags = _compile_chunk(ctx, chunk, offset, filename, run, cache, passes_spec, passes)
        if out is not None:
            outputs.append(out)
        if args.verify_diagnostics:
            failures = check_expected(diags, chunk, filename, offset)
            if failures:
                failed = True
                sys.stderr.write(render_all(failures, sources))
        elif diags:
            sys.stderr.write(render_all(diags, sources))
            printed = True
            if any(d.severity == "error" for d in diags):
                failed = True
    if failed:
        return 1
    if args.verify_diagnostics:
        return 0
    data = b"// -----\n".join(outputs)
    if not printed and cacheable_pipeline(passes):
        _LAST_CLEAN = data
    return _write(args.output, data, *dest)


def _run_uncached(args, ctx, passes, filename: str, module, checked: bool):
    """The uncached compile of a parsed input (a ``--split-input-file`` chunk
    or the whole file): the pipeline, then the output ``--emit`` asks for.
    ``checked``: the module was verified already
    (:func:`fetchc.driver.check_module`).  Returns a
    :class:`fetchc.compile_cache.Compiled`."""
    from fetchc.compile_cache import Compiled
    from fetchc.driver import run_pipeline

    with _pass_prints_to_stderr(args.output):
        result = run_pipeline(
            module,
            ctx,
            passes,
            _dump_ir("After", args) if args.print_ir_after_all else None,
            before_pass=_dump_ir("Before", args) if args.print_ir_before_all else None,
            verify_each=args.verify_each,
            checked=checked,
        )
    if not result.ok or args.verify_diagnostics:
        return Compiled(result.diagnostics, module=module)
    try:  # the passes' remarks, then what emitting says
        out, warnings, sb = _emit(module, args.emit, args.print_op_generic, args.mlir_print_debuginfo, filename)
    except DiagnosticError as e:
        return Compiled(result.diagnostics + e.diagnostics, module=module)
    return Compiled(result.diagnostics + warnings, sb, out, module)


def _compile_chunk(ctx, chunk: str, offset: int, filename: str, run, cache, passes_spec: str, passes) -> tuple:
    """One input (a chunk starting at line ``offset`` + 1, or the whole
    file): parse it, then compile it with ``run`` (:func:`_run_uncached`), or
    through the kernel compile ``cache`` when there is one.  Returns the
    output (``None`` when there is none) and the diagnostics, errors
    included."""
    from fetchc.frontend.parsing import parse_module

    try:
        module = parse_module(ctx, chunk, filename, offset)
    except DiagnosticError as e:
        return None, e.diagnostics
    if cache is None:
        compiled = run(module, False)
    else:
        fresh = functools.partial(parse_module, ctx, chunk, filename, offset)
        compiled = cache.compile_module(module, passes_spec, passes, run, fresh)
    return (compiled.data if compiled.ok else None), compiled.diagnostics


def _dump_ir(when: str, args: argparse.Namespace):
    """The ``--mlir-print-ir-before-all`` / ``--mlir-print-ir-after-all``
    callback: the module on stderr under ``// -----// IR Dump {when} PASS
    //----- //``, printed as the output is (generic form, locations)."""
    from fetchc.driver import print_module

    def dump(p, module) -> None:
        sys.stderr.write(f"// -----// IR Dump {when} {p.name} //----- //\n")
        sys.stderr.write(print_module(module, args.print_op_generic, args.mlir_print_debuginfo))

    return dump


def _pass_prints_to_stderr(output: str):
    """A context in which ``print`` goes to stderr when ``-o`` is stdout
    (``-``, ``/dev/stdout``...): a pass that prints (xDSL's
    ``eqsat-serialize-egraph`` writes JSON) must not corrupt the output.
    With ``-o FILE`` the prints stay on stdout, the user's choice."""
    import contextlib

    from fetchc.outputs import output_target

    if output_target(output) in (("stdout", None), ("fd", 1)):
        return contextlib.redirect_stdout(sys.stderr)
    return contextlib.nullcontext()


def _emit(
    module, emit: str, generic: bool, debuginfo: bool, filename: str
) -> tuple[bytes, list[Diagnostic], SeqBin | None]:
    """The output for ``--emit``, the warnings about it, and the ``SeqBin``
    for ``--emit=bin`` (else None): a ``seq.bin`` without any program (the
    input holds no kernel) is written, with a warning.  Raises
    :class:`DiagnosticError` for what cannot be emitted."""
    from fetchc.driver import print_module
    from fetchc.seqbin.emit import emit_seqbin

    if emit in ("mlir", "seq"):
        from fetchc.kernel import write_names

        write_names(module)  # ir.md §2a: the names survive tools that rename SSA values
        return print_module(module, generic, debuginfo).encode(), [], None
    sb, data = emit_seqbin(module)
    if sb.programs:
        return data, [], sb
    return (
        data,
        [
            Diagnostic(
                "warning",
                "the input holds no kernel (no func.func with a fetch.fetch): the seq.bin has no program",
                (filename, 0, 0),
            )
        ],
        sb,
    )


def _is_seqbin(data: bytes) -> bool:
    """``data`` starts like a ``seq.bin`` (its magic, seqbin.md HEADER)."""
    from fetchc.seqbin.format import MAGIC

    return data[: len(MAGIC)] == MAGIC


def main_dis(argv: list[str]) -> int:
    from fetchc.seqbin import SeqBinError, disassemble, read, to_json

    p = _ArgumentParser(
        prog="fetchc dis",
        description="Print a seq.bin readably (validating it); --json for tools. "
        "Details: docs/cli.md and docs/seqbin.md.",
    )
    p.add_argument("input", help="seq.bin file, '-' for stdin")
    p.add_argument("--json", action="store_true", help="print JSON for tools")
    p.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    args = p.parse_args(argv)
    name = "<stdin>" if args.input == "-" else args.input
    load_numpy()  # the disassembler formats values with numpy / ml_dtypes
    inputs = _identities([args.input])
    if _refused(args.output, inputs):
        return 1
    try:
        data = _read_input(args.input)
    except OSError as e:
        return _error(f"cannot read '{args.input}': {e.strerror or e}")
    try:
        read(data)
        text = json.dumps(to_json(data), indent=2) + "\n" if args.json else disassemble(data)
    except SeqBinError as e:
        return _file_error(name, e)
    return _write(args.output, text.encode(), inputs)


# --------------------------------------------------------------------------
# fetchc sim (ir.md §5)
# --------------------------------------------------------------------------


class _UsageError(Exception):
    pass


class _Parser(_ArgumentParser):
    def error(self, message: str):
        raise _UsageError(message)


def _warn_scratch_reads(sb, results) -> None:
    """``fetchc sim --arg`` lays out only the named arrays: a program that
    reads a compiler scratch buffer (written by an earlier program of the
    kernel, ``fetch-route-sub-decode``) sees zeros.  Say so on stderr."""
    if sb.manifest is None:
        return
    keys = _program_keys(sb)
    for kernel in sb.manifest.kernels:
        for kp in kernel.programs:
            t = kernel.tensors[kp.tensor]
            name = keys[kp.index]
            if t.scratch and name in results:
                _warn(
                    f"program {name} reads scratch buffer {t.name}, which an earlier program writes; "
                    f"fetchc sim starts it at zero (fetchc run runs the whole kernel)"
                )


def _write_arrays(path: str, arrays, inputs: list, before_commit=None) -> int:
    """Write ``-o path`` for ``sim`` and ``run``: one array as ``.npy`` data,
    a ``{name: array}`` mapping as ``.npz`` data keyed by the names as they
    are (:mod:`fetchc.npyio`), never to a terminal nor over an input
    (:func:`_write`; ``before_commit`` as there).  Returns the exit status."""
    from fetchc.npyio import write_npy, write_npz

    if isinstance(arrays, dict):
        return _write(path, lambda f: write_npz(f, arrays), inputs, ".npz data", before_commit=before_commit)
    return _write(path, lambda f: write_npy(f, arrays), inputs, ".npy data", before_commit=before_commit)


def _reported(command: Callable[[list[str]], int]) -> Callable[[list[str]], int]:
    """A subcommand whose unexpected failures become ``error:`` lines and
    exit 1 (never a traceback): an interrupt, an ``OSError`` (named by its
    file), and any other exception as ``internal error: ...``; memory,
    recursion and import failures go on to :func:`main`, which words them."""

    @functools.wraps(command)
    def reported(argv: list[str]) -> int:
        try:
            return command(argv)
        except KeyboardInterrupt:
            return _error("interrupted")
        except OSError as e:
            if memory_failure(e):
                raise MemoryError from None  # main() words it
            where = getattr(e, "filename", None)
            return _error(f"{where}: {e.strerror or e}" if where else f"{e.strerror or e}")
        except (MemoryError, ResourceExhausted, RecursionError, ImportError):
            raise  # main() words these
        except Exception as e:  # noqa: BLE001 - the CLI never shows a traceback
            if memory_failure(e):
                raise MemoryError from None  # main() words it
            return _error(f"internal error: {type(e).__name__}: {e}")

    return reported


def _sim_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="fetchc sim",
        description=(
            "Run the Fetch Unit programs of a seq.bin on a DM image: a flat byte file (--dm; address 0 is its "
            "first byte), or the image laid out from named arrays at the MANIFEST's placements (--arg). Each "
            "result has the stream's shape, time dims then packet dims, from the MANIFEST (a 1.0 file without "
            "one gives (packets, packet_size)). Encoding: f32, i32, i8, i16 as themselves; bf16 and 8-bit floats "
            "as raw bits in uint16/uint8; i5 as int8; i9 as int16; 4-bit codes in uint8. Details: docs/cli.md, "
            "'fetchc sim'."
        ),
    )
    p.add_argument("seqbin", help="the seq.bin file")
    p.add_argument("--dm", metavar="IMAGE", help="DM image file")
    p.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=FILE.npy",
        help="a tensor's values instead of --dm, placed as the MANIFEST says (repeat for every tensor the "
        "programs read; scalars NAME=VALUE are accepted and unused)",
    )
    p.add_argument("--program", metavar="NAME", help="run only this program; writes one .npy array")
    p.add_argument(
        "-o",
        dest="output",
        required=True,
        metavar="OUT",
        help="output path, used exactly (no suffix added): .npy data with --program, else .npz data keyed by "
        "program name; '-' or /dev/stdout writes to stdout (a pipe works)",
    )
    return p


@_reported
def main_sim(argv: list[str]) -> int:
    """``fetchc sim seq.bin (--dm image.bin | --arg NAME=FILE.npy ...)
    [--program NAME] -o out.npy`` (ir.md §5).  Each result is reshaped to
    its stream's time then packet dims from the MANIFEST.  Returns the exit
    status: 0 on success, 2 on a usage error (also: both or neither of
    ``--dm`` and ``--arg``), 1 on any other error (unreadable or invalid
    seq.bin, missing DM image, a bad ``--arg`` name or array, a simulation
    error, more memory needed than ``fetchc sim`` may allocate, an
    unwritable output), printed as ``error: ...`` on stderr, never a
    traceback.  ``-o`` is written exactly as named (no suffix appended) by
    :func:`fetchc.outputs.write_output`: atomically for a file (on failure no
    file is created and an existing one is left as it was), in place for
    ``/dev/stdout``, a pipe or a FIFO.  The ``.npz`` keys are the program
    names, whatever they are (:func:`fetchc.outputs.write_npz`)."""
    args = _sim_args(argv)
    if isinstance(args, int):
        return args
    load_numpy()

    from fetchc.golden.inputs import InputError, parse_arg_specs
    from fetchc.golden.run import RunError, simulate_with_args
    from fetchc.golden.sim import SimError, check_program_name
    from fetchc.seqbin import SeqBinError, read

    inputs = _identities([args.seqbin] + ([args.dm] if args.dm is not None else []))
    binary = ".npy data" if args.program is not None else ".npz data"
    if _refused(args.output, inputs, binary):
        return 1
    try:
        data = _read_input(args.seqbin)
    except OSError as e:
        return _error(f"cannot read '{args.seqbin}': {e.strerror or e}")
    try:
        sb = read(data)
        check_program_name(sb, args.program)  # before any input is read or sized
    except (SeqBinError, SimError) as e:
        return _file_error(args.seqbin, e)
    if args.arg:
        try:
            values = parse_arg_specs(args.arg)
            inputs += _identities(v.path for v in values.values() if not isinstance(v, str))
            if _refused(args.output, inputs, binary):
                return 1
            from fetchc.frontend.render import SourceManager

            with _warnings_rendered(SourceManager()):  # aliased commits (golden.run._warn_committed_aliases)
                results = simulate_with_args(sb, values, args.program)
            _warn_scratch_reads(sb, results)
        except (InputError, RunError) as e:
            return _error(f"{e}")
        except SimError as e:
            return _file_error(args.seqbin, e)
    else:
        on_image = _sim_on_image(sb, args)
        if isinstance(on_image, int):
            return on_image
        results = on_image
    return _write_arrays(args.output, results[args.program] if args.program is not None else results, inputs)


def _sim_args(argv: list[str]) -> argparse.Namespace | int:
    """``fetchc sim``'s arguments, or the exit status of a usage error (2,
    with the usage line; also for both or neither of ``--dm`` and
    ``--arg``) or of ``--help`` (0)."""
    parser = _sim_parser()
    try:
        args = parser.parse_args(argv)
        if (args.dm is None) == (not args.arg):
            raise _UsageError(
                "give the DM image either as --dm IMAGE or as --arg NAME=FILE.npy ..., not both"
                if args.dm is not None
                else "one of --dm IMAGE or --arg NAME=FILE.npy is required"
            )
    except _UsageError as e:
        sys.stderr.write(parser.format_usage())
        _error(f"{e}")
        return 2  # a usage error, like argparse and the other subcommands
    except SystemExit as e:  # --help
        return int(e.code or 0) if not isinstance(e.code, str) else 1
    return args


def _sim_on_image(sb, args: argparse.Namespace) -> dict | int:
    """``fetchc sim --dm IMAGE``: the programs' outputs on the image (its
    size and every output checked against the memory budget before it is
    read), or the exit status of an error (printed)."""
    from fetchc.golden.sim import SimError, check_memory, output_limit_bytes, read_dm_image, simulate
    from fetchc.target import SLICE_DM_BYTES

    try:
        st = os.stat(args.dm)
    except OSError as e:
        return _error(f"cannot read the DM image '{args.dm}': {e.strerror or e}")
    size = st.st_size if stat.S_ISREG(st.st_mode) else None
    try:
        if size is not None and size <= SLICE_DM_BYTES:  # the image and every output, before reading
            check_memory(sb, size, args.program)
    except SimError as e:
        return _file_error(args.seqbin, e)
    try:
        with open(args.dm, "rb", buffering=0) as f:
            dm = read_dm_image(f, size, output_limit_bytes())
    except OSError as e:
        return _error(f"cannot read the DM image '{args.dm}': {e.strerror or e}")
    except SimError as e:
        return _file_error(args.dm, e)
    try:
        return simulate(sb, dm, args.program, shaped=True)
    except SimError as e:
        return _file_error(args.seqbin, e)


def _program_keys(sb) -> list[str]:
    from fetchc.golden.sim import program_key

    return [program_key(p, i) for i, p in enumerate(sb.programs)]


# --------------------------------------------------------------------------
# fetchc run (ir.md §5)
# --------------------------------------------------------------------------


def _run_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="fetchc run",
        description=(
            "The golden model of a whole kernel: compile (default pipeline), lay the named arrays out in DM at "
            "their placements, run every Fetch Unit program from the emitted seq.bin bytes, then the downstream "
            "rngd ops with RNGD numerics, and write every committed tensor, by name and whole (its memref "
            "shape, times the slices along its rngd.slice_dim on a kernel over several slices), "
            "into an .npz (encoding as for 'fetchc sim': f32/i32/i8/i16 as themselves, bf16 and 8-bit floats as "
            "raw uint16/uint8 bits, 4-bit codes as uint8). Details: docs/cli.md, 'fetchc run'."
        ),
    )
    p.add_argument("input", help="the kernel's .mlir file, '-' for stdin")
    p.add_argument("--entry", metavar="FUNC", help="the kernel to run (needed when the file holds several)")
    p.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=FILE.npy|NAME=VALUE",
        help="an input tensor from a .npy file (the whole tensor: its memref shape, times the slices along its "
        "slice_dim; ml_dtypes or raw bits; 4-bit codes one per element "
        "or packed two per byte), or an f32 scalar's value; repeat for every input",
    )
    p.add_argument(
        "-o",
        dest="output",
        required=True,
        metavar="OUT.npz",
        help="output .npz path, used exactly (no suffix added); '-' or /dev/stdout writes to stdout (a pipe works)",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="do not list the tensors written (by default one line each: name, shape, dtype)",
    )
    return p


class _ListingFailed(Exception):
    """``fetchc run``'s list of the tensors written could not be printed
    (before its output was committed, so that stays as it was)."""


def _list_written(path: str, outputs, kernel) -> None:
    """One line per tensor ``fetchc run`` wrote: ``OUT: NAME SHAPE DTYPE``,
    with the element type when the array holds raw bits (``uint16 (bf16
    bits)``); on stdout, or on stderr when the ``.npz`` itself goes to
    stdout; nothing when that stream is closed (``>&-``).  Called once the
    output's bytes are written and before it replaces ``path``
    (``before_commit``), and written through at once, so that a listing
    that cannot be printed (a full disk, a closed pipe) raises
    :class:`_ListingFailed` and leaves ``path`` as it was."""
    from fetchc.outputs import output_target, write_now

    to_stderr = output_target(path) in (("stdout", None), ("fd", 1))
    out = sys.stderr if to_stderr else sys.stdout
    if out is None:
        return
    types = {t.name: t.dtype for t in kernel.tensors} if kernel is not None else {}
    lines = []
    for name, arr in outputs.items():
        elem = types.get(name)
        bits = f" ({elem.name} bits)" if elem is not None and elem.is_float and elem.bits in (8, 16) else ""
        codes = f" ({elem.name} codes)" if elem is not None and elem.is_subbyte else ""
        lines.append(printable(f"{path}: {name} {tuple(arr.shape)} {arr.dtype}{bits}{codes}") + "\n")
    try:
        write_now(out, "".join(lines))
    except OSError as e:
        where = "stderr" if to_stderr else "stdout"
        raise _ListingFailed(f"cannot write the list of the tensors written to {where}: {e.strerror or e}") from None


def _chosen_kernel(sb, entry: str | None):
    """The MANIFEST kernel ``fetchc run`` ran (``--entry``, else the only
    one), or None."""
    kernels = list(sb.manifest.kernels) if sb.manifest is not None else []
    if entry is not None:
        kernels = [k for k in kernels if k.name == entry.removeprefix("@")]
    return kernels[0] if len(kernels) == 1 else None


@_reported
def main_run(argv: list[str]) -> int:
    """``fetchc run kernel.mlir [--entry FUNC] --arg NAME=FILE.npy|VALUE ...
    -o out.npz`` (ir.md §5; :mod:`fetchc.golden.run`).  On success it lists
    each tensor written (:func:`_list_written`) unless ``-q``; a value given
    for an argument that is no input, a transpose it can only approximate,
    and each committed tensor left out because it depends on
    ``rngd.contract_outer`` are located warnings (when every committed
    tensor is left out, the ``.npz`` holds no array and a last warning says
    so).  Returns the exit status: 0 on success, 2 on a usage error, 1 on
    any other error (an unreadable input, a compile error, a bad input name
    or array, an op fetchc has no semantics for feeding a commit, an
    unwritable output), printed as a located diagnostic or ``error: ...`` on
    stderr, never a traceback; then no output file is created or overwritten."""
    parser = _run_parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError as e:
        sys.stderr.write(parser.format_usage())
        _error(f"{e}")
        return 2
    except SystemExit as e:  # --help
        return int(e.code or 0) if not isinstance(e.code, str) else 1
    load_numpy()
    from fetchc.api import compile as compile_
    from fetchc.frontend.parsing import decode_source
    from fetchc.golden.inputs import InputError, parse_arg_specs
    from fetchc.golden.run import RunError, run_seqbin
    from fetchc.golden.sim import SimError

    filename = "<stdin>" if args.input == "-" else args.input
    inputs = _identities([args.input])
    if _refused(args.output, inputs, ".npz data"):
        return 1
    try:
        data = _read_input(args.input)
    except OSError as e:
        return _error(f"cannot read '{args.input}': {e.strerror or e}")
    from fetchc.frontend.render import SourceManager, render_all

    sources = SourceManager()
    try:
        if _is_seqbin(data):
            return _file_error(
                filename,
                "this is a seq.bin (compiled output), not MLIR: fetchc run compiles a kernel "
                f"and runs it; to run the programs of a seq.bin use 'fetchc sim {args.input} "
                "--arg NAME=FILE.npy ...' ('fetchc dis' prints it)",
            )
        text = decode_source(data, filename)
        sources.add(filename, text)
        result = compile_(text, filename=filename)
    except DiagnosticError as e:
        sys.stderr.write(render_all(e.diagnostics, sources))
        return 1
    try:
        values = parse_arg_specs(args.arg)
        inputs += _identities(v.path for v in values.values() if not isinstance(v, str))
        if _refused(args.output, inputs, ".npz data"):
            return 1
        left_out: list[str] = []
        with _warnings_rendered(sources):
            outputs = run_seqbin(result.seq_bin, result.module, args.entry, values, left_out=left_out)
    except (InputError, RunError) as e:
        return _error(f"{e}")
    except SimError as e:
        return _file_error(filename, e)
    except DiagnosticError as e:
        sys.stderr.write(render_all(e.diagnostics, sources))
        return 1
    _warn_if_nothing_written(outputs, left_out, args.output)
    kernel = _chosen_kernel(result.seqbin, args.entry)
    listing = None if args.quiet else (lambda: _list_written(args.output, outputs, kernel))
    try:
        return _write_arrays(args.output, outputs, inputs, before_commit=listing)
    except _ListingFailed as e:
        from fetchc.outputs import output_target

        kept = f"; '{args.output}' is left as it was" if output_target(args.output)[0] == "file" else ""
        return _error(f"{e}{kept} (-q leaves the list out)")


def _warn_if_nothing_written(outputs: dict, left_out: list[str], output: str) -> None:
    """``fetchc run``'s last warning when ``output`` will hold no array:
    every committed tensor depends on a contraction (``left_out``, each
    warned about already), or the kernel commits none."""
    if not outputs and left_out:
        _warn(
            f"fetchc run computed none of the kernel's committed tensors (each depends on rngd.contract_outer, "
            f"see above): {output} holds no array"
        )
    elif not outputs:  # e.g. a kernel that only stages a TRF: valid, but nothing to look at
        _warn(f"the kernel commits no tensor (no rngd.commit): {output} holds no array")


@contextlib.contextmanager
def _warnings_rendered(sources):
    """Within the block, a :class:`~fetchc.diagnostics.DiagnosticWarning`
    (``warnings.warn`` of the golden model) is printed on stderr as a
    located ``warning:`` diagnostic when the block ends, like the compiler's
    diagnostics (``sources``: the :class:`~fetchc.frontend.render.SourceManager`
    that quotes the lines); other warnings go on as they came."""
    import warnings

    from fetchc.diagnostics import DiagnosticWarning
    from fetchc.frontend.render import render_all

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DiagnosticWarning)
        try:
            yield
        finally:
            ours = [w.message.diagnostic for w in caught if isinstance(w.message, DiagnosticWarning)]
            if ours:
                sys.stderr.write(render_all(ours, sources))
    for w in caught:
        if not isinstance(w.message, DiagnosticWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] == "dis":
        return main_dis(argv[1:])
    if argv and argv[0] == "sim":
        return main_sim(argv[1:])
    if argv and argv[0] == "run":
        return main_run(argv[1:])
    return main_compile(argv)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fetchc`` console script.  Returns the exit code;
    never lets a Python traceback reach the user."""
    from fetchc.outputs import signal_cleanup

    argv = list(sys.argv[1:] if argv is None else argv)
    limit_malloc_arenas()
    try:
        with gc_paused(), signal_cleanup():  # see fetchc.process.gc_paused; no temporary output file after a signal
            return call_with_deep_stack(_dispatch, argv)
    except SystemExit as e:  # argparse usage errors / --help
        return int(e.code) if isinstance(e.code, int) else (0 if e.code is None else 2)
    except KeyboardInterrupt:
        return _error("interrupted")
    except BrokenPipeError:
        return _error("cannot write the output: the reading end of the pipe was closed")
    except RecursionError:
        return _error(f"nesting too deep: the input needs more than {stack_text()}")
    except MemoryError:
        return _error(f"out of memory{limit_text()}")
    except ResourceExhausted as e:
        return _error(str(e))
    except ImportError as e:
        if is_memory_message(f"{e} {e.__cause__ or ''} {e.__context__ or ''}"):
            return _error(f"out of memory while loading {e.name or 'a module'}{limit_text()}")
        first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
        return _error(f"cannot load {e.name or 'a module'} (broken installation?): {first}")
    except Exception as e:  # noqa: BLE001 - last resort: an internal error, still no traceback
        if memory_failure(e):  # ENOMEM from a thread or mapping, CPython's SystemError under ulimit -v
            return _error(f"out of memory{limit_text()}")
        return _error(f"internal error: {type(e).__name__}: {e} (please report this with the input)")


def _unraisable(u) -> None:
    """``sys.unraisablehook`` of the command: an exception nobody can catch
    (an atexit handler: the start-up cache written at exit) that is only a
    lack of memory is dropped, not printed as ``Exception ignored in
    atexit callback``; anything else is printed as Python does."""
    if memory_failure(u.exc_value):
        return
    sys.__unraisablehook__(u)


def _leave() -> NoReturn:
    """End a successful command as the interpreter's exit does (non-daemon
    threads joined, ``atexit`` handlers run, stdout and stderr flushed, exit
    status 0) but without its finalisation, which tears down every module,
    class and object (xDSL's dialects, the IR: about 45 ms of CPU, a fifth
    of compiling a small kernel) and changes nothing outside the process:
    every output is written through a file descriptor, closed and renamed by
    then (:mod:`fetchc.outputs`).  When a standard stream cannot be flushed
    (stdout is a closed pipe), the interpreter's own exit reports it, as
    before (exit status 120)."""
    import atexit
    import threading

    threading._shutdown()  # type: ignore[attr-defined]  # as Py_FinalizeEx, first
    atexit._run_exitfuncs()  # reported through sys.unraisablehook, as at exit; they do not run twice
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None and not stream.closed:
                stream.flush()
    except Exception:  # noqa: BLE001 - the interpreter's exit reports it
        sys.exit(0)
    os._exit(0)


def _stderr_to_devnull_if_closed() -> None:
    """With descriptor 2 closed (``2>&-``), Python has no ``sys.stderr``:
    put ``/dev/null`` on descriptor 2, so that diagnostics are discarded
    (the exit status still says what happened) instead of failing, and no
    file the command opens later (an output's temporary file) can become
    descriptor 2 and receive them."""
    if sys.stderr is not None:
        return
    try:
        os.fstat(2)
        return  # open but not usable as text: leave it
    except OSError:
        pass
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        if fd != 2:
            os.dup2(fd, 2)
            os.close(fd)
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115 - the process's own stderr
    except OSError:
        pass


def entry() -> None:
    """The ``fetchc`` console script (and ``python -m fetchc.cli``):
    :func:`main`, then exit with its status (``SystemExit``).  A failure
    while reporting a failure (out of memory again) ends with one ``error:``
    line.  Where fetchc owns the process (:func:`fetchc.process.owns_process`:
    the console script, ``python -m fetchc.cli``), the collector stays off
    and a successful command ends with :func:`_leave`; under any other
    ``__main__`` (``python -m cProfile``, a host's ``runpy``) it raises
    ``SystemExit`` like any program, so whatever runs after it runs, and
    the host's collector and ``sys.unraisablehook`` are left alone."""
    from fetchc.process import owns_process

    owned = owns_process()
    if owned:
        sys.unraisablehook = _unraisable
    _stderr_to_devnull_if_closed()
    if owned:
        # The process ends with the command: no collection when main's
        # gc_paused ends (it would traverse everything the command allocated,
        # 0.23 s after compiling 5000 distinct chains), and none at exit.
        gc.disable()
    try:
        code = main()
    except BaseException as e:  # noqa: BLE001 - the last line of defence against a traceback
        _last_words(e)
    if code:
        if owned:
            # A failed command (out of memory, say) leaves the collector to free
            # what it can before the interpreter's finalisation needs memory.
            gc.enable()
        sys.exit(code)
    if owned:
        _leave()
    sys.exit(0)


if __name__ == "__main__":
    entry()
