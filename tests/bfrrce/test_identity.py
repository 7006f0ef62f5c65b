"""Batch identity from content (issue 23, item 1): the same reports are never counted twice,
whatever carries them, and nobody blocks an honest file without holding its reports."""

import json
import struct
import warnings
import zlib

import numpy as np
import pytest

from bfrrce import BFRRCE, PrivacyWarning
from bfrrce.identity import BatchDigest, expected_repeats, row_digests
from bfrrce.io.formats import (SeededError, add_file, dump_column_sums, dump_reports, load_column_sums,
                               load_reports)
from bfrrce.io.stream import aggregate_file, aggregate_files
from protocols import FormatError, IncompatibleError

MECH = BFRRCE(epsilon=2.0, L=128, l=2)


@pytest.fixture(scope="module")
def reports():
    return MECH.privatize(np.arange(400) % 50, rng=3)


def rewrite_header(data, change):
    """``data`` with its JSON header changed and the CRC recomputed (an editing attacker)."""
    hlen = struct.unpack_from("<I", data, 11)[0]
    header = json.dumps(change(json.loads(data[15:15 + hlen])), sort_keys=True).encode()
    body = data[:11] + struct.pack("<I", len(header)) + header + data[15 + hlen:-4]
    return body + struct.pack("<I", zlib.crc32(body))


def write_parquet(path, rows, compression="snappy"):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"report": [r.tobytes() for r in rows]}), path, compression=compression)
    return path


def test_identifier_is_the_multiset_of_rows(reports):
    whole = MECH.aggregate(reports)
    assert MECH.aggregate(reports[::-1]).batches == whole.batches           # any order
    assert MECH.aggregate_batches(np.array_split(reports, 7)).batches == whole.batches   # any chunks
    assert MECH.aggregate(reports[1:]).batches != whole.batches
    changed = reports.copy()
    changed[0, 0] ^= 1
    assert MECH.aggregate(changed).batches != whole.batches
    digest = BatchDigest(MECH.L)
    digest.add(reports)
    assert whole.batches == {digest.identifier()} and len(digest.identifier()) == 64
    assert row_digests(reports[:2]).shape == (2, 32)


def test_reload_and_redump_is_the_same_batch(reports, tmp_path):
    a = tmp_path / "a.bfr"
    a.write_bytes(dump_reports(MECH, reports))
    b = tmp_path / "b.bfr"
    b.write_bytes(dump_reports(*load_reports(a.read_bytes())[:2]))        # attack 1
    with pytest.raises(IncompatibleError, match="already counted"):
        aggregate_files([a, b])


def test_edited_batch_field_is_refused(reports, tmp_path):
    data = dump_reports(MECH, reports)
    edited = rewrite_header(data, lambda h: {**h, "batch": "ab" * 32})    # attack 2
    with pytest.raises(FormatError, match="edited"):
        load_reports(edited)
    path = tmp_path / "e.bfr"
    path.write_bytes(edited)
    with pytest.raises(FormatError, match="edited"):
        aggregate_file(path)


def test_bfr_and_parquet_and_recompressed_parquet_are_one_batch(reports, tmp_path):
    a = tmp_path / "a.bfr"
    a.write_bytes(dump_reports(MECH, reports))
    p1 = write_parquet(tmp_path / "r.parquet", reports)
    p2 = write_parquet(tmp_path / "z.parquet", reports[::-1], compression="zstd")
    assert aggregate_file(p1, MECH).batches == aggregate_file(a).batches == aggregate_file(p2, MECH).batches
    for pair in ([a, p1], [p1, p2]):                                          # attacks 3, 4
        with pytest.raises(IncompatibleError, match="already counted"):
            aggregate_files(pair, MECH)


def test_rows_duplicated_inside_a_file_are_refused(reports, tmp_path):
    doubled = np.concatenate([reports, reports])                              # attack 5
    with pytest.raises(IncompatibleError, match="duplicated reports"):
        MECH.aggregate(doubled)
    with pytest.raises(FormatError, match="duplicated reports"):
        load_reports(dump_reports(MECH, doubled))
    with pytest.raises(FormatError, match="duplicated reports"):
        aggregate_file(write_parquet(tmp_path / "d.parquet", doubled), MECH)
    one_more = np.concatenate([reports, reports[:1]])
    with pytest.raises(IncompatibleError, match="1 pair"):
        MECH.aggregate(one_more)


def test_small_filters_repeat_honestly_and_are_counted():
    """At L = 8 honest rows repeat (256 possible rows): the bound allows them, an excess is refused."""
    small = BFRRCE(epsilon=1.0, L=8)
    honest = small.privatize(np.arange(2000) % 5, rng=0)
    assert small.aggregate(honest).n == 2000
    assert expected_repeats(2000, 8, 1, small.p, small.q) > 1000
    wide = BFRRCE(epsilon=1.0, L=64)
    assert 1e-3 < expected_repeats(10 ** 6, 64, 1, wide.p, wide.q) < 1e-2   # one pair: plausible
    rows = wide.privatize(np.arange(3000), rng=1)
    with pytest.raises(IncompatibleError, match="duplicated"):
        wide.aggregate(np.concatenate([rows, rows[:3]]))                      # three: not at n = 3003


def test_sums_file_with_its_own_relabelled_input_is_refused(reports, tmp_path):
    a = tmp_path / "a.bfr"
    a.write_bytes(dump_reports(MECH, reports))
    sums = load_column_sums(dump_column_sums(aggregate_file(a)))
    relabelled = rewrite_header(a.read_bytes(), lambda h: {**h, "batch": "cd" * 32})
    with pytest.raises(FormatError, match="edited"):                         # attack 6, edited label
        add_file(sums, relabelled)
    with pytest.raises(IncompatibleError, match="already counted"):           # attack 6, re-encoded
        add_file(sums, dump_reports(MECH, reports[::-1]))


def test_in_memory_aggregate_and_file_of_the_same_reports(reports, tmp_path):
    a = tmp_path / "a.bfr"
    a.write_bytes(dump_reports(MECH, reports))
    with pytest.raises(IncompatibleError, match="already counted"):           # attack 8
        MECH.aggregate(reports).merge(aggregate_file(a))
    with pytest.raises(IncompatibleError, match="already counted"):
        add_file(MECH.aggregate(reports), a.read_bytes())


def test_a_fake_file_cannot_block_an_honest_one(reports, tmp_path):
    honest = tmp_path / "honest.bfr"
    honest.write_bytes(dump_reports(MECH, reports))
    honest_id = json.loads(honest.read_bytes()[15:15 + struct.unpack_from("<I", honest.read_bytes(), 11)[0]])["batch"]
    fake_rows = np.zeros_like(reports[:10])
    fake_rows[np.arange(10), 0] = np.arange(10) + 1                           # ten distinct rows
    fake = tmp_path / "fake.bfr"
    fake.write_bytes(rewrite_header(dump_reports(MECH, fake_rows), lambda h: {**h, "batch": honest_id}))
    with pytest.raises(FormatError, match="edited"):                         # attack 9: the copied id
        aggregate_files([fake, honest])
    fake.write_bytes(dump_reports(MECH, fake_rows))
    total = aggregate_files([fake, honest])                                   # both counted
    assert total.n == len(reports) + 10 and len(total.batches) == 2


def test_version_1_files(reports):
    v2 = dump_reports(MECH, reports)
    v1 = rewrite_header(v2[:8] + b"\x01\x00" + v2[10:],
                        lambda h: {"mechanism": h["mechanism"], "batch": "0" * 32})
    mech, back, batch = load_reports(v1)                       # read with its rows' identifier
    assert {batch} == MECH.aggregate(reports).batches
    sums = dump_column_sums(MECH.aggregate(reports))
    with pytest.raises(FormatError, match="version-1 column sums"):
        load_column_sums(rewrite_header(sums[:8] + b"\x01\x00" + sums[10:], lambda h: h))


def test_seeded_files_are_marked_and_refused(reports, tmp_path):
    data = dump_reports(MECH, reports, seeded=True)
    with pytest.raises(SeededError, match="allow_seeded"):
        load_reports(data)
    path = tmp_path / "s.bfr"
    path.write_bytes(data)
    with pytest.raises(SeededError):
        aggregate_file(path)
    sums = aggregate_file(path, allow_seeded=True)
    assert sums.seeded and (sums + MECH.aggregate(reports[:0])).seeded
    with pytest.raises(SeededError):
        load_column_sums(dump_column_sums(sums))
    assert load_column_sums(dump_column_sums(sums), allow_seeded=True) == sums


def test_privatize_with_a_seed_warns():
    with pytest.warns(PrivacyWarning, match="seeded client noise"):
        MECH.privatize(["a"], rng=0)
    with pytest.warns(PrivacyWarning, match="seeded client noise"):
        MECH.privatize(["a"], rng=np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        MECH.privatize(["a"])                                  # the secure default is silent
        MECH.simulate(["a", "b"], rng=0)                       # a simulation is not client noise


def test_large_report_files_load(tmp_path):
    """Above the 64 MiB chunk (the broadcast bug of issue 23): n·ceil(L/8) = 64 MiB + 1 KiB."""
    mech = BFRRCE(epsilon=1.0, L=8192)
    n = (1 << 26) // 1024 + 1
    rows = np.zeros((n, 1024), dtype=np.uint8)
    rows[:, :8] = np.arange(n, dtype="<u8").view(np.uint8).reshape(n, 8)     # distinct rows
    data = dump_reports(mech, rows)
    _, back, _ = load_reports(data, mech)
    assert back.shape == rows.shape and np.array_equal(back[-1], rows[-1])
    assert add_file(mech.empty_aggregate(), data).n == n
