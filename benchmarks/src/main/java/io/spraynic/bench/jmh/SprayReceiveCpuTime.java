package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * What the spray receiver costs per one-packet RDMA WRITE, timed by the thread's CPU time (robust to a loaded
 * machine, as {@link SpraySendCpuTime}), in two loops over bursts of 32 frames a real sender engine made
 * ({@link SprayInMemoryPair}, refilled untimed before each burst):
 * <ul>
 *   <li>{@code engine}: frames received and parsed untimed, then {@code SprayEngine.onFrame} for each and the
 *       burst's ACKs flushed: connection lookup, the S12 checks and message tag, path window, message layer,
 *       placement, completion, ACK (what {@code SprayReceiveBenchmark.engineOnFrame} times by the wall clock);</li>
 *   <li>{@code rxBurst}: one {@code NicWorker.doWork()} of B: the RX burst, parse and ICRC, then the same.</li>
 * </ul>
 * Two CPU clock reads bracket each burst; what they cost (an empty bracket, measured in the same rounds) is taken
 * off. Issue 13: the receive path per 64 B packet.
 * <pre>
 *   java -cp ... io.spraynic.bench.jmh.SprayReceiveCpuTime [payload [rounds [bursts per round]]]
 * </pre>
 */
public final class SprayReceiveCpuTime
{
    private static final int BURST = 32;

    private SprayReceiveCpuTime()
    {
    }

    /**
     * @param args payload bytes (64), rounds (9), bursts per round (10,000).
     */
    public static void main(final String[] args)
    {
        final int payload = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 9;
        final int bursts = args.length > 2 ? Integer.parseInt(args[2]) : 10_000;
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final double[] engineNs = new double[rounds];
        final double[] burstNs = new double[rounds];
        final double[] clockNs = new double[rounds];
        final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true);
        final RoceFrame[] frames = new RoceFrame[BURST];
        for (int i = 0; i < BURST; i++)
        {
            frames[i] = new RoceFrame();
        }
        long sink = 0;
        try (SprayInMemoryPair pair = new SprayInMemoryPair(payload);
            PacketBurst held = pair.portB.newBurst(BURST))
        {
            pair.fillReceiveRing(BURST);
            pair.receiveBurst(); // the receive side's lazy set-up
            final long receivedBefore = pair.receivedPackets();
            long packets = 0;
            for (int round = -3; round < rounds; round++) // three rounds of warm-up
            {
                long engine = 0;
                long whole = 0;
                long clock = 0;
                for (int b = 0; b < bursts; b++)
                {
                    // the engine alone: frames taken and parsed untimed
                    pair.engineB.onTick(pair.now());
                    pair.outputB.flush();
                    pair.fillReceiveRing(BURST);
                    if (pair.portB.receive(held) != BURST)
                    {
                        throw new IllegalStateException("expected a burst of " + BURST);
                    }
                    for (int i = 0; i < BURST; i++)
                    {
                        if (parser.parse(held.memory(), held.offset(i), held.length(i), frames[i]) !=
                            FrameClass.ROCE || !SprayOpcodes.isData(frames[i].opcode()))
                        {
                            throw new IllegalStateException("frame " + i + " is not spray data");
                        }
                    }
                    final long now = pair.now();
                    final long engineStart = threads.getCurrentThreadCpuTime();
                    sink += engineBurst(pair, frames, now);
                    final long engineEnd = threads.getCurrentThreadCpuTime();
                    pair.portB.release(held);

                    // the whole receive burst through B's worker
                    pair.fillReceiveRing(BURST);
                    final long burstStart = threads.getCurrentThreadCpuTime();
                    sink += rxBurst(pair);
                    final long burstEnd = threads.getCurrentThreadCpuTime();

                    // the bracket alone
                    final long clockStart = threads.getCurrentThreadCpuTime();
                    final long clockEnd = threads.getCurrentThreadCpuTime();
                    engine += engineEnd - engineStart;
                    whole += burstEnd - burstStart;
                    clock += clockEnd - clockStart;
                    packets += 2 * BURST;
                }
                if (round >= 0)
                {
                    engineNs[round] = (double)(engine - clock) / ((long)bursts * BURST);
                    burstNs[round] = (double)(whole - clock) / ((long)bursts * BURST);
                    clockNs[round] = (double)clock / bursts;
                }
            }
            final long received = pair.receivedPackets() - receivedBefore;
            if (received != packets || pair.receiveAnomalies() != 0)
            {
                throw new IllegalStateException("B accepted " + received + " of " + packets + " packets, anomalies " +
                    pair.receiveAnomalies());
            }
            if (!pair.placed(Math.min(pair.receivedPackets(), InMemoryTransportPair.REGION_BYTES / payload)))
            {
                throw new IllegalStateException("the WRITEs did not arrive byte for byte");
            }
        }
        Arrays.sort(engineNs);
        Arrays.sort(burstNs);
        Arrays.sort(clockNs);
        System.out.printf("spray receiver, CPU ns per %d B packet: engine %.1f best, %.1f median; rxBurst %.1f best, " +
            "%.1f median (%d rounds of %d bursts of %d; clock bracket %.0f ns, taken off; sink %d)%n", payload,
            engineNs[0], engineNs[rounds / 2], burstNs[0], burstNs[rounds / 2], rounds, bursts, BURST,
            clockNs[rounds / 2], sink & 1);
    }

    /*
     * Each timed part is its own small method, compiled by C2 as a whole after a few thousand calls, and not code
     * inside main: main's loop runs interpreted, then in C1's on-stack replacement, and gets C2's only after seconds
     * (under load, often during the kept rounds), and whether its 32 calls of onFrame per burst come from the
     * interpreter or compiled code moved the engine column by ~35 ns per packet (benchmarks/RESULTS.md, section 50).
     */
    private static long engineBurst(final SprayInMemoryPair pair, final RoceFrame[] frames, final long now)
    {
        pair.engineB.beginReceiveBurst(); // as the worker brackets a burst: its ACKs wait for the end
        for (int i = 0; i < BURST; i++)
        {
            pair.engineB.onFrame(frames[i], now);
        }
        return pair.engineB.endReceiveBurst() + pair.outputB.flush();
    }

    private static long rxBurst(final SprayInMemoryPair pair)
    {
        return pair.receiveBurst();
    }
}
