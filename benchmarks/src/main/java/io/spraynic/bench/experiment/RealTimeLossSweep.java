package io.spraynic.bench.experiment;

import io.spraynic.apps.demo.FabricDemo;
import io.spraynic.datapath.nic.DpdkNic;

import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * {@code loss-sweep --realtime}: the loss sweep on DPDK in real time. Each transfer is the demo's
 * ({@link FabricDemo}): two embedded NICs in this process, each with one {@code net_ring} port per plane,
 * joined through the fabric emulator running in real time, RDMA WRITEs of 1 MiB from host 0 into host 1's
 * registered memory, every byte compared at the end. Spray uses one connection over {@code paths} paths,
 * RoCEv2 one RC queue pair per plane. The poll-mode workers, the fabric and the application share this
 * machine's cores, so absolute rates are the machine's; the ratios to each transport's own lossless rate,
 * measured in the same run, are the result. Two lossless transfers of each transport go first, untimed, to
 * warm the JIT up; then every point is the run of median goodput among {@code repeats} (one descheduled poll
 * thread can halve a single run).
 */
public final class RealTimeLossSweep
{
    /**
     * Up to 10 %: beyond that RoCEv2's go-back-N needs minutes per point in real time (its virtual-time
     * sweep, {@link LossSweep}, covers 20 %).
     */
    public static final double[] DEFAULT_LOSS_PERCENT = {0, 0.1, 1, 2, 5, 10};

    /** Four planes, eight spray paths and four streams, as the demo; 64 MiB per transfer, at most a minute each. */
    public static final LossSweep.Settings DEFAULT =
        new LossSweep.Settings(4, 64L << 20, 1 << 20, Duration.ofSeconds(60).toNanos(), 0, 8, 4);

    private static final int WARM_UP_TRANSFERS = 2;

    private RealTimeLossSweep()
    {
    }

    /**
     * Runs the sweep in one DPDK EAL (this process's), RoCEv2 and spray alternating at each loss rate.
     * {@code settings.seed()} is not used: in real time the interleaving of threads decides which packets a
     * loss rate drops.
     */
    public static List<LossSweep.Point> run(
        final LossSweep.Settings settings, final double[] lossPercent, final int repeats, final Consumer<String> log)
    {
        if (repeats < 1)
        {
            throw new IllegalArgumentException("repeats must be >= 1 (got " + repeats + ")");
        }
        if (settings.planes() < 1 || settings.planes() > 8 || settings.paths() < settings.planes() || settings.paths() > 64)
        {
            throw new IllegalArgumentException("a real-time sweep needs 1..8 planes and planes..64 paths (got " +
                settings.planes() + ", " + settings.paths() + ")");
        }
        try (DpdkNic nic = DpdkNic.start(FabricDemo.config(settings.planes(), "spraynic-loss-sweep-" + ProcessHandle.current().pid())))
        {
            // untimed: the first transfers run while the JIT compiles the datapath, at a fraction of the warm rate
            for (int i = 0; i < WARM_UP_TRANSFERS; i++)
            {
                transfer(nic, settings, true, 0);
                transfer(nic, settings, false, 0);
            }
            return LossSweep.sweep(lossPercent, (spray, loss) -> median(nic, settings, spray, loss, repeats), log);
        }
    }

    // the run of median goodput among `repeats`: one descheduled thread can halve a single run in real time
    private static TransferOutcome median(
        final DpdkNic nic, final LossSweep.Settings settings, final boolean spray, final double loss, final int repeats)
    {
        final TransferOutcome[] runs = new TransferOutcome[repeats];
        for (int i = 0; i < repeats; i++)
        {
            runs[i] = transfer(nic, settings, spray, loss);
        }
        Arrays.sort(runs, Comparator.comparingDouble(TransferOutcome::goodputGbps));
        return runs[repeats / 2];
    }

    private static TransferOutcome transfer(final DpdkNic nic, final LossSweep.Settings settings, final boolean spray, final double loss)
    {
        final FabricDemo.Settings demo = new FabricDemo.Settings(
            spray ? FabricDemo.Mode.SPRAY : FabricDemo.Mode.ROCEV2, settings.planes(), spray ? settings.paths() : settings.planes(),
            loss * 100, settings.bytes(), settings.messageBytes(), settings.streams(), Duration.ofNanos(settings.timeLimitNanos()));
        final FabricDemo.Result result = FabricDemo.run(nic, demo, UnaryOperator.identity(), progress -> { });
        // the demo counts no timer-driven sends apart from retransmissions: -1, not counted
        return new TransferOutcome(result.bytes(), result.bytesCompleted(), result.nanos(), result.lost(), result.retransmitted(),
            result.verified(), -1);
    }
}
