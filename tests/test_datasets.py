import collections
import csv
import gzip
from pathlib import Path

import numpy as np
import pytest

from bfrrce import datasets
from bfrrce.datasets import bitcoin, synthetic

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "bitcoin"
TABLE = SHARED / "blocks_outputs.csv.gz"
needs_shared = pytest.mark.skipif(not TABLE.exists(), reason="shared Bitcoin data not present")


@pytest.mark.parametrize("name, n", [("synthetic-1", 2000), ("synthetic-2", 10000)])
def test_paper_synthetic_sets(name, n):
    data = datasets.load(name)
    assert data.n == n and data.cardinality == 122
    counts = np.unique(data.values, return_counts=True)[1]
    assert counts.max() - counts.min() <= 1                  # as equal as possible
    assert data.values.min() >= 1 and data.values.max() <= 1000
    np.testing.assert_array_equal(data.candidates, np.arange(1, 1001))
    np.testing.assert_array_equal(datasets.load(name).values, data.values)   # fixed seed


def test_generator():
    v = synthetic.generate(5000, 300, domain=2000, distribution="zipf", s=1.2, seed=3)
    counts = np.sort(np.unique(v, return_counts=True)[1])[::-1]
    assert v.size == 5000 and counts.size == 300 and counts[0] > 10 * counts[-1]
    with pytest.raises(ValueError):
        synthetic.generate(10, 20)
    with pytest.raises(ValueError):
        datasets.load("nope")


def _table():
    with gzip.open(TABLE, "rt", newline="") as fh:
        return list(csv.DictReader(fh))


@needs_shared
def test_bitcoin_addresses_equal_the_reference_table():
    data = datasets.load("bitcoin", path=SHARED)
    rows = _table()
    assert len(rows) == 53922
    reference = collections.Counter(r["address"] for r in rows if r["address"])
    assert collections.Counter(data.values.tolist()) == reference
    assert data.n == 51126 and data.cardinality == 43136 and data.extra["blocks"] == 610


@needs_shared
def test_bitcoin_parser_facts():
    genesis = bitcoin.read_blocks([SHARED / "blocks" / "hcl_genesis.blk"])
    assert len(genesis) == 1
    block = genesis[0]
    assert block.hash == "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"
    (out,) = block.outputs
    assert out.txid == "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b"
    assert (out.script_type, out.address) == ("pubkey", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")
    table_hashes = {r["block_hash"] for r in _table()}
    multinet = bitcoin.read_blocks([SHARED / "blocks" / "hcl_multinet.blk"])
    assert multinet and all(b.hash in table_hashes for b in multinet)      # other networks skipped
    table_types = collections.Counter(r["script_type"] for r in _table())
    blocks = bitcoin.read_blocks(bitcoin.block_files(SHARED))
    assert collections.Counter(o.script_type for b in blocks for o in b.outputs) == table_types


def test_segwit_and_taproot_addresses():
    # BIP 173 / BIP 350 test vectors
    prog = bytes.fromhex("751e76e8199196d454941c45d1b3a323f1433bd6")
    assert bitcoin.segwit_address(0, prog) == "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
    taproot = bytes.fromhex("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
    assert bitcoin.segwit_address(1, taproot) == \
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"
    assert bitcoin.script_address(b"\x51\x20" + taproot)[0] == "witness_v1_taproot"
    assert bitcoin.script_address(b"\x6a\x04abcd") == ("nulldata", None)


def test_truncated_block_is_refused():
    with pytest.raises(bitcoin.BitcoinFormatError):
        list(bitcoin.iter_blocks(b"\x01" * 100))


@needs_shared
def test_bitcoin_export_and_any_file(tmp_path):
    data = datasets.load("bitcoin", path=TABLE)
    assert data.n == 51126 and data.cardinality == 43136
    path = tmp_path / "values.tsv"
    path.write_text("a\tb\nx\t1\ny\t\nx\t3\n")
    d = datasets.load(str(path), column="a")
    assert d.n == 3 and d.cardinality == 2
    text = tmp_path / "lines.txt"
    text.write_text("u\nv\n\nu\n")
    assert datasets.load(str(text)).cardinality == 2


def test_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"c": ["a", "b", "a", None]}), tmp_path / "t.parquet")
    d = datasets.load(str(tmp_path / "t.parquet"), column="c")
    assert d.n == 3 and d.cardinality == 2
