#!/usr/bin/env python3
"""Kernel side of the DPDK port tests: sends or sniffs RawFrames on an interface through an
AF_PACKET socket. The frame format mirrors io.spraynic.datapath.port.RawFrames.

  rawsock.py sniff IFACE COUNT TIMEOUT_S   prints 'ready', then one sequence per intact frame
                                           (-1 for a corrupt one), then 'done N'
  rawsock.py send IFACE COUNT LENGTH FIRST sends COUNT frames numbered from FIRST
"""
import socket
import struct
import sys
import time

ETHER_TYPE = 0x88B5
SRC = bytes.fromhex("025350000001")
DST = bytes.fromhex("025350000002")


def frame(length, sequence):
    header = DST + SRC + struct.pack(">HQH", ETHER_TYPE, sequence, length)
    seed = (sequence * 31) & 0xFFFFFFFF
    return header + bytes(((seed + i) & 0xFF) for i in range(len(header), length))


def verify(data):
    if len(data) < 24 or struct.unpack(">H", data[12:14])[0] != ETHER_TYPE:
        return None  # not ours: the kernel's own traffic
    sequence, length = struct.unpack(">QH", data[14:24])
    if length != len(data) and not (len(data) > length and length >= 60):
        return -1
    return sequence if data[:length] == frame(length, sequence) else -1


def sniff(iface, count, timeout):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHER_TYPE))
    sock.bind((iface, 0))
    sock.settimeout(0.2)
    print("ready", flush=True)
    seen = 0
    deadline = time.time() + timeout
    while seen < count and time.time() < deadline:
        try:
            data = sock.recv(65535)
        except socket.timeout:
            continue
        sequence = verify(data)
        if sequence is None:
            continue
        print(sequence, flush=True)
        seen += 1
    print("done", seen, flush=True)


def send(iface, count, length, first):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((iface, 0))
    for sequence in range(first, first + count):
        sock.send(frame(length, sequence))
    print("sent", count, flush=True)


if __name__ == "__main__":
    mode, iface = sys.argv[1], sys.argv[2]
    if mode == "sniff":
        sniff(iface, int(sys.argv[3]), float(sys.argv[4]))
    elif mode == "send":
        send(iface, int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit("unknown mode " + mode)
