"""File formats and streaming: the layer that calls the core and is never called by it.

* :mod:`.formats` — the versioned binary files (column sums, reports) and the one report reader;
* :mod:`.values` — values from CSV, TSV, Parquet or text files, in dictionary-encoded chunks;
* :mod:`.pipeline` — the main job streamed: values → Bloom positions → column sums or a report file;
* :mod:`.stream` — bounded-memory aggregation of report files;
* :mod:`.distributed` — the same on a Dask cluster (``dask`` extra).
"""
