package io.spraynic.bench.jmh;

import io.spraynic.datapath.transport.spray.SprayCounters;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * What the spray sender's side costs per message, timed by the thread's CPU time (robust to a loaded machine, as
 * {@link FrameWriteCpuTime}): the {@link SprayInMemoryPair} of two real engines stepped through their
 * {@code NicWorker}s in virtual time, A posting one-packet RDMA WRITEs of {@code payload} bytes and B acknowledging
 * them. Each step of A (posting, B's ACKs in, data out, completions polled: docs/PROTOCOL.md S4, S6.3-S6.5, S7.2) is
 * timed on its own; B's steps are timed apart and reported too, untouched by this harness's purpose (issue 13: the
 * send side and the sender's ACK handling, per packet).
 * <pre>
 *   java -cp ... io.spraynic.bench.jmh.SpraySendCpuTime [payload [rounds [messages per round]]]
 * </pre>
 */
public final class SpraySendCpuTime
{
    private SpraySendCpuTime()
    {
    }

    /**
     * @param args payload bytes (64), rounds (9), messages per round (200,000).
     */
    public static void main(final String[] args)
    {
        final int payload = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 9;
        final int messagesPerRound = args.length > 2 ? Integer.parseInt(args[2]) : 200_000;
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final double[] senderNs = new double[rounds];
        final double[] receiverNs = new double[rounds];
        try (SprayInMemoryPair pair = new SprayInMemoryPair(payload))
        {
            for (int round = -3; round < rounds; round++) // three rounds of warm-up
            {
                long sender = 0;
                long receiver = 0;
                long messages = 0;
                for (int step = 0; messages < messagesPerRound; step++)
                {
                    if (step > 100 * messagesPerRound)
                    {
                        throw new IllegalStateException("stalled: " + pair.senderState());
                    }
                    final long senderStart = threads.getCurrentThreadCpuTime();
                    messages += pair.senderStep();
                    final long receiverStart = threads.getCurrentThreadCpuTime();
                    while (pair.portB.pendingReceive() > 0)
                    {
                        pair.receiveBurst();
                    }
                    pair.receiveBurst(); // B's ACKs of the last burst
                    final long end = threads.getCurrentThreadCpuTime();
                    sender += receiverStart - senderStart;
                    receiver += end - receiverStart;
                }
                if (pair.receiveAnomalies() != 0)
                {
                    throw new IllegalStateException("B saw " + pair.receiveAnomalies() + " anomalies");
                }
                if (round >= 0)
                {
                    senderNs[round] = (double)sender / messages;
                    receiverNs[round] = (double)receiver / messages;
                }
            }
            if (!pair.placed(Math.min(pair.receivedPackets(), InMemoryTransportPair.REGION_BYTES / payload)))
            {
                throw new IllegalStateException("the WRITEs did not arrive byte for byte");
            }
            Arrays.sort(senderNs);
            Arrays.sort(receiverNs);
            System.out.printf("spray sender, CPU ns per %d B message: %.1f best, %.1f median; receiver %.1f best, " +
                "%.1f median (%d rounds of %d messages; B received %d, A took %d ACKs)%n", payload, senderNs[0],
                senderNs[rounds / 2], receiverNs[0], receiverNs[rounds / 2], rounds, messagesPerRound,
                pair.receivedPackets(), pair.a.counters().get(SprayCounters.ACKS_RECEIVED));
        }
    }
}
