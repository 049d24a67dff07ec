package io.spraynic.bench.e2e;

import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

/**
 * RDMA WRITE ping-pong latency through a transport over {@code net_ring}, one busy-spinning poll thread per
 * endpoint. A stamps a sequence number into a small buffer and RDMA-WRITEs it with immediate data (the same
 * number) into B's memory; B's receive completion shows the number arrived, B checks the bytes in its memory
 * and WRITEs them back the same way; A's receive completion ends the round trip, recorded in an HdrHistogram
 * after A checked the bytes that came back. Each side's posting runs on its own poll thread, composed with
 * its transport agent (the engines are single-threaded).
 */
public final class PingPong
{
    static final int RECEIVES = 16;

    private PingPong()
    {
    }

    /**
     * @param nic        the ring pair ({@link RingNic}).
     * @param kind       the transport.
     * @param length     bytes per WRITE (64 in the benchmark; 8 to the MTU).
     * @param warmup     round trips not recorded.
     * @param iterations round trips recorded.
     * @param timeout    the longest the run may take.
     */
    public static LatencyResult run(
        final DpdkNic nic, final TransportPair.Kind kind, final int length, final int warmup, final int iterations,
        final Duration timeout)
    {
        return run(nic, kind, length, warmup, iterations, timeout, Idle.SPIN);
    }

    /**
     * @param idle what each poll thread does when a pass found nothing to do.
     */
    public static LatencyResult run(
        final DpdkNic nic, final TransportPair.Kind kind, final int length, final int warmup, final int iterations,
        final Duration timeout, final Idle idle)
    {
        if (length < 8 || length > TransportPair.MTU)
        {
            throw new IllegalArgumentException("length must be 8.." + TransportPair.MTU + ": " + length);
        }
        final TransportPair pair = TransportPair.create(kind, nic.packetPort(RingNic.PORT_A, 0), nic.packetPort(RingNic.PORT_B, 0));
        try (Arena arena = Arena.ofShared())
        {
            final Side a = new Side(pair.a(), arena, length);
            final Side b = new Side(pair.b(), arena, length);
            a.peer = b;
            b.peer = a;
            final Pinger pinger = new Pinger(a, warmup, iterations);
            final Ponger ponger = new Ponger(b);
            final AgentRunner runnerA = new AgentRunner(idle.newStrategy(), Throwable::printStackTrace, null,
                new CompositeAgent(pair.a().agent(), pinger));
            final AgentRunner runnerB = new AgentRunner(idle.newStrategy(), Throwable::printStackTrace, null,
                new CompositeAgent(pair.b().agent(), ponger));
            AgentRunner.startOnThread(runnerB);
            AgentRunner.startOnThread(runnerA);
            final long deadline = System.nanoTime() + timeout.toNanos();
            while (!pinger.done && System.nanoTime() < deadline)
            {
                sleep(10);
            }
            runnerA.close();
            runnerB.close();
            if (!pinger.done)
            {
                throw new IllegalStateException(kind.text() + " ping-pong did not finish in " + timeout + ": " +
                    pinger.histogram.getTotalCount() + " of " + iterations + " round trips, failures " + pinger.failures +
                    " (" + pinger.firstFailure + "), B answered " + ponger.answered + ", failures " + ponger.failures +
                    " (" + ponger.firstFailure + ")");
            }
            nic.eal().registerCurrentThread();
            RingNic.drain(nic);
            return LatencyResult.of(kind.text() + (idle == Idle.SPIN ? "" : "-" + idle.text()), pinger.histogram, pinger.mismatches + pinger.failures + ponger.failures);
        }
    }

    static void sleep(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** One endpoint's memory: what it writes from and where the peer writes to. */
    static final class Side
    {
        final TransportPair.Endpoint endpoint;
        final MemoryRegion source;
        final MemoryRegion target;
        final int length;
        final SendWorkRequest send = new SendWorkRequest();
        final ReceiveWorkRequest receive = new ReceiveWorkRequest();
        final WorkCompletion wc = new WorkCompletion();
        Side peer;

        Side(final TransportPair.Endpoint endpoint, final Arena arena, final int length)
        {
            this.endpoint = endpoint;
            this.length = length;
            source = endpoint.pd().register(arena.allocate(length, 64), AccessFlags.LOCAL_WRITE);
            target = endpoint.pd().register(arena.allocate(length, 64), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            for (int i = 0; i < RECEIVES; i++)
            {
                postReceive();
            }
        }

        boolean postReceive()
        {
            return endpoint.postReceive(receive.reset().wrId(0)) == PostResult.OK;
        }

        /** Writes {@code seq} (in the first 8 bytes and as immediate data) into the peer's target. */
        boolean write(final long seq)
        {
            source.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, seq);
            return endpoint.postSend(send.reset().wrId(seq).opcode(WorkRequestOpcode.RDMA_WRITE_WITH_IMM)
                .local(source, source.address(), length).remote(peer.target.address(), peer.target.rkey())
                .immediate((int)seq).signaled(true)) == PostResult.OK;
        }

        long arrived()
        {
            return target.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
        }
    }

    /** A's side: sends a ping, waits for the answer, records the round trip. */
    static final class Pinger implements Agent
    {
        final Side side;
        final int warmup;
        final int iterations;
        final Histogram histogram = LatencyResult.newHistogram();
        long seq;
        long sentAt;
        boolean waiting;
        long mismatches;
        long failures;
        volatile String firstFailure;
        volatile boolean done;

        Pinger(final Side side, final int warmup, final int iterations)
        {
            this.side = side;
            this.warmup = warmup;
            this.iterations = iterations;
        }

        public int doWork()
        {
            int work = 0;
            if (!waiting && !done)
            {
                sentAt = System.nanoTime();
                if (side.write(seq))
                {
                    waiting = true;
                    work++;
                }
            }
            final WorkCompletion wc = side.wc;
            while (side.endpoint.cq().poll(wc))
            {
                work++;
                if (wc.status() != WorkCompletionStatus.SUCCESS)
                {
                    if (failures++ == 0)
                    {
                        firstFailure = wc.toString();
                    }
                    continue;
                }
                if (wc.opcode() != WorkCompletionOpcode.RECV_RDMA_WITH_IMM)
                {
                    continue; // our own WRITE's completion
                }
                final long rtt = System.nanoTime() - sentAt;
                if (!waiting || wc.immediateData() != (int)seq || side.arrived() != seq)
                {
                    mismatches++;
                }
                if (seq >= warmup)
                {
                    histogram.recordValue(rtt);
                }
                side.postReceive();
                waiting = false;
                if (++seq == (long)warmup + iterations)
                {
                    done = true;
                }
            }
            return work;
        }

        public String roleName()
        {
            return "pinger";
        }
    }

    /** B's side: answers every ping with the bytes it received. */
    static final class Ponger implements Agent
    {
        final Side side;
        long answered;
        long failures;
        volatile String firstFailure;

        Ponger(final Side side)
        {
            this.side = side;
        }

        public int doWork()
        {
            int work = 0;
            final WorkCompletion wc = side.wc;
            while (side.endpoint.cq().poll(wc))
            {
                work++;
                if (wc.status() != WorkCompletionStatus.SUCCESS)
                {
                    if (failures++ == 0)
                    {
                        firstFailure = wc.toString();
                    }
                    continue;
                }
                if (wc.opcode() != WorkCompletionOpcode.RECV_RDMA_WITH_IMM)
                {
                    continue;
                }
                final long seq = side.arrived();
                if ((int)seq != wc.immediateData())
                {
                    failures++;
                }
                side.postReceive();
                if (side.write(seq))
                {
                    answered++;
                }
                else
                {
                    failures++;
                }
            }
            return work;
        }

        public String roleName()
        {
            return "ponger";
        }
    }
}
