"""Regenerate the shipped Bitcoin sample in ``data/`` from raw blocks, or check it byte for byte.

    python -m bfrrce.datasets.make_bitcoin_sample --blocks ../shared/datasets/bitcoin/blocks
    python -m bfrrce.datasets.make_bitcoin_sample --blocks ../shared/datasets/bitcoin/blocks --check

Writes (or, with ``--check``, compares against the shipped copies, exit status 1 on any
difference):

- ``bitcoin_outputs.csv.gz``: ``block_height, txid, vout, address`` of every output that has an
  address, blocks by height (an unknown height last), outputs in block order; gzip with mtime 0
  and no file name, so the bytes depend on the blocks alone (and on zlib, see ``--check``).
- ``hcl_genesis.blk``: a byte copy of the genesis block fixture (blk*.dat record).
- ``hcl_block2019Jan_tx29fc25bf.bin``: the bytes of one segregated-witness transaction cut out
  of ``hcl_block2019Jan.blk`` (height 556,977), so that witness parsing is tested without the
  full 1.2 MB block.

Heights come from :func:`bitcoin.block_heights`; the two fixtures that neither chain to a block
of known height nor state one (version 1 blocks) are named after their height by their authors
(``bitcoinj_block169482.dat``, ``hcl_block176149.blk``), and that name is the hint used for them.
"""

from __future__ import annotations

import argparse
import collections
import csv
import gzip
import io
import re
import sys
from pathlib import Path

from . import bitcoin

GENESIS_FILE = "hcl_genesis.blk"
SEGWIT_SOURCE, SEGWIT_TXID = ("hcl_block2019Jan.blk",
                              "29fc25bf6f5967a6dd257b0cb5307a85360cd2224daf6b2cc62eab708f002bcd")
SEGWIT_FILE = f"hcl_block2019Jan_tx{SEGWIT_TXID[:8]}.bin"
_NAMED_HEIGHT = re.compile(r"block(\d+)\.(?:dat|blk)$")


def sample_rows(files):
    """(block_height, txid, vout, address) of the addressed outputs of the distinct blocks of
    ``files``, and the number of those blocks."""
    hints, distinct = {}, {}
    for path in files:
        found = list(bitcoin.iter_blocks(bitcoin.read_block_file(path)))
        named = _NAMED_HEIGHT.search(Path(path).name)
        if named and len(found) == 1:
            hints[found[0].hash] = int(named.group(1))
        for block in found:
            distinct.setdefault(block.hash, block)
    blocks = list(distinct.values())
    heights = bitcoin.block_heights(blocks, hints)
    blocks.sort(key=lambda b: (heights[b.hash] is None, heights[b.hash] or 0, b.hash))
    rows = [("" if heights[b.hash] is None else heights[b.hash], o.txid, o.vout, o.address)
            for b in blocks for o in b.outputs if o.address is not None]
    return rows, len(blocks)


def gzip_csv(header, rows):
    """A gzipped CSV whose bytes depend on its rows only (mtime 0, no file name, level 9)."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as fh:
        fh.write(text.getvalue().encode())
    return out.getvalue()


def segwit_transaction(path, txid):
    """The serialized bytes (witnesses included) of transaction ``txid`` in the block file ``path``."""
    data = bitcoin.read_block_file(path)
    block = data[8:] if data[:4] == bitcoin.MAINNET else data
    reader = bitcoin._Reader(block, 80)
    pos = None
    for _ in range(reader.varint()):
        start = reader.pos
        tx, reader.pos = bitcoin.parse_transaction(block, start)
        if tx.txid == txid:
            pos = start, reader.pos
    if pos is None:
        raise bitcoin.BitcoinFormatError(f"transaction {txid} not in {path}")
    return block[pos[0]:pos[1]]


def build(blocks_dir):
    """File name → bytes of everything ``data/`` ships from the blocks, and :func:`summary`."""
    blocks_dir = Path(blocks_dir)
    rows, n_blocks = sample_rows(bitcoin.block_files(blocks_dir))
    files = {
        bitcoin.SAMPLE.name: gzip_csv(("block_height", "txid", "vout", "address"), rows),
        GENESIS_FILE: bitcoin.read_block_file(blocks_dir / GENESIS_FILE),
        SEGWIT_FILE: segwit_transaction(blocks_dir / SEGWIT_SOURCE, SEGWIT_TXID),
    }
    return files, summary(rows, n_blocks)


def summary(rows, n_blocks):
    """The figures ``data/README.md`` quotes, one per line."""
    counts = collections.Counter(r[3] for r in rows)
    (top, top_count), = counts.most_common(1)
    heights = [r[0] for r in rows if r[0] != ""]
    kinds = collections.Counter("bech32" if a.startswith("bc1") else f"base58 {a[0]}" for a in counts)
    return "\n".join([
        f"rows (addressed outputs): {len(rows):,}",
        f"distinct blocks: {n_blocks:,}",
        f"heights: {min(heights):,} to {max(heights):,}; rows without a height: "
        f"{sum(r[0] == '' for r in rows):,}",
        f"distinct addresses: {len(counts):,}",
        f"addresses seen once: {sum(c == 1 for c in counts.values()):,}",
        f"addresses seen 10 times or more: {sum(c >= 10 for c in counts.values()):,}",
        f"most frequent address: {top}, {top_count:,} times",
        "distinct addresses by kind: " + ", ".join(f"{k} {v:,}" for k, v in sorted(kinds.items())),
    ])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", required=True, help="folder of the raw block files")
    parser.add_argument("--out", default=str(bitcoin.DATA),
                        help="folder to write (default: the shipped data/)")
    parser.add_argument("--check", action="store_true",
                        help="compare with the files in --out instead of writing; exit 1 if any differs")
    args = parser.parse_args(argv)
    files, figures = build(args.blocks)
    print(figures)
    out = Path(args.out)
    if not args.check:
        out.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (out / name).write_bytes(data)
            print(f"wrote {out / name} ({len(data):,} bytes)")
        return 0
    status = 0
    for name, data in files.items():
        shipped = (out / name).read_bytes() if (out / name).is_file() else None
        if shipped == data:
            print(f"identical: {name} ({len(data):,} bytes)")
            continue
        status = 1
        if shipped is None:
            print(f"DIFFERENT: {out / name} is missing", file=sys.stderr)
        elif name.endswith(".gz") and gzip.decompress(shipped) == gzip.decompress(data):
            print(f"DIFFERENT: {name}: same CSV, other compressed bytes (another zlib build?)",
                  file=sys.stderr)
        else:
            print(f"DIFFERENT: {name}: {len(shipped):,} bytes shipped, {len(data):,} regenerated",
                  file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
