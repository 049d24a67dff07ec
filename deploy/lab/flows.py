#!/usr/bin/env python3
"""The lab's flow generator, run inside a host's namespace by `lab traffic` (deploy/lab/lab).

  flows.py receive FAMILY PORT
      counts datagrams per plane and their ECN codepoints (IP_RECVTOS / IPV6_RECVTCLASS) until a line on stdin,
      then prints one JSON object
  flows.py send FAMILY PORT FLOWS PER_FLOW SIZE TOS PPS SPORT_BASE PLANE=ADDRESS...
      sends PER_FLOW datagrams on each of FLOWS sockets (source ports SPORT_BASE...) per plane, round-robin, at
      PPS per plane (0: as fast as it goes), then prints one JSON object
  flows.py echo FAMILY ADDRESS COUNT INTERVAL WAIT
      sends COUNT ICMP (ICMPv6) echo requests to ADDRESS, one every INTERVAL seconds, waits up to WAIT seconds
      after the last, then prints one JSON object: sent, received and each reply's round trip in milliseconds

Standard library only.
"""

import json
import os
import resource
import select
import socket
import struct
import sys
import time

MAGIC = 0x53504C42  # "SPLB": the flow generator's datagrams
HEADER = ">IBII"  # magic, plane, flow, sequence


def udp_receive_errors():
    """RcvbufErrors of this namespace's UDP (and UDP6): datagrams the receiver's socket had no room for."""
    total = 0
    try:
        with open("/proc/net/snmp") as f:
            lines = [l.split() for l in f if l.startswith("Udp:")]
        total += int(lines[1][lines[0].index("RcvbufErrors")])
        with open("/proc/net/snmp6") as f:
            for line in f:
                if line.startswith("Udp6RcvbufErrors"):
                    total += int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return total


def receive(family, port):
    port = int(port)
    fam = socket.AF_INET if family == "4" else socket.AF_INET6
    s = socket.socket(fam, socket.SOCK_DGRAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, 33, 64 * 1024 * 1024)  # SO_RCVBUFFORCE
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024 * 1024)
    if family == "4":
        s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
        s.bind(("0.0.0.0", port))
    else:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVTCLASS, 1)
        s.bind(("::", port))
    s.setblocking(False)
    errors_before = udp_receive_errors()
    planes = {}
    print("ready", flush=True)
    stopping = False
    while True:
        readable, _, _ = select.select([s, sys.stdin], [], [], 1.0)
        if sys.stdin in readable:
            sys.stdin.readline()
            stopping = True
        while True:
            try:
                data, ancillary, _, _ = s.recvmsg(65536, 64)
            except BlockingIOError:
                break
            now = time.time()
            if len(data) < 17:
                continue
            magic, plane, flow, seq = struct.unpack_from(HEADER, data, 0)
            if magic != MAGIC:
                continue
            tos = 0
            for level, kind, value in ancillary:
                if (level, kind) in ((socket.IPPROTO_IP, socket.IP_TOS), (socket.IPPROTO_IPV6, socket.IPV6_TCLASS)):
                    tos = value[0] if len(value) == 1 else struct.unpack("i", value[:4])[0]
            p = planes.setdefault(str(plane), {"received": 0, "bytes": 0, "ecn": [0, 0, 0, 0], "first": now,
                                               "last": now})
            p["received"] += 1
            p["bytes"] += len(data)
            p["ecn"][tos & 3] += 1
            p["last"] = now
        if stopping:
            break
    print(json.dumps({"planes": planes, "socket_drops": udp_receive_errors() - errors_before}), flush=True)


def send(family, port, flows, per_flow, size, tos, pps, sport_base, destinations):
    flows, per_flow, size, tos, pps, sport_base = (int(flows), int(per_flow), int(size), int(tos), float(pps),
                                                   int(sport_base))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < flows + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, flows + 64), hard))
    fam = socket.AF_INET if family == "4" else socket.AF_INET6
    result = {}
    for destination in destinations:
        plane, address = destination.split("=", 1)
        sockets = []
        for i in range(flows):
            s = socket.socket(fam, socket.SOCK_DGRAM)
            if family == "4":
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
            else:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, tos)
            s.bind(("", sport_base + i))
            s.connect((address, int(port)))
            sockets.append(s)
        payload = bytearray(max(size, 17))
        sent = 0
        start = time.monotonic()
        paced_from, paced_sent = start, 0
        for seq in range(per_flow):
            for flow, s in enumerate(sockets):
                struct.pack_into(HEADER, payload, 0, MAGIC, int(plane), flow, seq)
                if pps > 0:
                    due = paced_from + (sent - paced_sent) / pps
                    delay = due - time.monotonic()
                    if delay > 0.0005:
                        time.sleep(delay)
                    elif delay < -1.0 / pps:
                        # behind (this process waited for a core): go on at the rate from now, never in a burst
                        # that catches up, which a router's rate rule (--ce-above) would take for a rate above it
                        paced_from, paced_sent = time.monotonic(), sent
                while True:
                    try:
                        s.send(payload)
                        break
                    except OSError:  # ENOBUFS from a full qdisc: wait, do not count it lost
                        time.sleep(0.0005)
                sent += 1
        result[plane] = {"sent": sent, "seconds": time.monotonic() - start}
        for s in sockets:
            s.close()
    print(json.dumps({"planes": result}))


def echo(family, address, count, interval, wait):
    """Round trips of ICMP echo to ADDRESS from a raw socket: what `lab rtt` measures a NIC's answer time with."""
    count, interval, wait = int(count), float(interval), float(wait)
    if family == "4":
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        request, reply = 8, 0
    else:
        s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)  # the kernel sums ICMPv6
        request, reply = 128, 129
    ident = os.getpid() & 0xFFFF
    sent_at = {}
    rtts = []
    next_send = time.monotonic()
    end = None
    seq = 0
    while True:
        now = time.monotonic()
        if seq < count and now >= next_send:
            payload = struct.pack(">d", now) + bytes(24)
            header = struct.pack(">BBHHH", request, 0, 0, ident, seq)
            if family == "4":
                checksum = icmp_checksum(header + payload)
                header = struct.pack(">BBHHH", request, 0, checksum, ident, seq)
            s.sendto(header + payload, (address, 0))
            sent_at[seq] = now
            seq += 1
            next_send += interval
            if seq == count:
                end = now + wait
        if end is not None and (now >= end or len(rtts) == count):
            break
        timeout = (next_send if seq < count else end) - now
        readable, _, _ = select.select([s], [], [], max(0.0, timeout))
        if not readable:
            continue
        data = s.recv(2048)
        received = time.monotonic()
        icmp = data[(data[0] & 0x0F) * 4:] if family == "4" else data  # IPv4 raw sockets see the IP header
        if len(icmp) < 8:
            continue
        kind, _, _, rid, rseq = struct.unpack(">BBHHH", icmp[:8])
        if kind == reply and rid == ident and rseq in sent_at:
            rtts.append((received - sent_at.pop(rseq)) * 1e3)
    s.close()
    print(json.dumps({"sent": count, "received": len(rtts), "rtt_ms": [round(r, 4) for r in rtts]}))


def icmp_checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(">%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


if __name__ == "__main__":
    if sys.argv[1:2] == ["receive"]:
        receive(*sys.argv[2:4])
    elif sys.argv[1:2] == ["send"]:
        send(*sys.argv[2:10], sys.argv[10:])
    elif sys.argv[1:2] == ["echo"]:
        echo(*sys.argv[2:7])
    else:
        sys.exit(__doc__)
