"""fetchc's golden model: what the hardware computes, bit for bit.

:mod:`.sim` runs the Fetch Unit programs of a ``seq.bin`` on a DM image
(``fetchc sim``) with the vectorised engine of :mod:`.engine`; :mod:`.run`
runs a whole kernel from the emitted bytes (``fetchc run``), applying the
downstream ``rngd`` ops of :mod:`.rngd_ops` (fused by :mod:`.scale_chain`);
:mod:`.interp` interprets the ``fetch``, ``rngd`` and ``fetch_seq`` ops on
xDSL's interpreter; :mod:`.inputs` turns named arrays into a DM image.
Everything here imports numpy; the compile path never imports this package.
"""
