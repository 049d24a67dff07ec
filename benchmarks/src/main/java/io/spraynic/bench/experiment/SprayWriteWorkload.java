package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.DataDropTap;
import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.SprayFabricEndpoint;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.transport.spray.SprayConnectionConfig;
import io.spraynic.datapath.transport.spray.SprayCounters;
import io.spraynic.datapath.transport.spray.SprayEngine;
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
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;

/**
 * The spray transport's bulk transfer on a two-host fabric: one connection with {@code paths}
 * paths spread over every plane and {@code streams} streams, messages of {@code messageBytes}
 * posted round-robin over the streams with a bounded number outstanding. Host 0 writes into host
 * 1's registered memory; every byte is checked at the end.
 */
public final class SprayWriteWorkload
{
    private static final long TICK_NANOS = 1_000;
    private static final int OUTSTANDING = 16;

    private SprayWriteWorkload()
    {
    }

    /** @param tune changes both engines' configurations (after the receiver's capacity is set); identity for none. */
    public static TransferOutcome run(
        final Fabric fabric,
        final long totalBytes,
        final int messageBytes,
        final long timeLimitNanos,
        final long seed,
        final int paths,
        final int streams,
        final UnaryOperator<SprayConfig> tune)
    {
        final int messages = (int)((totalBytes + messageBytes - 1) / messageBytes);
        final long capacityMbps = fabric.config().hostLink().rateBitsPerSecond() / 1_000_000 * fabric.planes();
        final DataDropTap drops = DataDropTap.onEveryLink(fabric);
        try (Arena arena = Arena.ofShared())
        {
            final ProtectionDomain pdA = new ProtectionDomain(new SplittableRandom(seed));
            final ProtectionDomain pdB = new ProtectionDomain(new SplittableRandom(seed + 1));
            final SprayFabricEndpoint a = new SprayFabricEndpoint(fabric.host(0), TICK_NANOS, new ParseCounters());
            final SprayFabricEndpoint b = new SprayFabricEndpoint(fabric.host(1), TICK_NANOS, new ParseCounters());
            final SprayEngine engineA = new SprayEngine(a.configure(tune.apply(new SprayConfig().capacityMbps(capacityMbps))),
                pdA, a.output());
            final SprayEngine engineB = new SprayEngine(b.configure(tune.apply(new SprayConfig().capacityMbps(capacityMbps))),
                pdB, b.output());
            a.bind(engineA);
            b.bind(engineB);
            final CompletionQueue cqA = new CompletionQueue(4096);
            final CompletionQueue cqB = new CompletionQueue(4096);
            final SprayConnection connection = engineA.open(a.remote(new SprayConnectionConfig().cids(1, 2).keysFromCids().paths(paths)
                .streams(streams).mtu(4096).initialPsns(0xFFFF00, 0x000100).completionQueues(cqA, cqA), 1));
            engineB.open(b.remote(new SprayConnectionConfig().cids(2, 1).keysFromCids().paths(paths).streams(streams).mtu(4096)
                .initialPsns(0x000100, 0xFFFF00).completionQueues(cqB, cqB), 0));

            final WriteBuffers buffers = WriteBuffers.allocate(arena, totalBytes, seed, pdA, AccessFlags.NONE, pdB);
            final MemoryRegion local = buffers.source();
            final MemoryRegion remote = buffers.target();

            final SendWorkRequest request = new SendWorkRequest();
            final WorkCompletion completion = new WorkCompletion();
            final long start = fabric.now();
            final long deadline = start + timeLimitNanos;
            int posted = 0;
            int completed = 0;
            int outstanding = 0;
            long bytesCompleted = 0;
            long lastCompletion = start;
            boolean failed = false;
            while (completed < messages && fabric.now() < deadline && !failed)
            {
                boolean postedAny = false;
                while (outstanding < OUTSTANDING && posted < messages)
                {
                    final long offset = (long)posted * messageBytes;
                    final int length = (int)Math.min(messageBytes, totalBytes - offset);
                    request.reset().wrId(posted).opcode(WorkRequestOpcode.RDMA_WRITE)
                        .local(local, local.address() + offset, length)
                        .remote(remote.address() + offset, remote.rkey()).signaled(true);
                    if (connection.postSend(posted % streams, request) != PostResult.OK)
                    {
                        break;
                    }
                    outstanding++;
                    posted++;
                    postedAny = true;
                }
                if (postedAny)
                {
                    a.kick();
                }
                fabric.runUntil(fabric.now() + 5_000);
                while (cqA.poll(completion))
                {
                    outstanding--;
                    if (completion.status() == WorkCompletionStatus.SUCCESS)
                    {
                        bytesCompleted += Math.min(messageBytes, totalBytes - completion.wrId() * messageBytes);
                        completed++;
                        lastCompletion = fabric.now();
                    }
                    else
                    {
                        failed = true;
                    }
                }
            }
            final boolean verified = completed == messages && buffers.arrivedIntact();
            final long nanos = completed == messages ? lastCompletion - start : Math.min(fabric.now(), deadline) - start;
            return new TransferOutcome(totalBytes, bytesCompleted, nanos, drops.dataDrops(),
                connection.counters().get(SprayCounters.RETRANSMITTED), verified,
                connection.counters().get(SprayCounters.TIMEOUTS) + connection.counters().get(SprayCounters.PROBES_SENT));
        }
    }
}
