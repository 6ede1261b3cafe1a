#!/usr/bin/env python3
"""Writes Tests/BluetoothCryptoTests/OracleVectors.swift: AES-128 blocks and P-256 key
agreements computed by an independent implementation (pyca/cryptography on OpenSSL, which
the Bumble peer's venv carries), against which BluetoothCrypto's own AES-128 and P-256 are
tested. The inputs come from a fixed seed, so running this again writes the same file.

    .venv/bin/python Fixtures/crypto/oracle_vectors.py > Tests/BluetoothCryptoTests/OracleVectors.swift
"""
import random

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551

rng = random.Random(0x426C75656A6179)  # "Bluejay"


def hex32(value):
    return f'{value:064x}'


def aes_vectors(count):
    rows = []
    edges = [bytes(16), b'\xff' * 16]
    inputs = [(key, block) for key in edges for block in edges]
    inputs += [(rng.randbytes(16), rng.randbytes(16)) for _ in range(count - len(inputs))]
    for key, block in inputs:
        encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
        rows.append((key.hex(), block.hex(), (encryptor.update(block) + encryptor.finalize()).hex()))
    return rows


def public(d):
    numbers = ec.derive_private_key(d, ec.SECP256R1()).public_key().public_numbers()
    return numbers.x, numbers.y


def scalars(count):
    # Random scalars, and the edges of the range [1, n-1].
    edges = [1, 2, 3, N - 1, N - 2, (N - 1) // 2, 1 << 255, (1 << 128) - 1]
    return edges + [rng.randrange(1, N) for _ in range(count - len(edges))]


def key_agreements(count):
    rows = []
    ds = scalars(count)
    for index, d in enumerate(ds):
        peer = ds[(index + 1) % len(ds)]
        x, y = public(peer)
        shared = ec.derive_private_key(d, ec.SECP256R1()).exchange(
            ec.ECDH(), ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key())
        ox, oy = public(d)
        rows.append((hex32(d), hex32(ox) + hex32(oy), hex32(x) + hex32(y), shared.hex()))
    return rows


def off_curve(count):
    """Points the oracle refuses: a valid point with one bit of y flipped."""
    rows = []
    for _ in range(count):
        x, y = public(rng.randrange(1, N))
        bit = 1 << rng.randrange(256)
        rows.append(hex32(x) + hex32(y ^ bit if (y ^ bit) < P else y ^ 1))
    return refused_by_oracle(rows)


def unreduced_points():
    """Points on the curve written with a coordinate not reduced below p. SEC 1 v2 3.2.2.1
    refuses them and so does BluetoothCrypto; OpenSSL reduces them and accepts."""
    unreduced = []
    # Points on the curve written with a coordinate not reduced below p: x + p needs an x
    # under 2^256 - p, so take the smallest x on the curve; y + p likewise.
    b = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
    x = 0
    while True:
        rhs = (x ** 3 - 3 * x + b) % P
        y = pow(rhs, (P + 1) // 4, P)  # p = 3 mod 4: the square root, if rhs has one
        if y * y % P == rhs:
            break
        x += 1
    unreduced.append(hex32(x + P) + hex32(y))
    small_y = min(y, P - y)
    if small_y + P < 1 << 256:
        unreduced.append(hex32(x) + hex32(small_y + P))
    return unreduced


def refused_by_oracle(rows):
    refused = []
    for row in rows:
        x, y = int(row[:64], 16), int(row[64:], 16)
        try:
            ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
        except ValueError:
            refused.append(row)
    return refused


def swift_array(name, doc, rows):
    lines = [f'/// {doc}', f'let {name}: [{"(" + ", ".join(["String"] * len(rows[0])) + ")" if isinstance(rows[0], tuple) else "String"}] = [']
    for row in rows:
        lines.append(f'    ({", ".join(repr(v).replace(chr(39), chr(34)) for v in row)}),' if isinstance(row, tuple)
                     else f'    "{row}",')
    lines.append(']')
    return '\n'.join(lines)


def main():
    print('// Written by Fixtures/crypto/oracle_vectors.py from pyca/cryptography (OpenSSL); do not edit.')
    # Generated rows stay one vector a line: the 120-column format would wrap each into five and
    # take the file past the 500-line limit, so make format and make lint leave it alone.
    print('// swift-format-ignore-file')
    print()
    print(swift_array('aesOracle', 'AES-128: (key, plaintext, ciphertext), hex, FIPS-197 octet order.', aes_vectors(200)))
    print()
    print(swift_array('p256Oracle', 'P-256: (private d, its public X||Y, a peer public X||Y, the shared x), hex, big-endian.',
                      key_agreements(100)))
    print()
    print(swift_array('p256OffCurve', 'P-256 public keys X||Y off the curve (one bit of y flipped), which the oracle refuses.',
                      off_curve(30)))
    print()
    print(swift_array('p256Unreduced', 'P-256 points X||Y on the curve but with x or y written as itself plus p: SEC 1 v2 '
                      '3.2.2.1 refuses them (OpenSSL reduces and accepts).', unreduced_points()))


if __name__ == '__main__':
    main()
