#!/usr/bin/env python3
"""The lab's flow generator, run inside a host's namespace by `lab traffic` (deploy/lab/lab).

  flows.py receive FAMILY PORT
      counts datagrams per plane and their ECN codepoints (IP_RECVTOS / IPV6_RECVTCLASS) until a line on stdin,
      then prints one JSON object
  flows.py send FAMILY PORT FLOWS PER_FLOW SIZE TOS PPS SPORT_BASE PLANE=ADDRESS...
      sends PER_FLOW datagrams on each of FLOWS sockets (source ports SPORT_BASE...) per plane, round-robin, at
      PPS per plane (0: as fast as it goes), then prints one JSON object

Standard library only.
"""

import json
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
        for seq in range(per_flow):
            for flow, s in enumerate(sockets):
                struct.pack_into(HEADER, payload, 0, MAGIC, int(plane), flow, seq)
                if pps > 0:
                    due = start + sent / pps
                    delay = due - time.monotonic()
                    if delay > 0.0005:
                        time.sleep(delay)
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



if __name__ == "__main__":
    if sys.argv[1:2] == ["receive"]:
        receive(*sys.argv[2:4])
    elif sys.argv[1:2] == ["send"]:
        send(*sys.argv[2:10], sys.argv[10:])
    else:
        sys.exit(__doc__)
