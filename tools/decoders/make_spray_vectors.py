#!/usr/bin/python3
"""Generates spray test vectors with the scapy layers of spray_scapy.py (written from docs/PROTOCOL.md).

Run with Debian's python3 and python3-scapy, from the repository root:

    /usr/bin/python3 tools/decoders/make_spray_vectors.py

Writes, beside the RoCEv2 vectors:
  datapath/src/test/resources/wire/spray_vectors.pcap    classic pcap, one frame per vector
  datapath/src/test/resources/wire/spray_vectors.jsonl   per frame: {"frame", "error", "spray"}, what every
                                                         decoder must report

Every header at boundary values (all zeros, all ones), every opcode of S3.1, IPv6 and 802.1Q, reserved
fields and bits set (not malformed: S2.5), and malformed ones: each header cut short (with a correct ICRC, so
the reason is TRUNCATED_EXTENSION_HEADER), unknown opcodes of the range, TVer 1, wrong pad counts and payload
lengths, a wrong ICRC. Expected fields are the values the vectors were built from, keeping those that lie
wholly before the ICRC (S3.1), not anything parsed back.
"""
import json
import os
import struct

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

from spray_scapy import (CONH, HSB, NAKH, PRBH, RETH, SACKH, SETH, ImmDt, JSON_NAMES, OPCODES, PlaneAddressEntry,
                         SprayBTH, header_length, icrc, json_value, layout)

OUT = os.path.join('datapath', 'src', 'test', 'resources', 'wire')
TIMESTAMP = 1_700_000_000
ONES64 = (1 << 64) - 1
ONES32 = (1 << 32) - 1


def expected_fields(layer, kept):
    return {name: json_value(fld, layer.getfieldval(name))
            for name, offset, size, fld in layout(type(layer)) if offset + size <= kept}


def vector(opcode, headers, payload=b'', *, pad=None, cut=0, tver=0, bad_icrc=False, ipv6=False, vlan=False,
           psn=0, dest_qp=0x123456, error=None, payload_blocks=None):
    """One frame and its expected line. `cut` removes that many bytes from the end of the headers."""
    if pad is None:
        pad = (4 - len(payload) % 4) % 4
    header_bytes = b''.join(bytes(h) for h in headers)
    body = header_bytes[:len(header_bytes) - cut] + payload + b'\0' * pad
    bth = SprayBTH(opcode=opcode, se=0, m=0, padCount=pad & 3, tver=tver, pkey=0xFFFF, destQp=dest_qp,
                   ackReq=1, psn=psn)
    l4 = UDP(sport=49152, dport=4791, chksum=0) / Raw(bytes(bth) + body + b'\0\0\0\0')
    l3 = (IPv6(src='fd00::10', dst='fd00:0:0:1::abcd', tc=2) if ipv6 else
          IP(src='192.168.1.10', dst='192.168.1.20', flags='DF', id=0, tos=2)) / l4
    l2 = Ether(src='02:00:00:00:00:0a', dst='02:00:00:00:00:0b')
    frame = bytes((l2 / Dot1Q(vlan=7, prio=3) / l3) if vlan else (l2 / l3))
    l3_at = 18 if vlan else 14
    ihl = 40 if ipv6 else 20
    end = len(frame)
    crc = icrc(frame[l3_at:l3_at + ihl], frame[l3_at + ihl:end - 4])
    if bad_icrc:
        crc = bytes([crc[0] ^ 0xFF]) + crc[1:]
    frame = frame[:end - 4] + crc

    spray = None
    if opcode in OPCODES:
        spray = {'name': OPCODES[opcode][0]}
        kept = len(header_bytes) - cut
        for h in headers:
            spray[JSON_NAMES[type(h)]] = expected_fields(h, max(0, kept))
            kept -= header_length(type(h))
        if payload_blocks is not None:
            spray.update(payload_blocks)
    return frame, {'error': error, 'spray': spray}


def blocks(hsb, entries=None, payload_length=None):
    """Expected hsb and addresses of a payload (entries: layers that fit whole)."""
    out = {'hsb': expected_fields(hsb, payload_length if payload_length is not None else 64)}
    if entries is not None:
        out['addresses'] = [expected_fields(e, 24) for e in entries]
    return out


def all_vectors():
    v = []
    seth_max = SETH(path=255, flags=0x03, stream=0xFFFF, msn=ONES32, offset=ONES32, length=ONES32, rsn=ONES32,
                    messageTag=ONES64)
    seth_min = SETH()
    reth_max = RETH(va=ONES64, rkey=ONES32, length=ONES32)
    reth = RETH(va=0x7F00DEAD0000, rkey=0x1234, length=4096)
    seth = SETH(path=5, flags=0x01, stream=300, msn=7, offset=4096, length=8192, rsn=0, messageTag=0x0123456789ABCDEF)
    # valid, every opcode, boundary values
    v.append(vector(0xC0, [seth_max, reth_max], b'\xab' * 5, psn=0xFFFFFF))
    v.append(vector(0xC0, [seth_min, RETH()], b'', psn=0))
    v.append(vector(0xC1, [seth, reth, ImmDt(immediate=ONES32)], b'\x01' * 8))
    v.append(vector(0xC1, [seth_min, RETH(), ImmDt()], b''))
    v.append(vector(0xC2, [SETH(path=1, flags=2, stream=1, msn=1, offset=0, length=1, rsn=9, messageTag=1)], b'\x55'))
    v.append(vector(0xC3, [SETH(path=2, flags=2, stream=2, msn=3, length=3, rsn=ONES32), ImmDt(immediate=0xCAFEBABE)],
                    b'abc'))
    v.append(vector(0xC4, [SETH(path=0, flags=2, stream=4, msn=5, length=1 << 20, messageTag=42), reth]))
    v.append(vector(0xC5, [SETH(path=7, flags=0, stream=4, msn=5, offset=4, length=8)], b'\x00\x01\x02\x03'))
    sack = bytes([0x7F] + [0] * 30 + [0x01])
    v.append(vector(0xC8, [SACKH(path=63, flags=1, ceCount=0xFFFF, cumulativePsn=0xFFFFFF, sack=sack, rateHint=ONES32,
                                 ackSequence=ONES32, refusals=ONES32, tag=ONES64)]))
    v.append(vector(0xC8, [SACKH()]))
    v.append(vector(0xC9, [PRBH(path=3, flags=1, nextPsn=0xFFFFFF, tag=ONES64)], psn=0xFFFFFF))
    v.append(vector(0xC9, [PRBH(path=0, flags=0, nextPsn=0, tag=0)]))
    v.append(vector(0xCA, [NAKH(syndrome=1, stream=0xFFFF, msn=ONES32, rnrTimerMicros=ONES32, refusal=ONES32,
                                tag=0x1122334455667788)]))
    v.append(vector(0xCA, [NAKH(syndrome=4, stream=1, msn=2, refusal=3)]))
    v.append(vector(0xCA, [NAKH(syndrome=1, reason=1, stream=2, msn=7, rnrTimerMicros=10, refusal=4)]))  # S10.2
    v.append(vector(0xCB, [NAKH(syndrome=0, stream=9, msn=10)]))
    conh_connect = CONH(version=2, flags=1, paths=64, planes=2, mtu=4096, streams=0, senderCid=0xFFFFFF,
                        initialPsn=0xABCDEF, ingressMbps=ONES32, token=ONES64, reads=0xFF, window=0xFFFF)
    hsb = HSB(cookie=b'\x11' * 16, publicKey=bytes(range(32)), proof=b'\xee' * 16)
    entries = [PlaneAddressEntry(flags=0, mac=b'\x02\0\0\0\0\x01', address=bytes([10, 0, 0, 1]) + b'\0' * 12),
               PlaneAddressEntry(flags=1, mac=b'\x02\0\0\0\x01\x01', address=bytes.fromhex('fd000000000000010000000000000002'))]
    v.append(vector(0xCC, [conh_connect], bytes(hsb) + b''.join(bytes(e) for e in entries), dest_qp=0,
                    payload_blocks=blocks(hsb, entries)))
    v.append(vector(0xCD, [CONH(version=2, paths=8, planes=2, mtu=256, streams=4, senderCid=1, initialPsn=1,
                                ingressMbps=100000, token=5, reads=64, window=896)], bytes(HSB(publicKey=b'\x42' * 32)),
                    payload_blocks=blocks(HSB(publicKey=b'\x42' * 32))))
    v.append(vector(0xC6, [CONH(version=2, planes=2, ingressMbps=100000, token=5)], bytes(HSB(cookie=b'\xc0' * 16)),
                    payload_blocks=blocks(HSB(cookie=b'\xc0' * 16))))
    v.append(vector(0xC7, [CONH(version=2, planes=2, ingressMbps=100000, token=5, reason=5)]))
    v.append(vector(0xCE, [CONH(version=2, paths=8, planes=2, mtu=4096, streams=4, senderCid=0x0A01, token=0x1234,
                                tag=ONES64)]))
    v.append(vector(0xCF, [CONH(version=2, paths=8, planes=2, mtu=4096, streams=4, senderCid=0x0A02, token=0x1234,
                                tag=1)]))
    # IPv6, 802.1Q
    v.append(vector(0xC2, [seth], b'\x99' * 12, ipv6=True))
    v.append(vector(0xC8, [SACKH(path=1, cumulativePsn=5, ackSequence=1)], vlan=True))
    v.append(vector(0xCC, [CONH(version=2, flags=1, paths=1, planes=1, mtu=1024, streams=1, senderCid=3, token=1)],
                    bytes(hsb) + bytes(entries[1]), ipv6=True, vlan=True, dest_qp=0, payload_blocks=blocks(hsb, entries[1:])))
    # reserved fields and bits set: still well formed (S2.5); the SACKH's duplicates at their maximum (S5.1-3)
    v.append(vector(0xC0, [SETH(path=1, flags=0xFF, length=4), reth], b'\0' * 4))
    v.append(vector(0xC8, [SACKH(flags=0xFF, duplicates=0xFF, cumulativePsn=1)]))
    v.append(vector(0xC9, [PRBH(flags=0xFF, reserved2=0xFFFF, reserved4=0xFF, nextPsn=2)], psn=2))
    v.append(vector(0xCA, [NAKH(syndrome=0xFF, reason=0xFF)]))
    v.append(vector(0xCE, [CONH(version=0xFF, flags=0xFF, reserved8=0xFF, reserved12=0xFF, reads=0xFF, window=0xFFFF,
                                reason=0xFF)]))
    odd_entry = PlaneAddressEntry(flags=0xFF, reserved1=0xFF, mac=b'\xff' * 6, address=b'\xff' * 16)
    v.append(vector(0xCC, [CONH(version=2, flags=1, paths=1, planes=1, mtu=256, streams=1, senderCid=1)],
                    bytes(hsb) + bytes(odd_entry), dest_qp=0, payload_blocks=blocks(hsb, [odd_entry])))
    # a short payload: the handshake block's fields that fit, the address entries that fit (at most `planes`)
    v.append(vector(0xCC, [CONH(version=2, flags=1, paths=1, planes=4, mtu=256, streams=1, senderCid=1)],
                    bytes(hsb) + bytes(entries[0]) + b'\0' * 8, dest_qp=0, payload_blocks=blocks(hsb, entries[:1])))
    v.append(vector(0xCD, [CONH(version=2, planes=1)], bytes(hsb)[:40],
                    payload_blocks=blocks(hsb, payload_length=40)))
    # malformed: each header cut short, with a correct ICRC
    v.append(vector(0xC0, [seth_max, reth_max], cut=34, error='TRUNCATED_EXTENSION_HEADER'))   # SETH 10 of 28
    v.append(vector(0xC0, [seth, reth], cut=8, error='TRUNCATED_EXTENSION_HEADER'))            # RETH 8 of 16
    v.append(vector(0xC1, [seth, reth, ImmDt(immediate=7)], cut=2, error='TRUNCATED_EXTENSION_HEADER'))
    v.append(vector(0xC3, [seth, ImmDt(immediate=7)], cut=4, error='TRUNCATED_EXTENSION_HEADER'))
    v.append(vector(0xC4, [seth, reth], cut=44, error='TRUNCATED_EXTENSION_HEADER'))           # nothing after BTH
    v.append(vector(0xC8, [SACKH(path=2, cumulativePsn=9, sack=sack, rateHint=7)], cut=10,
                    error='TRUNCATED_EXTENSION_HEADER'))
    v.append(vector(0xC9, [PRBH(path=1, nextPsn=3)], cut=11, error='TRUNCATED_EXTENSION_HEADER'))
    v.append(vector(0xCB, [NAKH(stream=1, msn=2)], cut=7, error='TRUNCATED_EXTENSION_HEADER'))
    v.append(vector(0xCE, [CONH(version=2, paths=8, token=9)], cut=11, error='TRUNCATED_EXTENSION_HEADER'))
    # malformed: unknown opcodes of the range, TVer, pad and payload length, ICRC
    v.append(vector(0xD0, [], b'\0' * 28, error='UNKNOWN_OPCODE'))
    v.append(vector(0xDF, [], b'', error='UNKNOWN_OPCODE'))
    v.append(vector(0xC2, [seth], b'\0' * 4, tver=1, error='BAD_TVER'))
    v.append(vector(0xC8, [SACKH(path=1)], b'', pad=1, error='BAD_PAD_COUNT'))
    v.append(vector(0xC9, [PRBH(path=1)], b'\0' * 4, pad=0, error='BAD_PAYLOAD_LENGTH'))
    v.append(vector(0xC2, [seth], b'\0' * 5, pad=0, error='BAD_PAYLOAD_LENGTH'))
    v.append(vector(0xC5, [seth], b'', pad=0, error=None))
    v.append(vector(0xC0, [seth, reth], b'\0' * 8, bad_icrc=True, error='BAD_ICRC'))
    v.append(vector(0xC9, [PRBH(path=1)], b'', tver=2, bad_icrc=True, error='BAD_ICRC'))
    return v


def fix_blocks_for_malformed(vectors):
    """Payload blocks are shown only when pad and payload length are valid (S3.1); none of the malformed
    vectors above carries a handshake block, so nothing to remove: checked here."""
    for frame, line in vectors:
        if line['error'] and line['spray'] and ('hsb' in line['spray'] or 'addresses' in line['spray']):
            raise AssertionError('a malformed vector with payload blocks: ' + json.dumps(line))


def main():
    vectors = all_vectors()
    fix_blocks_for_malformed(vectors)
    packets = []
    for i, (frame, _) in enumerate(vectors):
        pkt = Ether(frame)
        pkt.time = TIMESTAMP + i
        packets.append(pkt)
    wrpcap(os.path.join(OUT, 'spray_vectors.pcap'), packets)
    with open(os.path.join(OUT, 'spray_vectors.jsonl'), 'w') as out:
        for i, (_, line) in enumerate(vectors):
            out.write(json.dumps({'frame': i, **line}, separators=(',', ':')) + '\n')
    print(len(vectors), 'vectors written')


if __name__ == '__main__':
    main()
