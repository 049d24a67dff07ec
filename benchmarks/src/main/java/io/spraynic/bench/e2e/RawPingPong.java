package io.spraynic.bench.e2e;

import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import org.HdrHistogram.Histogram;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

/**
 * Raw-frame ping-pong over the {@code net_ring} pair through the port layer and the C shim, one poll thread
 * per endpoint: the Java half of the raw latency comparison ({@code benchmarks/src/main/c/ping_pong.c} is
 * the C half and does the same). A stamps a sequence number into a frame and transmits it on port a; B's
 * thread receives it on port b and transmits it back; A spins until it returns, checks the number and the
 * length and records the round trip.
 */
public final class RawPingPong
{
    static final int SEQ_OFFSET = 14;

    private RawPingPong()
    {
    }

    public static LatencyResult run(
        final DpdkNic nic, final int frameLength, final int warmup, final int iterations, final Duration timeout)
    {
        if (frameLength < 60 || frameLength > 2048)
        {
            throw new IllegalArgumentException("frame length must be 60..2048: " + frameLength);
        }
        final PacketPort portA = nic.packetPort(RingNic.PORT_A, 0);
        final PacketPort portB = nic.packetPort(RingNic.PORT_B, 0);
        final Echo echo = new Echo(portB);
        final Thread echoThread = new Thread(echo, "raw-echo");
        echoThread.start();
        final Histogram histogram = LatencyResult.newHistogram();
        long mismatches = 0;
        portA.onPollerStart();
        final PacketBurst burst = portA.newBurst(32);
        final long deadline = System.nanoTime() + timeout.toNanos();
        try
        {
            for (long seq = 0, end = (long)warmup + iterations; seq < end; seq++)
            {
                if (!portA.allocate(burst, 1))
                {
                    throw new IllegalStateException("no mbuf");
                }
                burst.length(0, frameLength);
                final MemorySegment memory = burst.memory();
                memory.set(ValueLayout.JAVA_LONG_UNALIGNED, burst.offset(0) + SEQ_OFFSET, seq);
                final long start = System.nanoTime();
                while (portA.transmit(burst) != 1)
                {
                    Thread.onSpinWait();
                }
                int n;
                while ((n = portA.receive(burst)) == 0)
                {
                    if (System.nanoTime() > deadline)
                    {
                        throw new IllegalStateException("raw ping-pong: no answer to " + seq + " in " + timeout);
                    }
                }
                final long rtt = System.nanoTime() - start;
                if (n != 1 || burst.length(0) != frameLength ||
                    burst.memory().get(ValueLayout.JAVA_LONG_UNALIGNED, burst.offset(0) + SEQ_OFFSET) != seq)
                {
                    mismatches++;
                }
                portA.release(burst);
                if (seq >= warmup)
                {
                    histogram.recordValue(rtt);
                }
            }
        }
        finally
        {
            echo.running = false;
            try
            {
                echoThread.join();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            portA.release(burst);
            burst.close();
            RingNic.drain(nic);
            portA.onPollerClose();
        }
        return LatencyResult.of("raw-java", histogram, mismatches + echo.unsent);
    }

    /** B: every frame that arrives goes straight back. */
    static final class Echo implements Runnable
    {
        final PacketPort port;
        volatile boolean running = true;
        long unsent;

        Echo(final PacketPort port)
        {
            this.port = port;
        }

        public void run()
        {
            port.onPollerStart();
            final PacketBurst burst = port.newBurst(32);
            try
            {
                while (running)
                {
                    if (port.receive(burst) > 0)
                    {
                        final int n = burst.size();
                        unsent += n - port.transmit(burst);
                        port.release(burst);
                    }
                }
            }
            finally
            {
                burst.close();
                port.onPollerClose();
            }
        }
    }
}
