"""Real Bitcoin mainnet data: block files in, output addresses out.

Reads Bitcoin Core ``blk*.dat`` streams (4-byte network magic, 4-byte little-endian length,
serialized block; records of other networks are skipped; files obfuscated with the
``xor.dat`` key of Bitcoin Core 28+ are de-obfuscated) and files of raw serialized blocks,
including segregated-witness transactions (BIP 144 marker and flag). Every block's merkle root
is checked against its transactions, so corrupted or misparsed bytes are refused, not read as
data. Blocks are deduplicated by hash. Output scripts become addresses: P2PKH and P2SH
(base58check), P2WPKH and P2WSH (bech32, BIP 173), P2TR (bech32m, BIP 350), P2PK as the P2PKH
address of its key; OP_RETURN, bare multisig and non-standard scripts have none. Nothing is
downloaded: by default :func:`load` reads the sample shipped in ``data/`` (see
``data/README.md``: 51,126 output addresses of 610 real blocks).
"""

from __future__ import annotations

import hashlib
import struct
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bfrrce.io.values import read_values
from protocols.errors import LDPError, LDPValueError

MAINNET = b"\xf9\xbe\xb4\xd9"
OTHER_MAGICS = {b"\x0b\x11\x09\x07", b"\xfa\xbf\xb5\xda", b"\x0a\x03\xcf\x40", b"\x1c\x16\x3f\x28"}
BLOCK_SUFFIXES = (".dat", ".blk")
DATA = Path(__file__).resolve().parent / "data"
SAMPLE = DATA / "bitcoin_outputs.csv.gz"


class BitcoinFormatError(LDPValueError):
    """Bytes that do not parse as Bitcoin blocks, or a block file that cannot be read."""


class BitcoinPathError(LDPError, FileNotFoundError):
    """A path that holds no Bitcoin data: it does not exist, or is a folder without block files."""


def sha256d(data):
    return hashlib.sha256(hashlib.sha256(data).digest()).digest()


def hash160(data):
    return hashlib.new("ripemd160", hashlib.sha256(data).digest()).digest()


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58check(payload):
    data = payload + sha256d(payload)[:4]
    num = int.from_bytes(data, "big")
    out = ""
    while num:
        num, rem = divmod(num, 58)
        out = _B58[rem] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values):
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    return chk


def segwit_address(version, program, hrp="bc"):
    """bech32 (v0, BIP 173) or bech32m (v1+, BIP 350) address of a witness program."""
    acc, bits, data = 0, 0, [version]
    for byte in program:
        acc = (acc << 8) | byte
        bits += 8
        while bits >= 5:
            bits -= 5
            data.append((acc >> bits) & 31)
    if bits:
        data.append((acc << (5 - bits)) & 31)
    const = 1 if version == 0 else 0x2BC830A3
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    pm = _polymod(expanded + data + [0] * 6) ^ const
    checksum = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH32[d] for d in data + checksum)


def script_address(script):
    """(script type, address or None) of an output script."""
    s = script
    if len(s) == 25 and s[:3] == b"\x76\xa9\x14" and s[23:] == b"\x88\xac":
        return "pubkeyhash", base58check(b"\x00" + s[3:23])
    if len(s) == 23 and s[:2] == b"\xa9\x14" and s[22] == 0x87:
        return "scripthash", base58check(b"\x05" + s[2:22])
    if len(s) in (35, 67) and s[0] == len(s) - 2 and s[-1] == 0xAC:
        return "pubkey", base58check(b"\x00" + hash160(s[1:-1]))
    if len(s) == 22 and s[:2] == b"\x00\x14":
        return "witness_v0_keyhash", segwit_address(0, s[2:])
    if len(s) == 34 and s[:2] == b"\x00\x20":
        return "witness_v0_scripthash", segwit_address(0, s[2:])
    if len(s) == 34 and s[:2] == b"\x51\x20":
        return "witness_v1_taproot", segwit_address(1, s[2:])
    if s[:1] == b"\x6a":
        return "nulldata", None
    if s and s[-1:] == b"\xae":
        return "multisig", None
    return "nonstandard", None


@dataclass(frozen=True)
class Output:
    txid: str
    vout: int
    value: int
    script_type: str
    address: str | None


@dataclass(frozen=True)
class Transaction:
    txid: str
    segwit: bool
    input_scripts: tuple
    outputs: tuple


@dataclass(frozen=True)
class Block:
    hash: str
    prev_hash: str
    version: int
    time: int
    bip34_height: int | None
    outputs: tuple


class _Reader:
    def __init__(self, data, pos=0):
        self.data, self.pos = data, pos

    def take(self, k):
        if self.pos + k > len(self.data):
            raise BitcoinFormatError("truncated block")
        out = self.data[self.pos:self.pos + k]
        self.pos += k
        return out

    def varint(self):
        first = self.take(1)[0]
        if first < 0xFD:
            return first
        return int.from_bytes(self.take({0xFD: 2, 0xFE: 4, 0xFF: 8}[first]), "little")


def _transaction(r):
    """The transaction at the reader's position, and its txid in internal byte order.

    The txid hashes the serialization without the BIP 144 marker, flag and witnesses.
    """
    start = r.pos
    r.take(4)
    segwit = r.data[r.pos:r.pos + 2] == b"\x00\x01"
    if segwit:
        r.take(2)
    body_start = r.pos
    scripts = []
    for _ in range(r.varint()):
        r.take(36)
        scripts.append(r.take(r.varint()))
        r.take(4)
    spent = []
    for _ in range(r.varint()):
        value = struct.unpack("<q", r.take(8))[0]
        spent.append((value, *script_address(r.take(r.varint()))))
    body_end = r.pos
    if segwit:
        for _ in scripts:
            for _ in range(r.varint()):
                r.take(r.varint())
    lock = r.take(4)
    raw_id = sha256d(r.data[start:start + 4] + r.data[body_start:body_end] + lock)
    txid = raw_id[::-1].hex()
    outputs = tuple(Output(txid, vout, *o) for vout, o in enumerate(spent))
    return Transaction(txid, segwit, tuple(scripts), outputs), raw_id


def parse_transaction(data: bytes, pos: int = 0) -> tuple[Transaction, int]:
    """Parse one serialized transaction, with or without witnesses.

    Parameters
    ----------
    data : bytes
        Holds the transaction at ``pos``.
    pos : int
        Where it starts.

    Returns
    -------
    (Transaction, int)
        The transaction (txid, whether it has the BIP 144 marker and flag, input scripts,
        outputs) and the position after it.

    Raises
    ------
    BitcoinFormatError
        If ``data`` ends inside the transaction.

    References
    ----------
    BIP 144, "Segregated Witness (Peer Services)": the txid is sha256d of the serialization
    without marker, flag and witnesses.
    """
    r = _Reader(data, pos)
    tx, _ = _transaction(r)
    return tx, r.pos


def _bip34_height(version, coinbase):
    """The height a version >= 2 block pushes first in its coinbase script (BIP 34), else None."""
    script = coinbase.input_scripts[0] if coinbase.input_scripts else b""
    if version < 2 or not script or not 1 <= script[0] <= 8 or len(script) < 1 + script[0]:
        return None
    return int.from_bytes(script[1:1 + script[0]], "little")


def parse_block(data, pos=0):
    """Parse one serialized block at ``pos``; returns (Block, position after it)."""
    r = _Reader(data, pos)
    header = r.take(80)
    block_hash = sha256d(header)[::-1].hex()
    version, time = struct.unpack_from("<I", header, 0)[0], struct.unpack_from("<I", header, 68)[0]
    txs, ids = [], []
    for _ in range(r.varint()):
        tx, raw_id = _transaction(r)
        txs.append(tx)
        ids.append(raw_id)
    if not ids or merkle_root(ids) != header[36:68]:
        raise BitcoinFormatError(f"block {block_hash}: merkle root does not match its transactions")
    outputs = tuple(o for tx in txs for o in tx.outputs)
    return Block(block_hash, header[4:36][::-1].hex(), version, time,
                 _bip34_height(version, txs[0]), outputs), r.pos


def merkle_root(hashes):
    """Bitcoin's merkle root of transaction hashes (internal byte order; odd levels repeat the last)."""
    level = list(hashes)
    while len(level) > 1:
        if len(level) % 2:
            level.append(level[-1])
        level = [sha256d(level[i] + level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


def iter_blocks(data):
    """Blocks of a file: a blk*.dat record stream (mainnet records only) or raw blocks."""
    pos = 0
    while pos + 8 <= len(data):
        magic = data[pos:pos + 4]
        if magic == b"\0\0\0\0":                     # pre-allocated tail of a blk file
            break
        if magic == MAINNET or magic in OTHER_MAGICS:
            length = struct.unpack_from("<I", data, pos + 4)[0]
            if magic == MAINNET:
                block, _ = parse_block(data[pos + 8:pos + 8 + length])
                yield block
            pos += 8 + length
        else:
            block, pos = parse_block(data, pos)
            yield block


def block_files(path):
    """The block files at ``path``, sorted by name.

    A file is returned as is. In a folder (or its ``blocks/`` subfolder, as in a Bitcoin Core
    data directory): its ``blk*.dat`` files if it has any (Bitcoin Core's ``rev*.dat`` undo
    files are not blocks), else every ``.dat`` and ``.blk`` file.

    Raises
    ------
    BitcoinPathError
        If ``path`` does not exist or the folder holds no block files.
    """
    root = Path(path).expanduser()
    if not root.exists():
        raise BitcoinPathError(f"no such file or folder: {root}")
    if root.is_file():
        return [root]
    folder = root / "blocks" if (root / "blocks").is_dir() else root
    files = sorted(folder.glob("blk*.dat")) or sorted(
        p for p in folder.iterdir() if p.suffix in BLOCK_SUFFIXES and p.is_file())
    if not files:
        raise BitcoinPathError(f"no blk*.dat, .dat or .blk block files in {folder}")
    return files


def read_block_file(path):
    """The bytes of a block file, XORed with the key in ``xor.dat`` beside it if that is non-zero.

    Bitcoin Core 28+ obfuscates the ``blk*.dat`` files of a new data directory: byte ``i`` of a
    file is stored XORed with byte ``i mod 8`` of the 8-byte key in ``blocks/xor.dat``.

    Raises
    ------
    BitcoinFormatError
        If the file cannot be read (permissions, a folder, an I/O error).
    """
    path = Path(path)
    key_file = path.parent / "xor.dat"
    try:
        data = path.read_bytes()
        key = key_file.read_bytes() if key_file.is_file() else b""
    except OSError as exc:
        raise BitcoinFormatError(f"cannot read block file {path}: {exc.strerror or exc}") from exc
    if key.strip(b"\0"):
        mask = np.resize(np.frombuffer(key, np.uint8), len(data))
        data = (np.frombuffer(data, np.uint8) ^ mask).tobytes()
    return data


def iter_distinct_blocks(paths):
    """Blocks of the given files in file order, each hash once (later copies are skipped)."""
    seen = set()
    for path in paths:
        for block in iter_blocks(read_block_file(path)):
            if block.hash not in seen:
                seen.add(block.hash)
                yield block


def block_heights(blocks, hints: dict | None = None) -> dict:
    """The height of each block, None where the blocks cannot tell.

    In order of precedence: the genesis block (previous hash zero) has height 0; a version >= 2
    block states its height first in its coinbase script (BIP 34); ``hints`` gives the rest.
    Each height spreads along the previous-hash links among ``blocks``: the parent of a block
    at height h is at h − 1, its children at h + 1.

    Parameters
    ----------
    blocks : iterable of Block
        Distinct blocks, in any order (Bitcoin Core stores them out of order).
    hints : dict, optional
        Block hash → height, used only for blocks that the rules above leave unknown.

    Returns
    -------
    dict
        Block hash → height (int) or None.

    References
    ----------
    BIP 34, "Block v2, Height in Coinbase".
    """
    by_hash = {b.hash: b for b in blocks}
    links = {h: [] for h in by_hash}
    for b in blocks:
        if b.prev_hash in by_hash:
            links[b.prev_hash].append((b.hash, 1))
            links[b.hash].append((b.prev_hash, -1))
    seeds = ({b.hash: 0 for b in blocks if b.prev_hash == "0" * 64},
             {b.hash: b.bip34_height for b in blocks if b.bip34_height is not None},
             {h: v for h, v in (hints or {}).items() if h in by_hash})
    heights = {}
    for seed in seeds:
        queue = deque(seed.items())
        while queue:
            h, v = queue.popleft()
            if h not in heights:
                heights[h] = v
                queue.extend((k, v + step) for k, step in links[h] if k not in heights)
    return {h: heights.get(h) for h in by_hash}


def load(path: str | Path | None = None, column: str = "address", seed: int = 0) -> dict:
    """The fields of the ``bitcoin`` dataset: output addresses, one per addressed output.

    Parameters
    ----------
    path : str or Path, optional
        None (the default): the shipped sample ``data/bitcoin_outputs.csv.gz`` (51,126 outputs
        of 610 real mainnet blocks, see ``data/README.md``). A folder: a Bitcoin Core data
        directory or its ``blocks/`` folder (``blk*.dat``), or any folder of ``.dat``/``.blk``
        block files. A ``.dat`` or ``.blk`` file: one block file. Any other file: an export
        (CSV, TSV or Parquet, optionally gzipped) with an address column.
    column : str
        The export's address column (default ``"address"``).
    seed : int
        Seed of the decoy candidates, see :func:`candidates`.

    Returns
    -------
    dict
        ``values`` (array of str, one address per addressed output, deduplicated blocks),
        ``cardinality``, ``candidates`` (:func:`candidates` of the values), ``description``,
        ``provenance``, ``extra`` (``{"blocks": count}`` when read from blocks).

    Raises
    ------
    BitcoinPathError
        If ``path`` does not exist or is a folder without block files.
    BitcoinFormatError
        If a file cannot be read, a block file holds bytes that are not blocks, or the blocks
        have no addressed output.
    bfrrce.io.InputError
        (an LDPError and ValueError) If an export lacks ``column`` or holds no values.
    """

    source = SAMPLE if path is None else Path(path).expanduser()
    if not source.exists():
        raise BitcoinPathError(f"no such file or folder: {source}")
    if source.is_dir() or source.suffix in BLOCK_SUFFIXES:
        values, blocks = [], 0
        for block in iter_distinct_blocks(block_files(source)):
            blocks += 1
            values.extend(o.address for o in block.outputs if o.address is not None)
        if not values:
            raise BitcoinFormatError(f"no output with an address in the blocks of {source}")
        extra, what = {"blocks": blocks}, f"output addresses of {blocks:,} distinct mainnet blocks"
    else:
        try:
            values = read_values(source, column)
        except OSError as exc:
            raise BitcoinFormatError(f"cannot read {source}: {exc.strerror or exc}") from exc
        extra = {}
        what = "output addresses" + (f" (column {column!r})" if path is not None else "")
    values = np.array(values)
    domain = candidates(values, seed)
    distinct = len(domain) // 2
    origin = "the shipped sample of real mainnet blocks (datasets/data/README.md)" if path is None \
        else f"Bitcoin data read from {source}"
    return dict(values=values, cardinality=distinct, candidates=domain,
                description=f"{len(values):,} {what}, {distinct:,} distinct; candidates: these "
                            f"{distinct:,} plus {distinct:,} decoy addresses (seed {seed})",
                provenance=origin, extra=extra)


def _decoy(address, payload):
    """A well-formed address of the kind of ``address`` whose hash or program is ``payload``'s start."""
    if address.startswith("bc1") and len(address) > 10:
        version = _BECH32.find(address[3])
        size = (len(address) - 10) * 5 // 8           # characters after "bc1", version, checksum
        if version >= 0 and 2 <= size <= len(payload):
            return segwit_address(version, payload[:size])
    return base58check((b"\x05" if address.startswith("3") else b"\x00") + payload[:20])


def candidates(addresses=None, seed: int = 0) -> np.ndarray:
    """The distinct ``addresses`` and as many well-formed addresses that are not among them, sorted.

    Realistic candidates for the candidate-based estimators: the true distinct values alone
    would be an oracle domain that flatters them. Each distinct address, in sorted order, gets
    one decoy of its own kind from the i-th row of
    ``numpy.random.default_rng(seed).integers(0, 256, size=(D, 32), dtype=numpy.uint8)``:
    a ``1...`` (P2PKH) or ``3...`` (P2SH) address gets the base58check address of its version
    byte (0x00 or 0x05) and the row's first 20 bytes as the hash; a ``bc1...`` address the
    bech32 (v0, BIP 173) or bech32m (v1+, BIP 350) address of its witness version with the row's
    first bytes as a program of its length; anything else a P2PKH decoy. So the candidates have
    the mix of kinds of the data, and the kind of an address tells nothing about its presence.

    Parameters
    ----------
    addresses : array-like of str, optional
        Addresses, repeats allowed; default the shipped sample's (:data:`SAMPLE`).
    seed : int
        Seed of the decoys.

    Returns
    -------
    numpy.ndarray of str
        2·D sorted addresses, D the number of distinct ``addresses``.

    Raises
    ------
    LDPValueError
        If a decoy equals an address or another decoy (probability below D²·2^-160 for the
        20-byte hashes; never seen).

    References
    ----------
    BIP 13 (P2SH addresses), BIP 173 (bech32), BIP 350 (bech32m).
    """
    if addresses is None:
        addresses = read_values(SAMPLE, "address")
    distinct = np.unique(np.asarray(addresses, dtype=str))
    payloads = np.random.default_rng(seed).integers(0, 256, size=(len(distinct), 32), dtype=np.uint8)
    decoys = np.array([_decoy(a, p.tobytes()) for a, p in zip(distinct.tolist(), payloads)])
    both = np.concatenate([distinct, decoys])
    if len(np.unique(both)) != len(both):
        raise LDPValueError(f"seed {seed}: a decoy address collides; use another seed")
    return np.sort(both)
