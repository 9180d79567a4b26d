"""The ``overhead`` marker's pair: resolved from the marker (:mod:`.marker`), measured by the
fixture (:mod:`.fixture`), summarised and judged (:mod:`.verdict`) into a result (:mod:`.results`).
"""
