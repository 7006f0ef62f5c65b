"""Real Bitcoin mainnet data: block files in, output addresses out.

Reads Bitcoin Core ``blk*.dat`` streams (4-byte network magic, 4-byte little-endian length,
serialized block; records of other networks are skipped) and files of raw serialized blocks,
including segregated-witness transactions (BIP 144 marker and flag). Every block's merkle root
is checked against its transactions, so corrupted or misparsed bytes are refused, not read as
data. Blocks are deduplicated by hash. Output scripts become addresses: P2PKH and P2SH (base58check), P2WPKH and P2WSH
(bech32, BIP 173), P2TR (bech32m, BIP 350), P2PK as the P2PKH address of its key; OP_RETURN,
bare multisig and non-standard scripts have none. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass
from pathlib import Path

MAINNET = b"\xf9\xbe\xb4\xd9"
OTHER_MAGICS = {b"\x0b\x11\x09\x07", b"\xfa\xbf\xb5\xda", b"\x0a\x03\xcf\x40", b"\x1c\x16\x3f\x28"}
DEFAULT_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "bitcoin"
ENV_VAR = "BFRRCE_BITCOIN_PATH"


class BitcoinFormatError(ValueError):
    """Bytes that do not parse as Bitcoin blocks."""


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
class Block:
    hash: str
    time: int
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


def parse_block(data, pos=0):
    """Parse one serialized block at ``pos``; returns (Block, position after it)."""
    r = _Reader(data, pos)
    header = r.take(80)
    block_hash = sha256d(header)[::-1].hex()
    time = struct.unpack_from("<I", header, 68)[0]
    outputs, txids = [], []
    for _ in range(r.varint()):
        start = r.pos
        r.take(4)
        segwit = r.data[r.pos:r.pos + 2] == b"\x00\x01"
        if segwit:
            r.take(2)
        body_start = r.pos
        n_in = r.varint()
        for _ in range(n_in):
            r.take(36)
            r.take(r.varint())
            r.take(4)
        tx_outputs = []
        for vout in range(r.varint()):
            value = struct.unpack("<q", r.take(8))[0]
            kind, address = script_address(r.take(r.varint()))
            tx_outputs.append((vout, value, kind, address))
        body_end = r.pos
        if segwit:
            for _ in range(n_in):
                for _ in range(r.varint()):
                    r.take(r.varint())
        lock = r.take(4)
        stripped = data[start:start + 4] + data[body_start:body_end] + lock
        txids.append(sha256d(stripped))
        txid = txids[-1][::-1].hex()
        outputs.extend(Output(txid, v, val, k, a) for v, val, k, a in tx_outputs)
    if not txids or merkle_root(txids) != header[36:68]:
        raise BitcoinFormatError(f"block {block_hash}: merkle root does not match its transactions")
    return Block(block_hash, time, tuple(outputs)), r.pos


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


def bitcoin_dir(path=None):
    """The data folder: ``path``, else $BFRRCE_BITCOIN_PATH, else ../shared/datasets/bitcoin."""
    return Path(path or os.environ.get(ENV_VAR) or DEFAULT_DIR)


def block_files(path=None):
    root = bitcoin_dir(path)
    if root.is_file():
        return [root]
    folder = root / "blocks" if (root / "blocks").is_dir() else root
    files = sorted(p for p in folder.iterdir() if p.suffix in (".dat", ".blk"))
    if not files:
        raise FileNotFoundError(f"no .dat or .blk block files in {folder}")
    return files


def read_blocks(paths):
    """Distinct blocks (by hash) of the given files, in file order."""
    seen = {}
    for path in paths:
        for block in iter_blocks(Path(path).read_bytes()):
            seen.setdefault(block.hash, block)
    return list(seen.values())


def output_addresses(blocks):
    """Addresses of every output that has one, one entry per output."""
    return [o.address for b in blocks for o in b.outputs if o.address is not None]
