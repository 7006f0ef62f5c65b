"""Fuzzing the file readers: mutated report and column-sums files, outcomes counted.

    python -m benchmarks.fuzz [--cases 20000] [--seed 0]

Starts from valid files (reports and column sums of three configurations: optimized l = 1,
symmetric l = 3, the paper's per-bit mode; 0 to 40 reports) and applies one of the mutations
below; half of the mutated files get their CRC-32 recomputed, so that the mutation reaches the
header and payload checks behind the checksum. Each case is read by the in-memory reader
(:func:`load_reports`, :func:`load_column_sums`) and, for report files, by the streaming reader
from disk (:func:`iter_report_chunks`). Outcomes:

refused
    A :class:`FormatError` (the only acceptable refusal of a file read without an expected
    mechanism).
accepted, valid
    The reader returned a result and the bytes are a valid file: writing the result again gives
    the same bytes, up to the JSON spelling of an equivalent header (same parsed object).
accepted, INVALID
    Any other acceptance (a silent wrong answer).
crash
    Any other exception, by type (MemoryError included).

The run passes when the last two are zero.

``--mode cli`` runs the command line (``aggregate`` on mutated report files, ``estimate
--aggregate`` on mutated sums files) and counts exit 0, exit 2 with one error line, and any
traceback or multi-line error; ``--mode csv`` writes random RFC 4180 files (CR, LF and CRLF
endings; quotes, delimiters and line breaks in values and headers) and compares the pyarrow
reader with the ``csv.reader`` fallback. Both pass when their "tracebacks and differences" is 0.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import struct
import tempfile
import warnings
import zlib

import numpy as np

from bfrrce import BFRRCE, PrivacyWarning
from bfrrce.io.formats import (dump_column_sums, dump_reports, iter_report_chunks, load_column_sums,
                               load_reports)
from protocols import FormatError

MUTATIONS = ("flip bit", "set byte", "truncate", "insert bytes", "delete bytes", "duplicate range",
             "header length", "n field", "json edit", "json value", "append")
JSON_VALUES = [0, -1, 1, 2, 7, 64, 2 ** 31, 2 ** 32, 2 ** 40, 2 ** 63, 1e300, -0.0, 64.0, "", "x",
               "0" * 32, "A" * 32, None, True, [], {}, [[[]]], {"a": {"b": 1}}, "0x1p+2", "nan"]


def _mechanisms():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        return [BFRRCE(epsilon=2.0, L=64), BFRRCE(epsilon=3.0, L=37, l=3, perturbation="symmetric"),
                BFRRCE(per_bit_epsilon=0.5, L=16, l=2)]


def seeds(rng):
    """Valid files: (kind, bytes) for reports and column sums of every configuration."""
    out = []
    for mech in _mechanisms():
        for n in (0, 1, 40):
            reports = mech.privatize(np.arange(n), rng=rng) if n else \
                np.zeros((0, (mech.L + 7) // 8), dtype=np.uint8)
            out.append(("reports", dump_reports(mech, reports)))
            agg = mech.aggregate(reports)
            out.append(("sums", dump_column_sums(agg)))
    return out


def _split(data):
    """(prefix of 11 bytes, header, rest without CRC) of a file, or None if it does not parse."""
    if len(data) < 15:
        return None
    hlen = struct.unpack_from("<I", data, 11)[0]
    if 15 + hlen > len(data) - 4:
        return None
    return data[:11], data[15:15 + hlen], data[15 + hlen:-4]


def _with_crc(body):
    return body + struct.pack("<I", zlib.crc32(body))


def _json_mutation(header, rng, replace_value):
    """A JSON header with one key removed, added or its value replaced (at any depth)."""
    try:
        obj = json.loads(header)
    except ValueError:
        return header
    target = obj
    if isinstance(obj, dict) and "mechanism" in obj and rng.random() < 0.6:
        target = obj["mechanism"]
    if not isinstance(target, dict) or not target:
        return header
    key = list(target)[rng.integers(len(target))]
    if replace_value:
        target[key] = _pick(rng, JSON_VALUES)
    elif rng.random() < 0.5:
        del target[key]
    else:
        target["extra"] = 1
    return json.dumps(obj, sort_keys=True).encode()


def _pick(rng, options):
    return options[int(rng.integers(len(options)))]


def mutate(data, rng):
    """(mutation name, mutated bytes)."""
    kind = MUTATIONS[rng.integers(len(MUTATIONS))]
    b = bytearray(data)
    size = len(b)
    pos = int(rng.integers(size))
    if kind == "flip bit":
        b[pos] ^= 1 << int(rng.integers(8))
    elif kind == "set byte":
        b[pos] = int(rng.integers(256))
    elif kind == "truncate":
        b = b[:pos]
    elif kind == "insert bytes":
        b[pos:pos] = rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8).tobytes()
    elif kind == "delete bytes":
        del b[pos:pos + int(rng.integers(1, 9))]
    elif kind == "duplicate range":
        b[pos:pos] = b[pos:pos + int(rng.integers(1, 64))]
    elif kind == "header length":
        b[11:15] = struct.pack("<I", _pick(rng, [0, 1, 2 ** 16, 2 ** 24, 2 ** 24 + 1, 2 ** 32 - 1,
                                                 int(rng.integers(2 ** 32))]))
    elif kind == "n field":
        parts = _split(data)
        if parts:
            start = 15 + len(parts[1])
            b[start:start + 8] = struct.pack("<Q", _pick(
                rng, [0, 1, 2, 39, 41, 2 ** 53, 2 ** 53 + 1, 2 ** 63, 2 ** 64 - 1, int(rng.integers(2 ** 62))]))
    elif kind in ("json edit", "json value"):
        parts = _split(data)
        if parts:
            header = _json_mutation(parts[1], rng, kind == "json value")
            b = bytearray(parts[0] + struct.pack("<I", len(header)) + header + parts[2] + data[-4:])
    else:
        b += rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8).tobytes()
    if len(b) >= 4 and rng.random() < 0.5:
        b = bytearray(_with_crc(bytes(b[:-4])))
    return kind, bytes(b)


def _equivalent(data, redump):
    a, b = _split(data), _split(redump)
    return (a is not None and b is not None and a[0] == b[0] and a[2] == b[2]
            and json.loads(a[1]) == json.loads(b[1]) and zlib.crc32(data[:-4]).to_bytes(4, "little") == data[-4:])


def read(kind, data, folder):
    """Outcome of reading ``data`` as ``kind``: 'refused', 'accepted, valid', 'accepted, INVALID',
    or 'crash: <exception type>'."""
    try:
        if kind == "sums":
            redump = dump_column_sums(load_column_sums(data, allow_seeded=True))
        else:
            mech, reports, batch = load_reports(data, allow_seeded=True)
            redump = dump_reports(mech, reports, seeded=json.loads(_split(data)[1]).get("seeded", False))
            path = os.path.join(folder, "case.bfr")
            with open(path, "wb") as fh:
                fh.write(data)
            rows = sum(len(chunk) for _, chunk in iter_report_chunks(path, chunk_rows=7, allow_seeded=True))
            if rows != len(reports):
                return "accepted, INVALID"
    except FormatError:
        return "refused"
    except Exception as exc:                     # noqa: BLE001 - counting every other outcome
        return f"crash: {type(exc).__name__}"
    return "accepted, valid" if _equivalent(data, redump) else "accepted, INVALID"


def run(cases, seed=0):
    """Counts {(file kind, mutation, outcome): cases} over ``cases`` mutated files."""
    rng = np.random.default_rng(seed)
    valid = seeds(rng)
    counts = collections.Counter()
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(cases):
            kind, data = valid[rng.integers(len(valid))]
            mutation, mutated = mutate(data, rng)
            counts[kind, mutation, read(kind, mutated, folder)] += 1
    return counts


def self_check(folder):
    """The classifier sees invalid acceptances and crashes: a reader that accepts anything, or
    runs out of memory, is reported as such (raises AssertionError otherwise)."""
    global load_column_sums
    kind, valid = seeds(np.random.default_rng(0))[3]
    damaged = _with_crc(valid[:-4] + b"\0")
    assert kind == "sums" and read(kind, valid, folder) == "accepted, valid"
    assert read(kind, damaged, folder) == "refused"
    honest, parsed = load_column_sums, load_column_sums(valid)

    def exhausted(data, **_):
        raise MemoryError
    try:
        load_column_sums = lambda data, **_: parsed                     # noqa: E731 - accepts anything
        assert read(kind, damaged, folder) == "accepted, INVALID"
        load_column_sums = exhausted
        assert read(kind, valid, folder) == "crash: MemoryError"
    finally:
        load_column_sums = honest


def run_cli(cases, seed=0):
    """The CLI on mutated report and sums files: Counter of outcomes 'exit 0', 'exit 2 (one line)',
    or 'TRACEBACK: <type>' (any exception escaping ``bfrrce.cli.main``, or a multi-line error)."""
    import io

    from bfrrce.cli import main as cli
    rng = np.random.default_rng(seed)
    valid = seeds(rng)
    counts = collections.Counter()
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(cases):
            kind, data = valid[rng.integers(len(valid))]
            _, mutated = mutate(data, rng)
            path = os.path.join(folder, "case.bfr")
            with open(path, "wb") as fh:
                fh.write(mutated)
            argv = (["aggregate", path, "--out", os.path.join(folder, "s.bfr"), "--allow-seeded"] if kind == "reports"
                    else ["estimate", path, "--aggregate", "--allow-seeded"])
            out, err = io.StringIO(), io.StringIO()
            try:
                code = cli(argv, out=out, err=err)
            except BaseException as exc:              # noqa: BLE001 - counting every escape
                counts[f"TRACEBACK: {type(exc).__name__}"] += 1
                continue
            lines = err.getvalue().strip().splitlines()
            counts["exit 0" if code == 0 else "exit 2 (one line)" if code == 2 and len(lines) == 1
                   else f"TRACEBACK: exit {code}, {len(lines)} lines"] += 1
    return counts


def reader_differential(cases, seed=0):
    """pyarrow and csv.reader on random RFC 4180 files (CR, LF, CRLF; quotes, delimiters and
    line breaks in values and headers): Counter of 'same' and 'DIFFERENT'."""
    import csv
    import io

    from bfrrce.io import values
    rng = np.random.default_rng(seed)
    alphabet = ["a", "b", ",", '"', "\n", "\r", " ", "é", "x" * 30, ""]
    counts = collections.Counter()
    with tempfile.TemporaryDirectory() as folder:
        for case in range(cases):
            text = io.StringIO(newline="")
            writer = csv.writer(text, lineterminator=["\n", "\r", "\r\n"][case % 3])
            header = ["".join(rng.choice(alphabet[:8], 2)) or "h", "w"]
            writer.writerow(header)
            writer.writerows([["".join(rng.choice(alphabet, rng.integers(0, 4))) or "z", "y"]
                              for _ in range(int(rng.integers(1, 30)))])
            path = os.path.join(folder, "c.csv")
            with open(path, "wb") as fh:
                fh.write(text.getvalue().encode())
            results = []
            for arrow in (values._arrow, lambda: None):
                original, values._arrow = values._arrow, arrow
                try:
                    results.append(values.read_values(path, header[0]))
                except values.InputError as exc:
                    results.append(f"InputError {str(exc).split(':')[0]}")
                finally:
                    values._arrow = original
            counts["same" if results[0] == results[1] or all(isinstance(r, str) for r in results)
                   else "DIFFERENT"] += 1
    return counts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mode", choices=("reader", "cli", "csv"), default="reader",
                    help="reader: the binary readers on mutated files; cli: the command line on them "
                         "(no traceback, one error line); csv: pyarrow against csv.reader")
    args = ap.parse_args(argv)
    if args.mode != "reader":
        counts = (run_cli if args.mode == "cli" else reader_differential)(args.cases, args.seed)
        print(f"{args.cases:,} cases, seed {args.seed}, mode {args.mode}: "
              + ", ".join(f"{o} {k:,}" for o, k in sorted(counts.items())))
        bad = sum(k for o, k in counts.items() if o.startswith(("TRACEBACK", "DIFFERENT")))
        print(f"tracebacks and differences: {bad}")
        return counts
    with tempfile.TemporaryDirectory() as folder:
        self_check(folder)
    print("classifier self-check passed (an accept-anything reader and a crash are both seen)")
    counts = run(args.cases, args.seed)
    outcomes = sorted({o for _, _, o in counts})
    print(f"{args.cases:,} mutated files, seed {args.seed}")
    print(f"{'file':8} {'mutation':16} " + " ".join(f"{o:>18}" for o in outcomes))
    for kind in ("reports", "sums"):
        for mutation in MUTATIONS:
            print(f"{kind:8} {mutation:16} " + " ".join(f"{counts[kind, mutation, o]:18,}" for o in outcomes))
    totals = collections.Counter()
    for (_, _, outcome), k in counts.items():
        totals[outcome] += k
    print("total: " + ", ".join(f"{o} {totals[o]:,}" for o in outcomes))
    bad = sum(k for o, k in totals.items() if o.startswith("crash") or o.endswith("INVALID"))
    print(f"crashes and invalid acceptances: {bad}")
    return totals


if __name__ == "__main__":
    main()
