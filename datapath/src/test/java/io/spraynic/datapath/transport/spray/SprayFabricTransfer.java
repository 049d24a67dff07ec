package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.SprayFabricEndpoint;
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
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;

/**
 * A verified bulk WRITE transfer from host 0 to host 1 of a fabric, in virtual time (the test-side twin of the
 * benchmarks' workload, which tests cannot depend on): one connection, {@code paths} paths, messages posted
 * round-robin over {@code streams} streams with at most {@code window} outstanding; every byte checked.
 */
final class SprayFabricTransfer implements AutoCloseable
{
    final Fabric fabric;
    final Arena arena = Arena.ofShared();
    final SprayFabricEndpoint endpointA;
    final SprayFabricEndpoint endpointB;
    final SprayEngine engineA;
    final SprayEngine engineB;
    final SprayConnection a;
    final SprayConnection b;
    final CompletionQueue cqA = new CompletionQueue(1 << 14);
    final CompletionQueue cqB = new CompletionQueue(1 << 14);
    final ProtectionDomain pdA = new ProtectionDomain(new SplittableRandom(7));
    final ProtectionDomain pdB = new ProtectionDomain(new SplittableRandom(8));
    long completedMessages;
    long failedMessages;
    long finishedAtNanos;
    /** The longest time with no message completing, from the first post (a stall shows here). */
    long longestCompletionGapNanos;

    /** With the receiver's capacity the sum of its host links (S8.3). */
    SprayFabricTransfer(final Fabric fabric, final int paths, final int streams)
    {
        this(fabric, paths, streams, fabric.config().hostLink().rateBitsPerSecond() / 1_000_000 * fabric.planes());
    }

    SprayFabricTransfer(final Fabric fabric, final int paths, final int streams, final long capacityMbps)
    {
        this(fabric, paths, streams, capacityMbps, UnaryOperator.identity());
    }

    /** @param tune changes both ends' configurations (after the receiver's capacity is set). */
    SprayFabricTransfer(final Fabric fabric, final int paths, final int streams, final long capacityMbps,
        final UnaryOperator<SprayConfig> tune)
    {
        this.fabric = fabric;
        endpointA = new SprayFabricEndpoint(fabric.host(0), 1_000, new ParseCounters());
        endpointB = new SprayFabricEndpoint(fabric.host(1), 1_000, new ParseCounters());
        engineA = new SprayEngine(endpointA.configure(tune.apply(new SprayConfig().capacityMbps(capacityMbps))), pdA,
            endpointA.output());
        engineB = new SprayEngine(endpointB.configure(tune.apply(new SprayConfig().capacityMbps(capacityMbps))), pdB,
            endpointB.output());
        endpointA.bind(engineA);
        endpointB.bind(engineB);
        a = engineA.open(endpointA.remote(new SprayConnectionConfig().cids(1, 2).keysFromCids().paths(paths).streams(streams).mtu(4096)
            .initialPsns(0xFFFF00, 0x000100).completionQueues(cqA, cqA), 1));
        b = engineB.open(endpointB.remote(new SprayConnectionConfig().cids(2, 1).keysFromCids().paths(paths).streams(streams).mtu(4096)
            .initialPsns(0x000100, 0xFFFF00).completionQueues(cqB, cqB), 0));
    }

    /**
     * Writes {@code totalBytes} of seeded data in messages of {@code messageBytes}.
     *
     * @return true when every message completed with SUCCESS and the target equals the source.
     */
    boolean write(final long totalBytes, final int messageBytes, final int window, final long seed, final long limitNanos)
    {
        final int streams = streamsOf(a);
        final MemorySegment source = arena.allocate(totalBytes, 64);
        final MemorySegment target = arena.allocate(totalBytes, 64);
        SprayTestBed.fill(source, seed);
        target.fill((byte)0);
        final MemoryRegion local = pdA.register(source, AccessFlags.NONE);
        final MemoryRegion remote = pdB.register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        final int messages = (int)((totalBytes + messageBytes - 1) / messageBytes);
        final SendWorkRequest request = new SendWorkRequest();
        final WorkCompletion completion = new WorkCompletion();
        final long deadline = fabric.now() + limitNanos;
        long lastCompletionAt = fabric.now();
        int posted = 0;
        int outstanding = 0;
        completedMessages = 0;
        failedMessages = 0;
        while (completedMessages + failedMessages < messages && fabric.now() < deadline)
        {
            boolean any = false;
            while (outstanding < window && posted < messages)
            {
                final long offset = (long)posted * messageBytes;
                final int length = (int)Math.min(messageBytes, totalBytes - offset);
                request.reset().wrId(posted).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(local, local.address() + offset, length)
                    .remote(remote.address() + offset, remote.rkey()).signaled(true);
                if (a.postSend(posted % streams, request) != PostResult.OK)
                {
                    break;
                }
                outstanding++;
                posted++;
                any = true;
            }
            if (any)
            {
                endpointA.kick();
            }
            fabric.runUntil(fabric.now() + 5_000);
            while (cqA.poll(completion))
            {
                outstanding--;
                if (completion.status() == WorkCompletionStatus.SUCCESS)
                {
                    completedMessages++;
                    longestCompletionGapNanos = Math.max(longestCompletionGapNanos, fabric.now() - lastCompletionAt);
                    lastCompletionAt = fabric.now();
                    finishedAtNanos = fabric.now();
                }
                else
                {
                    failedMessages++;
                }
            }
        }
        return completedMessages == messages && source.mismatch(target) == -1;
    }

    private static int streamsOf(final SprayConnection c)
    {
        return c.streams();
    }

    long sum(final int counter)
    {
        return a.counters().get(counter);
    }

    public void close()
    {
        arena.close();
        fabric.close();
    }
}
