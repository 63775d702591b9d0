"""fetchc: a compiler for the Fetch Adapter of FuriosaAI's RNGD NPU, on xDSL.

``fetchc.compile(text_or_module) -> CompileResult`` is the embedding API
(:mod:`fetchc.api`); the dialects are :mod:`fetchc.dialects.fetch`,
:mod:`fetchc.dialects.rngd`, :mod:`fetchc.dialects.fetch_seq`; the passes
live in :mod:`fetchc.passes`; hardware facts in :mod:`fetchc.target`.
"""

__version__ = "0.2.0"

__all__ = ["__version__", "compile", "CompileResult"]


def __getattr__(name: str):
    if name in ("compile", "CompileResult"):
        from fetchc import api

        return getattr(api, name)
    raise AttributeError(name)
