import collections
import csv
import gzip
import hashlib
import struct
from pathlib import Path

import numpy as np
import pytest

from bfrrce import datasets
from bfrrce.datasets import bitcoin, make_bitcoin_sample, synthetic
from protocols.errors import LDPError, LDPValueError


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


def _shared():
    """../shared/datasets/bitcoin beside the checkout or one of its parent folders, or None."""
    for parent in Path(__file__).resolve().parents[1:]:
        if (parent / "shared" / "datasets" / "bitcoin" / "blocks_outputs.csv.gz").is_file():
            return parent / "shared" / "datasets" / "bitcoin"
    return None


SHARED = _shared()
needs_shared = pytest.mark.skipif(SHARED is None, reason="shared Bitcoin data not present")
GENESIS = bitcoin.DATA / make_bitcoin_sample.GENESIS_FILE
GENESIS_ADDRESS = "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"
TESTNET = b"\x0b\x11\x09\x07"


def _csv_rows(path):
    with gzip.open(path, "rt", newline="") as fh:
        return list(csv.DictReader(fh))


def test_shipped_genesis_block_facts():
    (block,) = list(bitcoin.iter_distinct_blocks([GENESIS]))
    assert block.hash == "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"
    assert block.prev_hash == "0" * 64 and bitcoin.block_heights([block]) == {block.hash: 0}
    (out,) = block.outputs
    assert out.txid == "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b"
    assert (out.vout, out.value) == (0, 50 * 10 ** 8)
    assert (out.script_type, out.address) == ("pubkey", GENESIS_ADDRESS)


def test_block_file_formats():
    """blk*.dat records, other networks' records skipped, raw blocks, zero tail, dedupe by hash."""
    record = GENESIS.read_bytes()
    assert record[:4] == bitcoin.MAINNET and struct.unpack("<I", record[4:8])[0] == len(record) - 8
    raw = record[8:]
    foreign = TESTNET + struct.pack("<I", 5) + b"\xff" * 5              # not parsed, only skipped
    stream = foreign + record + record + b"\0" * 64
    assert [b.hash for b in bitcoin.iter_blocks(stream)] == [bitcoin.parse_block(raw)[0].hash] * 2
    assert len(list(bitcoin.iter_blocks(raw + raw))) == 2
    with pytest.raises(bitcoin.BitcoinFormatError):                     # one flipped byte
        list(bitcoin.iter_blocks(raw[:100] + bytes([raw[100] ^ 1]) + raw[101:]))


def test_users_blocks_folder(tmp_path):
    """A Bitcoin Core data directory: blocks/blk*.dat obfuscated by xor.dat, rev*.dat ignored."""
    blocks = tmp_path / "blocks"
    blocks.mkdir()
    key = bytes(range(1, 9))
    data = np.frombuffer(GENESIS.read_bytes() * 2, np.uint8)
    mask = np.resize(np.frombuffer(key, np.uint8), data.size)
    (blocks / "blk00000.dat").write_bytes((data ^ mask).tobytes())
    (blocks / "xor.dat").write_bytes(key)
    (blocks / "rev00000.dat").write_bytes(b"undo data, not blocks")
    for path in (tmp_path, blocks, blocks / "blk00000.dat"):
        d = datasets.load("bitcoin", path=path)
        assert d.values.tolist() == [GENESIS_ADDRESS] and "of 1 distinct mainnet blocks" in d.description
        assert len(d.candidates) == 2 and GENESIS_ADDRESS in d.candidates


def test_shipped_segwit_transaction():
    data = (bitcoin.DATA / make_bitcoin_sample.SEGWIT_FILE).read_bytes()
    tx, end = bitcoin.parse_transaction(data)
    assert end == len(data) and tx.segwit and tx.input_scripts == (b"",)   # native segwit spend
    assert tx.txid == make_bitcoin_sample.SEGWIT_TXID
    assert tx.txid != bitcoin.sha256d(data)[::-1].hex()                  # the txid omits witnesses
    rows = [r for r in _csv_rows(bitcoin.SAMPLE) if r["txid"] == tx.txid]
    assert [(int(r["vout"]), r["address"]) for r in rows] == [(o.vout, o.address) for o in tx.outputs]
    assert {r["block_height"] for r in rows} == {"556977"}
    assert [o.script_type for o in tx.outputs] == ["witness_v0_keyhash"] * 2
    assert all(o.address.startswith("bc1q") for o in tx.outputs)


def test_load_reads_the_shipped_sample():
    rows = _csv_rows(bitcoin.SAMPLE)
    assert list(rows[0]) == ["block_height", "txid", "vout", "address"]
    counts = collections.Counter(r["address"] for r in rows)
    data = datasets.load("bitcoin")
    assert data.n == len(rows) == 51126 and data.cardinality == len(counts) == 43136
    assert collections.Counter(data.values.tolist()) == counts
    assert sum(c == 1 for c in counts.values()) == 41176
    assert counts.most_common(1) == [("1D5bPm1YAdn9WvAAixht7PbACU3TtkqtJJ", 896)]
    assert rows[0]["address"] == GENESIS_ADDRESS and rows[0]["block_height"] == "0"
    keys = [(r["block_height"] == "", int(r["block_height"] or 0)) for r in rows]
    assert keys == sorted(keys)                                           # blocks by height
    assert bitcoin.SAMPLE.stat().st_size < 3_000_000


def test_user_export_and_errors(tmp_path):
    export = tmp_path / "export.csv"
    export.write_text("addr,value\n1A,1\n3B,2\n1A,3\n,4\n")
    d = datasets.load("bitcoin", path=export, column="addr")
    assert d.n == 3 and d.cardinality == 2 and len(d.candidates) == 4
    with pytest.raises(ValueError, match="'address'") as no_column:
        datasets.load("bitcoin", path=export)
    assert isinstance(no_column.value, LDPError)
    with pytest.raises(bitcoin.BitcoinPathError, match="nowhere") as missing:
        datasets.load("bitcoin", path=tmp_path / "nowhere")
    assert isinstance(missing.value, FileNotFoundError) and isinstance(missing.value, LDPError)
    with pytest.raises(bitcoin.BitcoinPathError, match="no blk"):
        datasets.load("bitcoin", path=tmp_path)                          # a folder without blocks
    (tmp_path / "blk00000.dat").write_bytes(b"\x01" * 300)
    with pytest.raises(LDPValueError):
        datasets.load("bitcoin", path=tmp_path)


B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _well_formed(address):
    """Checksum and payload size of a base58check (P2PKH, P2SH) or bech32/bech32m address."""
    if address.startswith("bc1"):
        data = ["qpzry9x8gf2tvdw0s3jn54khce6mua7l".index(c) for c in address[3:]]
        const = 1 if data[0] == 0 else 0x2BC830A3
        hrp = [ord(c) >> 5 for c in "bc"] + [0] + [ord(c) & 31 for c in "bc"]
        return bitcoin._polymod(hrp + data) == const and (len(data) - 7) * 5 // 8 in (20, 32)
    num = 0
    for c in address:
        num = num * 58 + B58.index(c)
    raw = num.to_bytes(25, "big")
    version = {"1": 0, "3": 5}[address[0]]
    checksum = hashlib.sha256(hashlib.sha256(raw[:-4]).digest()).digest()[:4]
    return raw[0] == version and raw[-4:] == checksum


def _kind(address):
    return address[:4] + str(len(address)) if address.startswith("bc1") else address[0]


def test_candidates_are_the_truth_plus_as_many_decoys():
    data = datasets.load("bitcoin")
    truth = np.unique(data.values)
    cands = data.candidates
    assert len(cands) == 2 * len(truth) == 86272 and len(np.unique(cands)) == len(cands)
    assert list(cands) == sorted(cands)
    decoys = np.setdiff1d(cands, truth)
    assert len(decoys) == len(truth) and not np.isin(decoys, data.values).any()
    assert all(_well_formed(a) for a in decoys)
    assert collections.Counter(map(_kind, decoys)) == collections.Counter(map(_kind, truth))
    np.testing.assert_array_equal(bitcoin.candidates(seed=0), cands)           # deterministic


def test_decoys_of_every_kind():
    program = bytes(range(32))
    real = [bitcoin.base58check(b"\x00" + program[:20]), bitcoin.base58check(b"\x05" + program[:20]),
            bitcoin.segwit_address(0, program[:20]), bitcoin.segwit_address(0, program),
            bitcoin.segwit_address(1, program)]
    assert all(_well_formed(a) for a in real)
    assert not any(_well_formed(a[:-1] + ("q" if a[-1] != "q" else "p")) for a in real)   # typos
    cands = bitcoin.candidates(real + real[:1], seed=5)
    decoys = np.setdiff1d(cands, real)
    assert len(cands) == 10 and all(_well_formed(a) for a in decoys)
    assert sorted(map(_kind, decoys)) == sorted(map(_kind, real))
    np.testing.assert_array_equal(bitcoin.candidates(real, seed=5), cands)
    assert not np.isin(np.setdiff1d(bitcoin.candidates(real, seed=6), real), decoys).any()
    (decoy,) = set(bitcoin.candidates(["not-an-address"])) - {"not-an-address"}
    assert decoy.startswith("1") and _well_formed(decoy)                  # unknown kinds: P2PKH


@pytest.fixture(scope="module")
def regenerated():
    return make_bitcoin_sample.build(SHARED / "blocks")


@needs_shared
def test_regenerated_sample_equals_the_reference_table(regenerated):
    reference = _csv_rows(SHARED / "blocks_outputs.csv.gz")
    assert len(reference) == 53922
    expected = collections.Counter((r["block_height"], r["txid"], r["vout"], r["address"])
                                   for r in reference if r["address"])
    rows = _csv_rows(bitcoin.SAMPLE)
    assert collections.Counter(tuple(r.values()) for r in rows) == expected
    files, figures = regenerated
    assert gzip.decompress(files[bitcoin.SAMPLE.name]) == gzip.decompress(bitcoin.SAMPLE.read_bytes())
    assert "distinct blocks: 610" in figures
    genesis = (SHARED / "blocks" / make_bitcoin_sample.GENESIS_FILE).read_bytes()
    assert files[make_bitcoin_sample.GENESIS_FILE] == genesis


@needs_shared
def test_regeneration_check(regenerated, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(make_bitcoin_sample, "build", lambda blocks: regenerated)
    argv = ["--blocks", str(SHARED / "blocks"), "--check"]
    assert make_bitcoin_sample.main(argv) == 0                       # the shipped files, byte for byte
    assert make_bitcoin_sample.main(argv[:2] + ["--out", str(tmp_path)]) == 0     # writes
    assert make_bitcoin_sample.main(argv + ["--out", str(tmp_path)]) == 0
    genesis = tmp_path / make_bitcoin_sample.GENESIS_FILE
    genesis.write_bytes(genesis.read_bytes()[:-1] + b"\x01")
    recompressed = gzip.compress(gzip.decompress(bitcoin.SAMPLE.read_bytes()), compresslevel=1)
    (tmp_path / bitcoin.SAMPLE.name).write_bytes(recompressed)
    capsys.readouterr()
    assert make_bitcoin_sample.main(argv + ["--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "DIFFERENT: hcl_genesis.blk" in err and "same CSV, other compressed bytes" in err


@needs_shared
def test_bitcoin_blocks_equal_the_reference_table():
    data = datasets.load("bitcoin", path=SHARED)
    rows = _csv_rows(SHARED / "blocks_outputs.csv.gz")
    reference = collections.Counter(r["address"] for r in rows if r["address"])
    assert collections.Counter(data.values.tolist()) == reference
    assert data.n == 51126 and data.cardinality == 43136 and "of 610 distinct" in data.description
    table_hashes = {r["block_hash"] for r in rows}
    multinet = list(bitcoin.iter_distinct_blocks([SHARED / "blocks" / "hcl_multinet.blk"]))
    assert multinet and all(b.hash in table_hashes for b in multinet)      # other networks skipped
    blocks = list(bitcoin.iter_distinct_blocks(bitcoin.block_files(SHARED)))
    assert collections.Counter(o.script_type for b in blocks for o in b.outputs) == \
        collections.Counter(r["script_type"] for r in rows)
    heights = bitcoin.block_heights(blocks)                                 # without file-name hints
    table = {r["block_hash"]: r["block_height"] for r in rows}
    unknown = {h for h, v in heights.items() if v is None}
    assert len(unknown) == 3 and all(str(v) == table[h] for h, v in heights.items() if v is not None)


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


def test_any_file(tmp_path):
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
