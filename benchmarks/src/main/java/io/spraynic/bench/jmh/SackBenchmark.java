package io.spraynic.bench.jmh;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.transport.spray.PathReceiveWindow;
import io.spraynic.datapath.transport.spray.PathSendWindow;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The spray transport's per-path sequence bookkeeping, per packet, for a burst of 32 packets on one
 * path with one loss in it (PROTOCOL.md S6.3-S6.6):
 * <ul>
 *   <li>{@code receiveWindowUpdate}: the receiver records 32 arrivals (one gap), then writes the ACK's
 *       cumulative PSN and 256-bit bitmap.</li>
 *   <li>{@code sendWindowAckAndGapScan}: the sender applies that ACK: 31 packets acknowledged, the gap
 *       found and reported lost, the window slid once the retransmission is acknowledged.</li>
 * </ul>
 * Both must show 0 B/op under {@code -prof gc}.
 * <pre>
 *   ./spraynic jmh SackBenchmark -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@State(Scope.Thread)
public class SackBenchmark
{
    static final int BURST = 32;
    static final int LOST = 7;

    private final PathReceiveWindow receiver = new PathReceiveWindow(0xFFFF00);
    private final PathSendWindow sender = new PathSendWindow(0xFFFF00);
    private final MemorySegment ack = Arena.ofAuto().allocate(SelectiveAckHeader.LENGTH);
    private final Counting listener = new Counting();
    private int nextPsn = 0xFFFF00;

    static final class Counting implements PathSendWindow.Listener
    {
        long acked;
        long lost;
        int lostPsn;

        public void onAcked(final long handle, final int psn, final long rttNanos)
        {
            acked += handle;
        }

        public void onLost(final long handle, final int psn)
        {
            lost++;
            lostPsn = psn;
        }
    }

    @Setup(Level.Iteration)
    public void reset()
    {
        receiver.reset(0, nextPsn);
        sender.reset(nextPsn);
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int receiveWindowUpdate()
    {
        final int first = nextPsn;
        for (int i = 0; i < BURST; i++)
        {
            if (i != LOST)
            {
                receiver.onPacket(0, Psn.add(first, i));
            }
        }
        receiver.writeTo(0, ack, 0);
        receiver.onPacket(0, Psn.add(first, LOST)); // the retransmission closes the gap for the next round
        nextPsn = Psn.add(first, BURST);
        return receiver.cumulativePsn(0);
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public long sendWindowAckAndGapScan()
    {
        final int first = sender.nextPsn();
        for (int i = 0; i < BURST; i++)
        {
            sender.send(i, 0);
        }
        for (int i = 0; i < BURST; i++)
        {
            if (i != LOST)
            {
                receiver.onPacket(0, Psn.add(first, i));
            }
        }
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 1_000, listener);
        sender.retransmitted(listener.lostPsn, 1_000);
        receiver.onPacket(0, listener.lostPsn);
        receiver.writeTo(0, ack, 0);
        sender.onAck(ack, 0, 2_000, listener);
        return listener.acked + listener.lost;
    }
}
