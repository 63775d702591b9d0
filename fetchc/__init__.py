"""fetchc: a compiler for the Fetch Adapter of FuriosaAI's RNGD NPU, on xDSL.

``fetchc.compile(text_or_module) -> CompileResult`` is the embedding API
(:mod:`fetchc.api`); ``fetchc.run(text_or_module, entry=None, **arrays)``
runs a whole kernel on the golden model (:mod:`fetchc.golden.run`); the dialects are :mod:`fetchc.dialects.fetch`,
:mod:`fetchc.dialects.rngd`, :mod:`fetchc.dialects.fetch_seq`; the passes
live in :mod:`fetchc.passes`; hardware facts in :mod:`fetchc.target`.
"""

__version__ = "0.2.0"

__all__ = ["__version__", "compile", "CompileResult", "run"]


def __getattr__(name: str):
    if name in ("compile", "CompileResult", "run"):
        from fetchc import api

        return getattr(api, name)
    raise AttributeError(name)
