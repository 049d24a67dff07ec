#!/usr/bin/env python3
"""Per-stage budget of one packet from a perf profile of `spraynic bench throughput --threads 1`.

Reads `perf script` output (perf record -g of a JVM run with -XX:+PreserveFramePointer
-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit), keeps the samples of the busiest poll thread (its name has a
comma: "spray-1,writer", "rocev2-1,writer"), and gives each sample to the stage of the innermost frame of its stack
that names one (stubs, JDK and memory-segment frames are skipped, so a CRC32 stub under Icrc.compute counts as
ICRC). With the bench's Mpps per core (packets per CPU second of the poll thread) the shares become ns per packet.

    perf script -i spray-64.data > spray-64.script
    benchmarks/stage-budget.py spray-64.script 1.95

Prints one markdown row per stage: stage, share of the poll thread's samples, ns per packet.
"""
import collections
import re
import sys

# (stage, pattern): the first pattern that matches a frame, scanning frames from the leaf up, names the stage.
STAGES = [
    ("ICRC", r"\bIcrc\."),
    ("parse", r"\bRoceParser\.|\bRoceFrame\.reset"),
    ("authentication tags (SipHash)", r"\bSipHash\.|PacketAuthenticator|\.messageAuthentic|InboundMessages\.authentic"),
    ("message record", r"\bInboundMessages\.|Long2LongHashMap|Int2IntHashMap"),
    ("path window / scheduler", r"\bPathSendWindow\.|\bPathScheduler\.|\bPathReceive|\bPacer\.|CongestionWindow"),
    ("completion", r"\bCompletionQueue\.|WorkCompletion|\bCompletions?\."),
    ("ACK build", r"\bControlPackets\.|\.sendAck|\bRcResponder\.sendAck|AckBuilder|\bRcResponder\.acknowledge"),
    ("ACK receive", r"\.onAckPacket|\bPathSendWindow\.onAck|\bRcRequester\.onAck"),
    ("placement", r"\bDataReceiver\.|\bRcResponder\.place|\bRcResponder\.|Placement|MemoryRegion"),
    ("post (work request to packets)", r"\bDataSender\.post|\.postSend|SendWorkRequest|\bRcRequester\.post|SendQueue"),
    ("TX (frame build, mbuf alloc, send)",
     r"\bRoceFrameWriter\.|\bSprayFrames\.|\bDataSender\.|\bRcRequester\.|\bRcFrameOutput\.|FrameSink|"
     r"spraynic_tx_burst|eth_ring_tx|mbuf_alloc|pktmbuf_alloc|\.flush\b|WorkerTransport\.flush|"
     r"SprayExtendedTransportHeader\.write|\.transmit"),
    ("RX burst (receive, free)", r"spraynic_rx_burst|spraynic_tx_rx_burst|eth_ring_rx|pktmbuf_free|mbuf_free|"
                                 r"NicWorker\.receive|\.receive\("),
    ("connection lookup + dispatch", r"\bSprayEngine\.onFrame|\bSprayConnection\.onFrame|NicWorker\.dispatch|"
                                     r"RcQueuePair\.onFrame|RocevWorkerTransport\.onFrame|\.onFrame\("),
    ("timers / ticks", r"\.onTick|spacedTick|\bTimer|clock_gettime|javaTimeNanos|nanoTime"),
    ("worker loop", r"NicWorker\.doWork|CompositeAgent|AgentRunner|RcQueuePair\.doWork|\.doWork"),
]
COMPILED = [(stage, re.compile(pattern)) for stage, pattern in STAGES]


def samples(path):
    current = None
    with open(path, errors="replace") as lines:
        for line in lines:
            if line and not line[0].isspace():
                current = {"comm": line.split()[0].lstrip("["), "frames": []}
                yield current
            elif line.strip() and current is not None:
                parts = line.strip().split(" ", 1)
                current["frames"].append(parts[1] if len(parts) > 1 else parts[0])


# the ICRC of a frame being built is the sender's; any other is the receiver's check
TX_ICRC = re.compile(r"\bRoceFrameWriter\.|\bSprayFrames\.|FrameOutput|UdpFrames")


def stage_of(frames):
    for depth, frame in enumerate(frames):
        for stage, pattern in COMPILED:
            if pattern.search(frame):
                if stage == "ICRC":
                    return "ICRC, TX" if any(TX_ICRC.search(above) for above in frames[depth:]) else "ICRC, RX"
                return stage
    if any("Interpreter" in frame for frame in frames[:2]):
        return "interpreter (code not yet compiled)"
    return "other (JVM, kernel, unresolved)"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    mpps_per_core = float(sys.argv[2])
    all_samples = list(samples(sys.argv[1]))
    threads = collections.Counter(s["comm"] for s in all_samples if "," in s["comm"])
    if not threads:
        sys.exit("no poll thread (a thread name with a comma) in " + sys.argv[1])
    poll = threads.most_common(1)[0][0]
    stages = collections.Counter(stage_of(s["frames"]) for s in all_samples if s["comm"] == poll)
    total = sum(stages.values())
    ns_per_packet = 1e3 / mpps_per_core
    print(f"poll thread {poll}: {total} samples; {mpps_per_core} Mpps/core = {ns_per_packet:.0f} ns CPU per packet")
    print("| stage | share | ns per packet |")
    print("|---|---|---|")
    for stage, _ in [("ICRC, RX", None), ("ICRC, TX", None)] + STAGES[1:] + [("interpreter (code not yet compiled)", None), ("other (JVM, kernel, unresolved)", None)]:
        count = stages.get(stage, 0)
        print(f"| {stage} | {100.0 * count / total:.1f} % | {ns_per_packet * count / total:.0f} |")


if __name__ == "__main__":
    main()
