#!/usr/bin/python3
"""Generates RoCEv2 test vectors with an implementation independent of ours (scapy's RoCE layer).

Run once with Debian's python3 and python3-scapy, from this directory:

    /usr/bin/python3 make_vectors.py

Writes:
  roce_vectors.pcap      little-endian classic pcap (microseconds), one frame per vector, written by hand
  roce_vectors.pcapng    the same frames in big-endian pcapng (nanosecond timestamps), written by hand
  roce_vectors.jsonl     per frame, the exact JSON line `spraynic decode --json` must print

IPv4 ICRCs are computed by scapy.contrib.roce (BTH.compute_icrc). scapy has no IPv6 ICRC, so IPv6 ICRCs
come from `icrc()` below: the Linux rxe masking (rxe_icrc.c) written independently in Python over
zlib.crc32; the script first checks that `icrc()` agrees with scapy on every IPv4 vector.
Expected fields are the values the vectors were built from, not anything parsed back.
"""
import json
import struct
import zlib

from scapy.all import Ether, Dot1Q, IP, IPv6, UDP, TCP, ARP, Raw, Padding, IPOption_NOP, wrpcap, raw
from scapy.contrib.roce import BTH, AETH, CNPPadding

MAC_A = '02:00:00:00:00:0a'
MAC_B = '02:00:00:00:00:0b'
V4_A = '192.168.1.10'
V4_B = '192.168.1.20'
V6_A = 'fd00::10'
V6_B = 'fd00:0:0:1::abcd'
TIMESTAMP = 1_700_000_000

KEYS = ['frame', 'valid', 'error', 'ipVersion', 'srcIp', 'dstIp', 'ecn', 'udpSrcPort', 'udpDstPort', 'opcode',
        'solicited', 'migReq', 'padCount', 'tver', 'pkey', 'destQp', 'ackReq', 'psn', 'rethVa', 'rethRkey',
        'rethLength', 'aethSyndrome', 'aethMsn', 'immediate', 'payloadLength', 'icrc', 'icrcValid',
        'spray']  # spray: the spray headers (none in these RoCEv2 vectors; spray_vectors.* have them)


def icrc(frame: bytes, l3: int) -> bytes:
    """ICRC wire bytes of an Ethernet frame whose IP header starts at l3 (rxe_icrc.c masking)."""
    version = frame[l3] >> 4
    if version == 4:
        ihl = (frame[l3] & 0xF) * 4
        total = struct.unpack('!H', frame[l3 + 2:l3 + 4])[0]
        ip = bytearray(frame[l3:l3 + ihl])
        ip[1] = 0xFF          # TOS
        ip[8] = 0xFF          # TTL
        ip[10:12] = b'\xff\xff'  # header checksum
        end = l3 + total
    else:
        ihl = 40
        payload_length = struct.unpack('!H', frame[l3 + 4:l3 + 6])[0]
        ip = bytearray(frame[l3:l3 + 40])
        ip[0] |= 0x0F         # traffic class (high nibble)
        ip[1:4] = b'\xff\xff\xff'  # traffic class (low nibble) and flow label
        ip[7] = 0xFF          # hop limit
        end = l3 + 40 + payload_length
    udp = bytearray(frame[l3 + ihl:l3 + ihl + 8])
    udp[6:8] = b'\xff\xff'    # UDP checksum
    bth = bytearray(frame[l3 + ihl + 8:l3 + ihl + 20])
    bth[4] = 0xFF             # resv8a (FECN/BECN)
    rest = frame[l3 + ihl + 20:end - 4]
    crc = zlib.crc32(b'\xff' * 8 + bytes(ip) + bytes(udp) + bytes(bth) + rest) & 0xFFFFFFFF
    return struct.pack('<I', crc)


def with_icrc(frame: bytes, l3: int, end: int) -> bytes:
    """Replaces the 4 bytes before `end` by the ICRC."""
    return frame[:end - 4] + icrc(frame, l3) + frame[end:]


def reth(va, rkey, length):
    return struct.pack('!QII', va, rkey, length)


def immdt(value):
    return struct.pack('!I', value)


def deth(qkey, src_qp):
    return struct.pack('!II', qkey, src_qp & 0xFFFFFF)


def pad(payload: bytes) -> bytes:
    return payload + b'\x00' * ((-len(payload)) & 3)


def payload_of(n, seed=1):
    return bytes((seed + i * 13) & 0xFF for i in range(n))


class Vector:
    def __init__(self, frame: bytes, expected: dict):
        self.frame = frame
        self.expected = expected


vectors = []


def expected_line(index, frame, fields):
    out = {k: None for k in KEYS}
    out.update(fields)
    out['frame'] = index
    return json.dumps({k: out[k] for k in KEYS}, separators=(',', ':'))


def add(frame: bytes, **fields):
    vectors.append((frame, fields))


def roce_fields(*, ip_version, src, dst, ecn, sport, opcode, se=False, m=False, pad_count=0, pkey=0xFFFF,
                dqpn, ack_req=False, psn, reth_fields=None, aeth_fields=None, immediate=None, payload_length,
                icrc_bytes, icrc_valid=True, valid=True, error=None):
    fields = dict(valid=valid, error=error, ipVersion=ip_version, srcIp=src, dstIp=dst, ecn=ecn,
                  udpSrcPort=sport, udpDstPort=4791, opcode=opcode, solicited=se, migReq=m, padCount=pad_count,
                  tver=0, pkey=pkey, destQp=dqpn, ackReq=ack_req, psn=psn, payloadLength=payload_length,
                  icrc=icrc_bytes.hex(), icrcValid=icrc_valid)
    if reth_fields is not None:
        fields.update(rethVa=str(reth_fields[0]), rethRkey=reth_fields[1], rethLength=reth_fields[2])
    if aeth_fields is not None:
        fields.update(aethSyndrome=aeth_fields[0], aethMsn=aeth_fields[1])
    if immediate is not None:
        fields.update(immediate=immediate)
    return fields


def v4(*, tos=0, sport=49152, bth: BTH, body: bytes = b'', options=None, vlan=None, trailer=b''):
    """An IPv4 RoCEv2 frame, ICRC by scapy; also checks our Python icrc() against scapy's."""
    ip = IP(src=V4_A, dst=V4_B, tos=tos, flags='DF', id=0x1234, ttl=64)
    if options is not None:
        ip.options = options
    l2 = Ether(src=MAC_A, dst=MAC_B)
    if vlan is not None:
        l2 = l2 / Dot1Q(vlan=vlan[0], prio=vlan[1])
    pkt = l2 / ip / UDP(sport=sport, dport=4791, chksum=0) / bth / Raw(body)
    frame = raw(pkt)
    l3 = 18 if vlan is not None else 14
    assert frame[-4:] == icrc(frame, l3), 'python icrc() disagrees with scapy'
    return frame + trailer, frame[-4:]


def v6(*, tc=0, flow=0, sport=49152, bth_fields: dict, body: bytes = b'', layer_after_bth=None):
    """An IPv6 RoCEv2 frame; ICRC by icrc() (scapy has none for IPv6), UDP checksum by scapy."""
    def build(icrc_value):
        bth = BTH(icrc=icrc_value, **bth_fields)
        inner = bth / layer_after_bth if layer_after_bth is not None else bth
        return Ether(src=MAC_A, dst=MAC_B) / IPv6(src=V6_A, dst=V6_B, tc=tc, fl=flow, hlim=64) / \
            UDP(sport=sport, dport=4791) / inner / Raw(body)
    first = raw(build(0))
    crc = icrc(first, 14)
    frame = raw(build(int.from_bytes(crc, 'big')))
    # scapy's FCSField puts the ICRC last, after any payload layers
    assert frame[-4:] == crc
    return frame, crc


def write_pcap_little_endian(path, frames):
    """A hand-written little-endian classic pcap file with microsecond timestamps."""
    out = bytearray(struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
    for index, frame in enumerate(frames):
        out += struct.pack('<IIII', TIMESTAMP + index, index * 1000, len(frame), len(frame)) + frame
    with open(path, 'wb') as f:
        f.write(bytes(out))


def write_pcapng_big_endian(path, frames):
    """A hand-written big-endian pcapng file (SHB, IDB with if_tsresol=9, one EPB per frame)."""
    out = bytearray()
    out += struct.pack('>IIIHHqI', 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 28)
    idb_options = struct.pack('>HHB3x', 9, 1, 9) + struct.pack('>HH', 0, 0)
    idb_length = 20 + len(idb_options)
    out += struct.pack('>IIHHI', 1, idb_length, 1, 0, 262144) + idb_options + struct.pack('>I', idb_length)
    for index, frame in enumerate(frames):
        ts = (TIMESTAMP + index) * 1_000_000_000 + index * 1_000_000 + 7
        padded = frame + b'\x00' * ((-len(frame)) & 3)
        length = 32 + len(padded)
        out += struct.pack('>IIIIIII', 6, length, 0, ts >> 32, ts & 0xFFFFFFFF, len(frame), len(frame))
        out += padded + struct.pack('>I', length)
    with open(path, 'wb') as f:
        f.write(bytes(out))


def main():
    # 0: RC SEND Only, 3-byte payload (pad 1), PSN at the top of the 24-bit space, ack request
    body = pad(payload_of(3))
    frame, crc = v4(bth=BTH(opcode=0x04, padcount=1, dqpn=0x000123, psn=0xFFFFFF, ackreq=1), body=body)
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x04, pad_count=1,
                             dqpn=0x123, ack_req=True, psn=0xFFFFFF, payload_length=3, icrc_bytes=crc))

    # 1: RC SEND First, 256 bytes, PSN 2^24 - 2, ECT(0)
    frame, crc = v4(tos=(26 << 2) | 2, sport=50000, bth=BTH(opcode=0x00, dqpn=0xABCDEF, psn=0xFFFFFE),
                    body=payload_of(256))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=2, sport=50000, opcode=0x00, dqpn=0xABCDEF,
                             psn=0xFFFFFE, payload_length=256, icrc_bytes=crc))

    # 2: RC RDMA WRITE Only with a RETH whose VA has the top bit set (unsigned decimal), PSN 0
    va = 0xFFFF_8000_0000_1000
    frame, crc = v4(bth=BTH(opcode=0x0A, dqpn=0x11, psn=0),
                    body=reth(va, 0x12345678, 100) + payload_of(100, 7))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x0A, dqpn=0x11, psn=0,
                             reth_fields=(va, 0x12345678, 100), payload_length=100, icrc_bytes=crc))

    # 3: RC RDMA WRITE Only with Immediate: RETH then ImmDt, 5-byte payload (pad 3), solicited
    frame, crc = v4(bth=BTH(opcode=0x0B, solicited=1, padcount=3, dqpn=0x22, psn=1),
                    body=reth(0x7F00_DEAD_BEEF, 0xFFFFFFFF, 5) + immdt(0xCAFEBABE) + pad(payload_of(5, 3)))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x0B, se=True,
                             pad_count=3, dqpn=0x22, psn=1, reth_fields=(0x7F00_DEAD_BEEF, 0xFFFFFFFF, 5),
                             immediate=0xCAFEBABE, payload_length=5, icrc_bytes=crc))

    # 4: RC SEND Last with Immediate, 2-byte payload (pad 2), CE-marked, MigReq, non-default P_Key
    frame, crc = v4(tos=3, bth=BTH(opcode=0x03, migreq=1, padcount=2, pkey=0x8001, dqpn=0x33, psn=0x800000),
                    body=immdt(0x00000001) + pad(payload_of(2)))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=3, sport=49152, opcode=0x03, m=True,
                             pad_count=2, pkey=0x8001, dqpn=0x33, psn=0x800000, immediate=1, payload_length=2,
                             icrc_bytes=crc))

    # 5: RC Acknowledge (AETH: ACK, invalid credits), scapy's AETH layer
    frame, crc = v4(bth=BTH(opcode=0x11, dqpn=0x44, psn=0xFFFFFF) / AETH(syndrome=0x1F, msn=0xABCDEF))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x11, dqpn=0x44,
                             psn=0xFFFFFF, aeth_fields=(0x1F, 0xABCDEF), payload_length=0, icrc_bytes=crc))

    # 6: RC RDMA READ Request (RETH, no payload)
    frame, crc = v4(bth=BTH(opcode=0x0C, dqpn=0x55, psn=7, ackreq=1), body=reth(0x1000, 0xA5A5, 65536))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x0C, dqpn=0x55,
                             ack_req=True, psn=7, reth_fields=(0x1000, 0xA5A5, 65536), payload_length=0,
                             icrc_bytes=crc))

    # 7: RC RDMA READ Response Only (AETH + 7 bytes, pad 1)
    frame, crc = v4(bth=BTH(opcode=0x10, padcount=1, dqpn=0x66, psn=8),
                    body=struct.pack('!I', 0x00000009) + pad(payload_of(7, 5)))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x10, pad_count=1,
                             dqpn=0x66, psn=8, aeth_fields=(0, 9), payload_length=7, icrc_bytes=crc))

    # 8: CNP (scapy's cnp(): BECN set, 16 reserved bytes), CE-marked
    frame, crc = v4(tos=3, bth=BTH(opcode=0x81, becn=1, dqpn=0x77) / CNPPadding())
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=3, sport=49152, opcode=0x81, dqpn=0x77, psn=0,
                             payload_length=0, icrc_bytes=crc))

    # 9: 802.1Q-tagged RC SEND Middle
    frame, crc = v4(vlan=(100, 3), bth=BTH(opcode=0x01, dqpn=0x88, psn=0x7FFFFF), body=payload_of(64))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x01, dqpn=0x88,
                             psn=0x7FFFFF, payload_length=64, icrc_bytes=crc))

    # 10: IPv4 with 4 bytes of options (NOPs + EOL), RC SEND Only, 8 bytes
    frame, crc = v4(options=[IPOption_NOP(), IPOption_NOP(), IPOption_NOP(), IPOption_NOP()],
                    bth=BTH(opcode=0x04, dqpn=0x99, psn=3), body=payload_of(8))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x04, dqpn=0x99, psn=3,
                             payload_length=8, icrc_bytes=crc))

    # 11: zero-length RC SEND Only in a 58-byte packet, padded to the 60-byte Ethernet minimum
    frame, crc = v4(bth=BTH(opcode=0x04, dqpn=0xAA, psn=4), trailer=b'\x00\x00')
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x04, dqpn=0xAA, psn=4,
                             payload_length=0, icrc_bytes=crc))

    # 12: IPv6 RC SEND Only, 6 bytes (pad 2), CE-marked, DSCP 26, flow label
    frame, crc = v6(tc=(26 << 2) | 3, flow=0xABCDE, sport=61000,
                    bth_fields=dict(opcode=0x04, padcount=2, dqpn=0x000BB, psn=0xFFFFFD),
                    body=pad(payload_of(6, 9)))
    add(frame, **roce_fields(ip_version=6, src=V6_A, dst=V6_B, ecn=3, sport=61000, opcode=0x04, pad_count=2,
                             dqpn=0xBB, psn=0xFFFFFD, payload_length=6, icrc_bytes=crc))

    # 13: IPv6 RC RDMA WRITE First (RETH), PSN 2^24 - 1
    frame, crc = v6(bth_fields=dict(opcode=0x06, dqpn=0xCC, psn=0xFFFFFF),
                    body=reth(0x0000_7FFF_0000_0000, 0x01020304, 4096) + payload_of(1024))
    add(frame, **roce_fields(ip_version=6, src=V6_A, dst=V6_B, ecn=0, sport=49152, opcode=0x06, dqpn=0xCC,
                             psn=0xFFFFFF, reth_fields=(0x0000_7FFF_0000_0000, 0x01020304, 4096),
                             payload_length=1024, icrc_bytes=crc))

    # 14: IPv6 RC Acknowledge carrying a NAK (PSN sequence error)
    frame, crc = v6(bth_fields=dict(opcode=0x11, dqpn=0xDD, psn=5), layer_after_bth=AETH(syndrome=0x60, msn=2))
    add(frame, **roce_fields(ip_version=6, src=V6_A, dst=V6_B, ecn=0, sport=49152, opcode=0x11, dqpn=0xDD, psn=5,
                             aeth_fields=(0x60, 2), payload_length=0, icrc_bytes=crc))

    # 15: IPv6 CNP
    frame, crc = v6(tc=3, bth_fields=dict(opcode=0x81, becn=1, dqpn=0xEE), layer_after_bth=CNPPadding())
    add(frame, **roce_fields(ip_version=6, src=V6_A, dst=V6_B, ecn=3, sport=49152, opcode=0x81, dqpn=0xEE, psn=0,
                             payload_length=0, icrc_bytes=crc))

    # 16: UD SEND Only with Immediate (DETH, ImmDt), 12 bytes (not to QP1, which Wireshark reads as MADs)
    frame, crc = v4(bth=BTH(opcode=0x65, dqpn=0x101, psn=0x10),
                    body=deth(0x80010000, 0x2) + immdt(0x12345678) + payload_of(12))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x65, dqpn=0x101,
                             psn=0x10, immediate=0x12345678, payload_length=12, icrc_bytes=crc))

    # ---- malformed frames
    # 17: bad IPv4 header checksum
    pkt = Ether(src=MAC_A, dst=MAC_B) / IP(src=V4_A, dst=V4_B, chksum=0x1234, flags='DF', id=1) / \
        UDP(sport=49152, dport=4791, chksum=0) / BTH(opcode=0x04, dqpn=1, psn=1) / Raw(payload_of(4))
    add(raw(pkt), valid=False, error='BAD_IPV4_CHECKSUM', ipVersion=4, srcIp=V4_A, dstIp=V4_B, ecn=0)

    # 18: bad ICRC (scapy's ICRC, then one payload byte flipped)
    frame, crc = v4(bth=BTH(opcode=0x04, dqpn=0x42, psn=0x100), body=payload_of(16))
    broken = bytearray(frame)
    broken[14 + 20 + 8 + 12 + 5] ^= 0x01
    add(bytes(broken), **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x04,
                                     dqpn=0x42, psn=0x100, payload_length=16, icrc_bytes=crc, icrc_valid=False,
                                     valid=False, error='BAD_ICRC'))

    # 19: UDP length 4 bytes longer than the IP payload
    frame, crc = v4(bth=BTH(opcode=0x04, dqpn=0x43, psn=0x101), body=payload_of(8))
    broken = bytearray(frame)
    udp_len = struct.unpack('!H', broken[14 + 20 + 4:14 + 20 + 6])[0]
    broken[14 + 20 + 4:14 + 20 + 6] = struct.pack('!H', udp_len + 4)
    add(bytes(broken), valid=False, error='BAD_UDP_LENGTH', ipVersion=4, srcIp=V4_A, dstIp=V4_B, ecn=0,
        udpSrcPort=49152, udpDstPort=4791)

    # 20: frame cut short inside the BTH (IP total length runs past the frame)
    frame, crc = v4(bth=BTH(opcode=0x04, dqpn=0x44, psn=0x102), body=payload_of(8))
    add(frame[:14 + 20 + 8 + 6], valid=False, error='TRUNCATED_IP', ipVersion=4, srcIp=V4_A, dstIp=V4_B, ecn=0)

    # 21: 10-byte runt
    add(frame[:10], valid=False, error='TRUNCATED_ETHERNET')

    # 22: unknown opcode 0x15 (RC reserved), valid ICRC
    frame, crc = v4(bth=BTH(opcode=0x15, dqpn=0x45, psn=0x103), body=payload_of(8))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x15, dqpn=0x45,
                             psn=0x103, payload_length=None, icrc_bytes=crc, valid=False, error='UNKNOWN_OPCODE'))

    # 23: Acknowledge with a pad count (no payload allowed)
    frame, crc = v4(bth=BTH(opcode=0x11, padcount=2, dqpn=0x46, psn=0x104) / AETH(syndrome=0x1F, msn=1))
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x11, pad_count=2,
                             dqpn=0x46, psn=0x104, aeth_fields=(0x1F, 1), payload_length=None, icrc_bytes=crc,
                             valid=False, error='BAD_PAD_COUNT'))

    # 24: transport header version 1
    frame, crc = v4(bth=BTH(opcode=0x04, version=1, dqpn=0x47, psn=0x105), body=payload_of(4))
    fields = roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x04, dqpn=0x47, psn=0x105,
                         payload_length=None, icrc_bytes=crc, valid=False, error='BAD_TVER')
    fields['tver'] = 1
    add(frame, **fields)

    # 25: RDMA WRITE Only whose RETH runs into the ICRC (8 bytes of the 16), valid ICRC
    frame, crc = v4(bth=BTH(opcode=0x0A, dqpn=0x48, psn=0x106), body=b'\x00' * 8)
    add(frame, **roce_fields(ip_version=4, src=V4_A, dst=V4_B, ecn=0, sport=49152, opcode=0x0A, dqpn=0x48,
                             psn=0x106, payload_length=None, icrc_bytes=crc, valid=False,
                             error='TRUNCATED_EXTENSION_HEADER'))

    # 26: UDP to 4791 with 8 bytes of payload: no room for BTH and ICRC
    pkt = Ether(src=MAC_A, dst=MAC_B) / IP(src=V4_A, dst=V4_B, flags='DF', id=2) / \
        UDP(sport=49152, dport=4791, chksum=0) / Raw(b'\x04\x00\xff\xff\x00\x00\x00\x01')
    add(raw(pkt), valid=False, error='TRUNCATED_BTH', ipVersion=4, srcIp=V4_A, dstIp=V4_B, ecn=0,
        udpSrcPort=49152, udpDstPort=4791)

    # ---- not ours
    # 27: DNS-ish UDP
    pkt = Ether(src=MAC_A, dst=MAC_B) / IP(src=V4_A, dst=V4_B) / UDP(sport=5353, dport=53) / Raw(b'hello')
    add(raw(pkt), valid=False, error='NOT_OURS', ipVersion=4, srcIp=V4_A, dstIp=V4_B, ecn=0, udpSrcPort=5353,
        udpDstPort=53)
    # 28: ARP
    pkt = Ether(src=MAC_A, dst='ff:ff:ff:ff:ff:ff') / ARP(psrc=V4_A, pdst=V4_B)
    add(raw(pkt), valid=False, error='NOT_OURS')
    # 29: TCP over IPv6
    pkt = Ether(src=MAC_A, dst=MAC_B) / IPv6(src=V6_A, dst=V6_B) / TCP(sport=1, dport=4791)
    add(raw(pkt), valid=False, error='NOT_OURS', ipVersion=6, srcIp=V6_A, dstIp=V6_B, ecn=0)
    # 30: first fragment of a datagram to 4791
    pkt = Ether(src=MAC_A, dst=MAC_B) / IP(src=V4_A, dst=V4_B, flags='MF', id=3) / \
        UDP(sport=49152, dport=4791, chksum=0) / Raw(payload_of(32))
    add(raw(pkt), valid=False, error='NOT_OURS', ipVersion=4, srcIp=V4_A, dstIp=V4_B, ecn=0)

    lines = []
    for index, (frame, fields) in enumerate(vectors):
        lines.append(expected_line(index, frame, fields))
    write_pcap_little_endian('roce_vectors.pcap', [frame for frame, _ in vectors])
    write_pcapng_big_endian('roce_vectors.pcapng', [frame for frame, _ in vectors])
    with open('roce_vectors.jsonl', 'w') as out:
        out.write('\n'.join(lines) + '\n')
    print(f'{len(vectors)} vectors written')


if __name__ == '__main__':
    main()
