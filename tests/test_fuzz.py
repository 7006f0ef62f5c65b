"""A derandomized slice of the fuzz benchmark (benchmarks/fuzz.py): mutated report and sums files
are refused with a FormatError or accepted only when they are valid files."""

import numpy as np

from benchmarks import fuzz


def test_mutated_files_are_refused_or_valid():
    counts = fuzz.run(400, seed=13)
    outcomes = {o for _, _, o in counts}
    assert outcomes <= {"refused", "accepted, valid"}, counts
    assert sum(counts.values()) == 400 and "refused" in outcomes
    assert {m for _, m, _ in counts} == set(fuzz.MUTATIONS)


def test_the_classifier_sees_invalid_acceptances_and_crashes(tmp_path, monkeypatch):
    kind, valid = fuzz.seeds(np.random.default_rng(0))[3]
    assert kind == "sums" and fuzz.read(kind, valid, tmp_path) == "accepted, valid"
    assert fuzz.read(kind, fuzz._with_crc(valid[:-4] + b"\0"), tmp_path) == "refused"
    parsed = fuzz.load_column_sums(valid)
    monkeypatch.setattr(fuzz, "load_column_sums", lambda data: parsed)        # accepts anything
    assert fuzz.read(kind, fuzz._with_crc(valid[:-4] + b"\0"), tmp_path) == "accepted, INVALID"

    def exhausted(data):
        raise MemoryError
    monkeypatch.setattr(fuzz, "load_column_sums", exhausted)
    assert fuzz.read(kind, valid, tmp_path) == "crash: MemoryError"
