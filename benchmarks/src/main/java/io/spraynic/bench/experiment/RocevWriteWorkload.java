package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.DataDropTap;
import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricPort;
import io.spraynic.datapath.fabric.RcFabricEndpoint;
import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.transport.rocev2.RcCounters;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.ParseCounters;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * The RoCEv2 baseline's bulk transfer on a two-host fabric, as RoCEv2 is deployed for bandwidth:
 * one RC queue pair per plane (each one path: one plane, one UDP source port), messages of
 * {@code messageBytes} striped round-robin over them, a few outstanding per QP. Host 0 writes into
 * host 1's registered memory; every byte is checked at the end.
 */
public final class RocevWriteWorkload
{
    private static final long TICK_NANOS = 1_000;
    private static final int OUTSTANDING_PER_QP = 4;

    private RocevWriteWorkload()
    {
    }

    public static TransferOutcome run(
        final Fabric fabric, final long totalBytes, final int messageBytes, final long timeLimitNanos, final long seed)
    {
        final int planes = fabric.planes();
        final DataDropTap drops = DataDropTap.onEveryLink(fabric);
        final int messages = (int)((totalBytes + messageBytes - 1) / messageBytes);
        try (Arena arena = Arena.ofShared())
        {
            final ProtectionDomain pdA = new ProtectionDomain(new SplittableRandom(seed));
            final ProtectionDomain pdB = new ProtectionDomain(new SplittableRandom(seed + 1));
            final WriteBuffers buffers = WriteBuffers.allocate(arena, totalBytes, seed, pdA, AccessFlags.LOCAL_WRITE, pdB);
            final MemoryRegion local = buffers.source();
            final MemoryRegion remote = buffers.target();

            final CompletionQueue cqA = new CompletionQueue(4096);
            final CompletionQueue cqB = new CompletionQueue(4096);
            final RcQueuePair[] qps = new RcQueuePair[planes];
            final RcFabricEndpoint[] senders = new RcFabricEndpoint[planes];
            final RcFabricEndpoint[] receivers = new RcFabricEndpoint[planes];
            final MultiPortEndpoint hostA = new MultiPortEndpoint(planes);
            final MultiPortEndpoint hostB = new MultiPortEndpoint(planes);
            for (int p = 0; p < planes; p++)
            {
                final FabricPort portA = fabric.host(0).port(p);
                final FabricPort portB = fabric.host(1).port(p);
                senders[p] = new RcFabricEndpoint(portA, pdA, RcEngineConfig::defaults, new ParseCounters(), TICK_NANOS, arena);
                receivers[p] = new RcFabricEndpoint(portB, pdB, RcEngineConfig::defaults, new ParseCounters(), TICK_NANOS, arena);
                hostA.set(p, senders[p]);
                hostB.set(p, receivers[p]);
                final RcQueuePair qpA = senders[p].engine().createQueuePair(cqA, cqA, 64, 64);
                final RcQueuePair qpB = receivers[p].engine().createQueuePair(cqB, cqB, 64, 64);
                qpA.toInit(AccessFlags.REMOTE_WRITE);
                qpB.toInit(AccessFlags.REMOTE_WRITE);
                final int sourcePort = 49152 + p;
                qpA.toRtr(RcConnectionAttributes.of(qpB.qpNumber(), portB.localMac(), portB.localAddress(), sourcePort,
                    PathMtu.MTU_4096, 1000 * p, 5000 * p));
                qpB.toRtr(RcConnectionAttributes.of(qpA.qpNumber(), portA.localMac(), portA.localAddress(), sourcePort,
                    PathMtu.MTU_4096, 5000 * p, 1000 * p));
                qpA.toRts();
                qpB.toRts();
                qps[p] = qpA;
            }
            fabric.host(0).attach(hostA);
            fabric.host(1).attach(hostB);
            for (int p = 0; p < planes; p++)
            {
                senders[p].start();
                receivers[p].start();
            }

            final SendWorkRequest request = new SendWorkRequest();
            final WorkCompletion completion = new WorkCompletion();
            final int[] outstanding = new int[planes];
            final long start = fabric.now();
            final long deadline = start + timeLimitNanos;
            int posted = 0;
            int completed = 0;
            long bytesCompleted = 0;
            long lastCompletion = start;
            boolean failed = false;
            while (completed < messages && fabric.now() < deadline && !failed)
            {
                for (int p = 0; p < planes && posted < messages; p++)
                {
                    while (outstanding[p] < OUTSTANDING_PER_QP && posted < messages && posted % planes == p)
                    {
                        final long offset = (long)posted * messageBytes;
                        final int length = (int)Math.min(messageBytes, totalBytes - offset);
                        request.reset().wrId(((long)p << 32) | posted).opcode(WorkRequestOpcode.RDMA_WRITE)
                            .local(local, local.address() + offset, length)
                            .remote(remote.address() + offset, remote.rkey()).signaled(true);
                        if (qps[p].postSend(request) != PostResult.OK)
                        {
                            break;
                        }
                        outstanding[p]++;
                        posted++;
                    }
                }
                fabric.runUntil(fabric.now() + 5_000);
                while (cqA.poll(completion))
                {
                    final int plane = (int)(completion.wrId() >>> 32);
                    outstanding[plane]--;
                    if (completion.status() == WorkCompletionStatus.SUCCESS)
                    {
                        final int index = (int)completion.wrId();
                        bytesCompleted += Math.min(messageBytes, totalBytes - (long)index * messageBytes);
                        completed++;
                        lastCompletion = fabric.now();
                    }
                    else
                    {
                        failed = true; // the QP gave up (retries exhausted): RoCEv2 collapsed at this loss rate
                    }
                }
            }
            for (int p = 0; p < planes; p++)
            {
                senders[p].stop();
                receivers[p].stop();
            }
            final long lost = drops.dataDrops();
            long retransmitted = 0;
            long timeouts = 0;
            for (final RcFabricEndpoint sender : senders)
            {
                retransmitted += sender.engine().counters().get(RcCounters.RETRANSMITTED);
                timeouts += sender.engine().counters().get(RcCounters.TIMEOUTS);
            }
            final boolean verified = bytesCompleted == totalBytes ? buffers.arrivedIntact() :
                verifyPrefixes(buffers.source().segment(), buffers.target().segment());
            final long nanos = completed == messages ? lastCompletion - start : Math.min(fabric.now(), deadline) - start;
            return new TransferOutcome(totalBytes, bytesCompleted, nanos, lost, retransmitted, verified, timeouts);
        }
    }

    // With an unfinished transfer, completed messages are not a prefix (QPs run in parallel): a
    // completion still guarantees its bytes, so only check that nothing was written out of place.
    private static boolean verifyPrefixes(final MemorySegment source, final MemorySegment target)
    {
        for (long i = 0; i + 8 <= source.byteSize(); i += 8)
        {
            final long written = target.get(ValueLayout.JAVA_LONG_UNALIGNED, i);
            if (written != 0 && written != source.get(ValueLayout.JAVA_LONG_UNALIGNED, i))
            {
                return false;
            }
        }
        return true;
    }
}
