#!/usr/bin/python3
"""An independent decoder of the spray transport's headers, written from docs/PROTOCOL.md only (S2.5, S2.6,
S3.1-S3.3, S4.1, S5.1-S5.6), with scapy: one Layer per header, bound on UDP destination port 4791.

Run with Debian's python3 and python3-scapy:

    /usr/bin/python3 spray_scapy.py CAPTURE.pcap[ng]     one JSON object per frame (the keys below)

Each object has the keys of `spraynic decode --json` that this decoder knows: frame, valid, error, opcode,
solicited, migReq, padCount, tver, pkey, destQp, ackReq, psn, payloadLength, icrc, icrcValid, spray. `spray`
is null for opcodes outside S3.1's table, else {"name": ..., "<header>": {"<field>": value, ...}, ...} in wire
order, with "hsb" and "addresses" from the payload (S5.5, S5.6). u8-u32 values are numbers, u64 decimal
strings, byte strings lower-case hex (S2.5). A field is shown only when it lies wholly before the ICRC (S3.1).
`error` is one of S3.1's reasons, TRUNCATED_BTH (a UDP payload shorter than BTH + ICRC) or NOT_OURS.
"""
import json
import struct
import sys
import zlib

from scapy.fields import BitField, ByteField, IntField, LongField, ShortField, StrFixedLenField, ThreeBytesField
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet, bind_layers

ROCE_V2_PORT = 4791
BTH_LENGTH = 12
ICRC_LENGTH = 4


class SprayBTH(Packet):
    """S3.2: the InfiniBand BTH as spray uses it."""
    name = 'BTH (spray)'
    fields_desc = [
        ByteField('opcode', 0),
        BitField('se', 0, 1),
        BitField('m', 0, 1),
        BitField('padCount', 0, 2),
        BitField('tver', 0, 4),
        ShortField('pkey', 0xFFFF),
        ByteField('resv8a', 0),
        ThreeBytesField('destQp', 0),
        BitField('ackReq', 0, 1),
        BitField('resv7', 0, 7),
        ThreeBytesField('psn', 0),
    ]

    def guess_payload_class(self, payload):
        headers = HEADERS_AFTER_BTH.get(self.opcode)
        return headers[0] if headers else Packet.guess_payload_class(self, payload)


class SprayHeader(Packet):
    """A header after the BTH: the next one follows from the BTH's opcode (S3.1)."""

    def guess_payload_class(self, payload):
        bth = self.underlayer
        while bth is not None and not isinstance(bth, SprayBTH):
            bth = bth.underlayer
        chain = HEADERS_AFTER_BTH.get(bth.opcode, []) if bth is not None else []
        for i, cls in enumerate(chain[:-1]):
            if isinstance(self, cls):
                return chain[i + 1]
        return Packet.guess_payload_class(self, payload)


class SETH(SprayHeader):
    """S4.1, 28 bytes."""
    name = 'SETH'
    fields_desc = [
        ByteField('path', 0),
        ByteField('flags', 0),  # bit 0 RETRANSMIT, bit 1 LAST, bits 2-4 the RNR attempt (S9.3-3), 5-7 reserved
        ShortField('stream', 0),
        IntField('msn', 0),
        IntField('offset', 0),
        IntField('length', 0),
        IntField('rsn', 0),
        LongField('messageTag', 0),
    ]


class RETH(SprayHeader):
    """S3.3, 16 bytes."""
    name = 'RETH'
    fields_desc = [LongField('va', 0), IntField('rkey', 0), IntField('length', 0)]


class ImmDt(SprayHeader):
    """S3.3, 4 bytes."""
    name = 'ImmDt'
    fields_desc = [IntField('immediate', 0)]


class SACKH(SprayHeader):
    """S5.1, 60 bytes."""
    name = 'SACKH'
    fields_desc = [
        ByteField('path', 0),
        ByteField('flags', 0),  # bit 0 ECE
        ShortField('ceCount', 0),
        ByteField('duplicates', 0),  # S5.1-3
        ThreeBytesField('cumulativePsn', 0),
        StrFixedLenField('sack', b'\0' * 32, 32),
        IntField('rateHint', 0),
        IntField('ackSequence', 0),
        IntField('refusals', 0),
        LongField('tag', 0),
    ]


class PRBH(SprayHeader):
    """S5.2, 16 bytes."""
    name = 'PRBH'
    fields_desc = [
        ByteField('path', 0),
        ByteField('flags', 0),  # bit 0 RESYNC
        ShortField('reserved2', 0),
        ByteField('reserved4', 0),
        ThreeBytesField('nextPsn', 0),
        LongField('tag', 0),
    ]


class NAKH(SprayHeader):
    """S5.3, 24 bytes."""
    name = 'NAKH'
    fields_desc = [
        ByteField('syndrome', 0),
        ByteField('reason', 0),  # with RNR: 0 NO_RECEIVE, 1 NO_RESOURCES (S10.2)
        ShortField('stream', 0),
        IntField('msn', 0),
        IntField('rnrTimerMicros', 0),
        IntField('refusal', 0),
        LongField('tag', 0),
    ]


class CONH(SprayHeader):
    """S5.4, 40 bytes."""
    name = 'CONH'
    fields_desc = [
        ByteField('version', 2),
        ByteField('flags', 0),  # bit 0 ADDRESSES
        ByteField('paths', 0),
        ByteField('planes', 0),
        ShortField('mtu', 0),
        ShortField('streams', 0),
        ByteField('reserved8', 0),
        ThreeBytesField('senderCid', 0),
        ByteField('reserved12', 0),
        ThreeBytesField('initialPsn', 0),
        IntField('ingressMbps', 0),
        LongField('token', 0),
        ByteField('reason', 0),
        ByteField('reads', 0),  # S10.2: READs the sender serves at once (0: not advertised)
        ShortField('window', 0),  # S10.2: the sender's inbound message window (0: not advertised)
        LongField('tag', 0),
    ]


class HSB(Packet):
    """S5.6, the first 64 bytes of the payload of CONNECT, CONNECT_RETRY and CONNECT_ACK."""
    name = 'HSB'
    fields_desc = [
        StrFixedLenField('cookie', b'\0' * 16, 16),
        StrFixedLenField('publicKey', b'\0' * 32, 32),
        StrFixedLenField('proof', b'\0' * 16, 16),
    ]


class PlaneAddressEntry(Packet):
    """S5.5, one 24-byte entry of a CONNECT's address list."""
    name = 'PlaneAddress'
    fields_desc = [
        ByteField('flags', 0),  # bit 0 IPV6
        ByteField('reserved1', 0),
        StrFixedLenField('mac', b'\0' * 6, 6),
        StrFixedLenField('address', b'\0' * 16, 16),
    ]

    def extract_padding(self, s):
        return b'', s


# S3.1: opcode -> (name, headers after the BTH, payload kind)
OPCODES = {
    0xC0: ('SPRAY_WRITE', [SETH, RETH], 'data'),
    0xC1: ('SPRAY_WRITE_IMM', [SETH, RETH, ImmDt], 'data'),
    0xC2: ('SPRAY_SEND', [SETH], 'data'),
    0xC3: ('SPRAY_SEND_IMM', [SETH, ImmDt], 'data'),
    0xC4: ('SPRAY_READ_REQUEST', [SETH, RETH], 'none'),
    0xC5: ('SPRAY_READ_RESPONSE', [SETH], 'data'),
    0xC6: ('SPRAY_CONNECT_RETRY', [CONH], 'hsb'),
    0xC7: ('SPRAY_CONNECT_REJECT', [CONH], 'none'),
    0xC8: ('SPRAY_ACK', [SACKH], 'none'),
    0xC9: ('SPRAY_PROBE', [PRBH], 'none'),
    0xCA: ('SPRAY_NACK', [NAKH], 'none'),
    0xCB: ('SPRAY_QUERY', [NAKH], 'none'),
    0xCC: ('SPRAY_CONNECT', [CONH], 'hsb+addresses'),
    0xCD: ('SPRAY_CONNECT_ACK', [CONH], 'hsb'),
    0xCE: ('SPRAY_CLOSE', [CONH], 'none'),
    0xCF: ('SPRAY_CLOSE_ACK', [CONH], 'none'),
}
HEADERS_AFTER_BTH = {opcode: headers for opcode, (_, headers, _) in OPCODES.items()}
JSON_NAMES = {SETH: 'seth', RETH: 'reth', ImmDt: 'immdt', SACKH: 'sackh', PRBH: 'prbh', NAKH: 'nakh', CONH: 'conh',
              HSB: 'hsb', PlaneAddressEntry: 'address'}
ADDRESSES_FLAG = 0x01

bind_layers(UDP, SprayBTH, dport=ROCE_V2_PORT)


def layout(cls):
    """[(name, offset, size, field)] of a header class, from its fields (S2.5: no padding between them)."""
    probe = cls()
    rows = []
    bits = 0
    offset = 0
    for fld in cls.fields_desc:
        if isinstance(fld, BitField):
            rows.append((fld.name, offset, None, fld))
            bits += fld.size
            if bits % 8 == 0:
                offset += bits // 8
                bits = 0
            continue
        size = len(fld.addfield(probe, b'', probe.getfieldval(fld.name)))
        rows.append((fld.name, offset, size, fld))
        offset += size
    return rows


def header_length(cls):
    return sum(size for _, _, size, _ in layout(cls) if size is not None)


def json_value(fld, value):
    if isinstance(fld, LongField):
        return str(value)
    if isinstance(fld, StrFixedLenField):
        return bytes(value).hex()
    return int(value)


def fields_that_fit(cls, chunk):
    """The fields of header `cls` that lie wholly in `chunk` (S3.1), dissected with the layer."""
    pkt = cls(bytes(chunk).ljust(header_length(cls), b'\0'))
    return {name: json_value(fld, pkt.getfieldval(name))
            for name, offset, size, fld in layout(cls) if offset + size <= len(chunk)}


def icrc(ip_header: bytes, udp_and_rest: bytes) -> bytes:
    """S2.6: the ICRC wire bytes of a packet: IP header, then UDP header, BTH and the rest up to the ICRC."""
    ip = bytearray(ip_header)
    if ip[0] >> 4 == 4:
        ip[1] = 0xFF                       # TOS
        ip[8] = 0xFF                       # TTL
        ip[10:12] = b'\xff\xff'            # header checksum
    else:
        ip[0] |= 0x0F                      # traffic class, high nibble
        ip[1:4] = b'\xff\xff\xff'          # traffic class, low nibble, and flow label
        ip[7] = 0xFF                       # hop limit
    rest = bytearray(udp_and_rest)
    rest[6:8] = b'\xff\xff'                # UDP checksum
    rest[8 + 4] = 0xFF                     # BTH resv8a
    return struct.pack('<I', zlib.crc32(b'\xff' * 8 + bytes(ip) + bytes(rest)) & 0xFFFFFFFF)


def classify(opcode, tver, pad, udp_payload_length):
    """S3.1's reasons, in its order (the ICRC is judged by the caller, above all of them)."""
    if tver != 0:
        return 'BAD_TVER'
    if opcode not in OPCODES:
        return 'UNKNOWN_OPCODE'
    headers = sum(header_length(cls) for cls in OPCODES[opcode][1])
    padded = udp_payload_length - BTH_LENGTH - ICRC_LENGTH - headers
    if padded < 0:
        return 'TRUNCATED_EXTENSION_HEADER'
    if OPCODES[opcode][2] == 'none':
        if pad != 0:
            return 'BAD_PAD_COUNT'
        return 'BAD_PAYLOAD_LENGTH' if padded != 0 else None
    if pad > padded:
        return 'BAD_PAD_COUNT'
    return 'BAD_PAYLOAD_LENGTH' if padded % 4 != 0 else None


def spray_headers(bth, header_bytes, payload):
    """The `spray` object: the headers after the BTH (fields that fit), then the payload's blocks."""
    name, headers, kind = OPCODES[bth.opcode]
    out = {'name': name}
    at = 0
    for cls in headers:
        length = header_length(cls)
        out[JSON_NAMES[cls]] = fields_that_fit(cls, header_bytes[at:at + length])
        at += length
    if payload is not None and kind.startswith('hsb'):
        out['hsb'] = fields_that_fit(HSB, payload[:header_length(HSB)])
        conh = out['conh']
        if kind.endswith('addresses') and conh['flags'] & ADDRESSES_FLAG:
            entry = header_length(PlaneAddressEntry)
            count = min(conh['planes'], max(0, len(payload) - header_length(HSB)) // entry)
            base = header_length(HSB)
            out['addresses'] = [fields_that_fit(PlaneAddressEntry, payload[base + i * entry:base + (i + 1) * entry])
                                for i in range(count)]
    return out


def decode(index, frame: bytes):
    """One frame -> the JSON object of the module docstring."""
    out = {'frame': index, 'valid': False, 'error': 'NOT_OURS'}
    pkt = Ether(frame)
    ip = pkt.getlayer(IP) or pkt.getlayer(IPv6)
    udp = pkt.getlayer(UDP)
    if ip is None or udp is None or udp.dport != ROCE_V2_PORT:
        return out
    udp_bytes = bytes(udp)[:udp.len]
    udp_payload = udp_bytes[8:]
    if len(udp_payload) < BTH_LENGTH + ICRC_LENGTH:
        out['error'] = 'TRUNCATED_BTH'
        return out
    ip_header = bytes(ip)[:ip.ihl * 4] if isinstance(ip, IP) else bytes(ip)[:40]
    bth = SprayBTH(udp_payload[:BTH_LENGTH])
    out.update({'opcode': bth.opcode, 'solicited': bool(bth.se), 'migReq': bool(bth.m), 'padCount': bth.padCount,
                'tver': bth.tver, 'pkey': bth.pkey, 'destQp': bth.destQp, 'ackReq': bool(bth.ackReq),
                'psn': bth.psn})
    received = udp_payload[-ICRC_LENGTH:]
    computed = icrc(ip_header, udp_bytes[:-ICRC_LENGTH])
    reason = classify(bth.opcode, bth.tver, bth.padCount, len(udp_payload))
    if received != computed:
        reason = 'BAD_ICRC'
    out.update({'valid': reason is None, 'error': reason, 'icrc': received.hex(), 'icrcValid': received == computed})
    header_bytes = udp_payload[BTH_LENGTH:-ICRC_LENGTH]
    payload = None
    if bth.opcode in OPCODES:
        headers = sum(header_length(cls) for cls in OPCODES[bth.opcode][1])
        # the payload only when pad and payload length are valid (S3.1), whatever the ICRC says
        if bth.tver == 0 and classify(bth.opcode, 0, bth.padCount, len(udp_payload)) is None:
            payload = header_bytes[headers:len(header_bytes) - bth.padCount]
            out['payloadLength'] = len(payload)
    out['spray'] = spray_headers(bth, header_bytes, payload) if bth.opcode in OPCODES else None
    return out


def main(argv):
    from scapy.utils import PcapReader
    if len(argv) != 2:
        sys.exit('usage: /usr/bin/python3 spray_scapy.py CAPTURE')
    with PcapReader(argv[1]) as reader:
        for index, pkt in enumerate(reader):
            print(json.dumps(decode(index, bytes(pkt)), separators=(',', ':')))


if __name__ == '__main__':
    main(sys.argv)
