"""MinHash signatures of shingle sets (``datasketch``), as the index stores and compares them.

A signature is ``NUM_PERM`` minimum hash values of the set under that many random permutations
(datasketch's ``affine32`` scheme, seed ``SEED``): the share of positions where two signatures
agree estimates the Jaccard similarity of the two sets, with a standard error of
sqrt(J (1 - J) / NUM_PERM), at most 0.044 for 128 permutations. Stored as little-endian uint32
bytes (512 bytes per signature). ``SCHEME`` names everything that decides a signature; changing
any of it makes every stored digest differ, so ``screening_index --rebuild`` hashes them all again.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Sequence

import numpy as np
from datasketch import MinHash

from . import shingles

NUM_PERM = 128
SEED = 1
PERMUTATIONS = "affine32"
DTYPE = np.dtype("<u4")
# A shingle's 32-bit hash before the permutations: CRC-32 (C, five times faster than
# datasketch's default SHA-1 per shingle); the affine32 scheme mixes it with MurmurHash3's
# finalizer first, so its linearity does not reach the permutations.
HASH = zlib.crc32
SCHEME = (
    f"minhash/{PERMUTATIONS}/{NUM_PERM}/seed{SEED}/crc32/statement-words-"
    f"{shingles.STATEMENT_SHINGLE}/code-tokens-{shingles.CODE_SHINGLE}/v1"
)
# datasketch's name and version, for the docs and the release card.
LIBRARY = "datasketch MinHash"


def signatures(sets: Sequence[set[str]]) -> list[np.ndarray]:
    """One signature per shingle set (an empty set's is all-maximum: never compared)."""
    hashed = MinHash.generator(
        ([s.encode("utf-8") for s in sorted(one)] for one in sets),
        num_perm=NUM_PERM,
        seed=SEED,
        scheme=PERMUTATIONS,
        hashfunc=HASH,
    )
    return [np.asarray(m.hashvalues, dtype=DTYPE) for m in hashed]


def signature(one: set[str]) -> np.ndarray:
    return signatures([one])[0]


def to_bytes(sig: np.ndarray) -> bytes:
    return sig.astype(DTYPE, copy=False).tobytes()


def from_bytes(data: bytes | memoryview) -> np.ndarray:
    return np.frombuffer(bytes(data), dtype=DTYPE)


def estimate(a: np.ndarray, b: np.ndarray) -> float:
    """The Jaccard similarity the two signatures estimate."""
    return float(np.count_nonzero(a == b)) / NUM_PERM


def digest(statement: str, code: str, extra: Iterable[str] = ()) -> str:
    """What decides a problem's index row: the scheme (its version changes with the
    normalisation), the texts, ``extra``."""
    h = hashlib.sha256(SCHEME.encode())
    for part in (statement, code, *extra):
        h.update(b"\x00" + part.encode("utf-8", errors="surrogatepass"))
    return h.hexdigest()
