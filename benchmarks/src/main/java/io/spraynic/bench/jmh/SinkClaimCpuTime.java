package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.DpdkPacketPort;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.dpdk.MbufBurst;
import io.spraynic.dpdk.Mempool;
import io.spraynic.dpdk.PacketMemory;

import java.lang.foreign.ValueLayout;

/**
 * What taking a TX buffer costs per frame on DPDK, one at a time ({@code rte_pktmbuf_alloc_bulk} with a count of 1,
 * a downcall each, as {@link PortFrameSink} did before issue 13's section 56) against from a burst's reserve refilled
 * in bulk ({@link MbufBurst#allocateOne}), alternated round by round in one JVM ({@link CpuTimeRounds}: the thread's
 * CPU time), on a {@code net_null} port whose TX frees what it takes (the NIC's pool: 8191 mbufs, a 256-mbuf cache):
 * <ul>
 *     <li>alloc: 32 buffers taken one at a time, the burst's first 8 bytes of each written, the burst transmitted;</li>
 *     <li>sink: a 64 B frame claimed, written (its first 8 bytes) and committed 32 times through a
 *     {@link PortFrameSink}, then flushed: over the DPDK port itself (the reserve) and over a port that forwards
 *     every call but takes buffers one at a time (the old path, plus one forwarding call a frame).</li>
 * </ul>
 * <pre>
 *   java --enable-native-access=ALL-UNNAMED -cp ... io.spraynic.bench.jmh.SinkClaimCpuTime [rounds]
 * </pre>
 */
public final class SinkClaimCpuTime
{
    private static final int BURST = 32;
    private static final int BURSTS_PER_ROUND = 100_000;
    private static final int FRAME = 64;

    private SinkClaimCpuTime()
    {
    }

    /**
     * @param args rounds (9).
     */
    public static void main(final String[] args)
    {
        final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        try (NullPortBed bed = new NullPortBed("spraynic-claim"))
        {
            final DpdkPacketPort port = bed.port();
            final Mempool pool = bed.pool();
            final int portId = bed.portId();
            final int inUse = pool.inUseCount();
            try (MbufBurst oneAtATime = new MbufBurst(BURST, PacketMemory.current());
                MbufBurst reserve = new MbufBurst(BURST, PacketMemory.current()))
            {
                final PortFrameSink viaReserve = new PortFrameSink(port, BURST, 2048);
                final PortFrameSink viaOne = new PortFrameSink(new OneAtATimePort(port), BURST, 2048);
                viaReserve.onStart();
                viaOne.onStart();
                final CpuTimeRounds timed = new CpuTimeRounds(rounds, (long)BURSTS_PER_ROUND * BURST)
                    .add(() -> allocOneAtATime(oneAtATime, pool, portId))
                    .add(() -> allocFromReserve(reserve, pool, portId))
                    .add(() -> sinkBursts(viaOne))
                    .add(() -> sinkBursts(viaReserve))
                    .run();
                viaReserve.close();
                viaOne.close();
                System.out.printf("CPU ns per TX buffer: alloc one at a time %.1f best, %.1f median; from the " +
                    "reserve %.1f best, %.1f median; sink one at a time %.1f best, %.1f median; sink from the " +
                    "reserve %.1f best, %.1f median; reserve / one at a time: alloc %.3f, sink %.3f (medians; %d " +
                    "rounds; sink %d)%n", timed.best(0), timed.median(0), timed.best(1), timed.median(1),
                    timed.best(2), timed.median(2), timed.best(3), timed.median(3),
                    timed.median(1) / timed.median(0), timed.median(3) / timed.median(2), rounds,
                    timed.sink() & 1);
            }
            System.out.printf("mbufs in use after the sinks and bursts closed, beyond before: %d%n",
                pool.inUseCount() - inUse);
        }
    }

    private static long allocOneAtATime(final MbufBurst burst, final Mempool pool, final int portId)
    {
        long sent = 0;
        for (int b = 0; b < BURSTS_PER_ROUND; b++)
        {
            for (int i = 0; i < BURST; i++)
            {
                if (!burst.allocate(pool, 1))
                {
                    throw new IllegalStateException("pool empty");
                }
                burst.memory().set(ValueLayout.JAVA_LONG_UNALIGNED, burst.dataOffset(i), i);
            }
            burst.dataLengthAll(FRAME);
            sent += burst.transmit(portId, 0);
        }
        return sent;
    }

    private static long allocFromReserve(final MbufBurst burst, final Mempool pool, final int portId)
    {
        long sent = 0;
        for (int b = 0; b < BURSTS_PER_ROUND; b++)
        {
            for (int i = 0; i < BURST; i++)
            {
                if (!burst.allocateOne(pool))
                {
                    throw new IllegalStateException("pool empty");
                }
                burst.memory().set(ValueLayout.JAVA_LONG_UNALIGNED, burst.dataOffset(i), i);
            }
            burst.dataLengthAll(FRAME);
            sent += burst.transmit(portId, 0);
        }
        return sent;
    }

    private static long sinkBursts(final PortFrameSink sink)
    {
        for (int b = 0; b < BURSTS_PER_ROUND; b++)
        {
            for (int i = 0; i < BURST; i++)
            {
                if (!sink.claim(0, FRAME))
                {
                    throw new IllegalStateException("no buffer");
                }
                sink.buffer().set(ValueLayout.JAVA_LONG_UNALIGNED, sink.offset(), i);
                sink.commit(FRAME);
            }
            sink.flush();
        }
        return sink.transmitted();
    }

    /** Forwards every call to a port, but takes buffers one at a time: the interface's default allocateOne. */
    private static final class OneAtATimePort implements PacketPort
    {
        private final PacketPort port;

        OneAtATimePort(final PacketPort port)
        {
            this.port = port;
        }

        public String name()
        {
            return port.name();
        }

        public PacketBurst newBurst(final int capacity)
        {
            return port.newBurst(capacity);
        }

        public int receive(final PacketBurst burst)
        {
            return port.receive(burst);
        }

        public boolean allocate(final PacketBurst burst, final int count)
        {
            return port.allocate(burst, count);
        }

        public int transmit(final PacketBurst burst)
        {
            return port.transmit(burst);
        }

        public void release(final PacketBurst burst)
        {
            port.release(burst);
        }

        public void releaseLast(final PacketBurst burst)
        {
            port.releaseLast(burst);
        }

        public void close()
        {
        }
    }
}
