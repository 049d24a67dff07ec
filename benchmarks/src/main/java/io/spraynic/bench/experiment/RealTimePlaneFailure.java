package io.spraynic.bench.experiment;

import io.spraynic.apps.demo.FabricDemo;
import io.spraynic.datapath.nic.DpdkNic;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * {@code plane-failure --realtime}: the plane failure on DPDK in real time, in the demo's set-up
 * ({@link FabricDemo}): two embedded NICs in this process, each with one {@code net_ring} port per plane, joined
 * through the fabric emulator running in real time. Host 0 writes into host 1's registered memory; {@code
 * failAtNanos} after the first post, every link of one plane starts dropping everything silently (the fabric's
 * own thread makes the change) and nobody tells the application or the transport.
 * <p>
 * Spray (one connection, 8 paths over the planes) should carry on over the other planes by itself. RoCEv2 (one
 * QP per plane, messages striped over them) cannot: the QP on the dead plane exhausts its retries (7 timeouts of
 * 50 ms) and completes its WRITEs in error, and the run stops at that first failed write, as the demo's does.
 * The goodput timeline has {@link FabricDemo#TIMELINE_BIN_NANOS} bins; "recovered" is judged as in virtual time
 * ({@link PlaneFailureExperiment}).
 */
public final class RealTimePlaneFailure
{
    /** Four planes, plane 1 fails 500 ms in, 1 GiB of 64 KiB WRITEs (as in virtual time), at most 30 s per transport. */
    public static final PlaneFailureExperiment.Settings DEFAULT = new PlaneFailureExperiment.Settings(
        4, 1, 1L << 30, 64 * 1024, 500_000_000L, FabricDemo.TIMELINE_BIN_NANOS, Duration.ofSeconds(30).toNanos(), 0);

    private static final int SPRAY_PATHS = 8;
    private static final int STREAMS = 4;
    // a quarter of a second or more of each transport: both climb over their first few hundred milliseconds
    private static final long WARM_UP_BYTES = 256L << 20;

    private RealTimePlaneFailure()
    {
    }

    /**
     * Runs spray, then RoCEv2, each after an untimed warm-up transfer without a failure, in this process's EAL.
     * {@code settings.binNanos()} must be {@link FabricDemo#TIMELINE_BIN_NANOS}; {@code seed} is not used.
     */
    public static List<PlaneFailureExperiment.Side> run(final PlaneFailureExperiment.Settings settings, final Consumer<String> log)
    {
        if (settings.planes() < 2 || settings.planes() > 8 || settings.failedPlane() < 0 ||
            settings.failedPlane() >= settings.planes() || settings.binNanos() != FabricDemo.TIMELINE_BIN_NANOS)
        {
            throw new IllegalArgumentException("a real-time plane failure needs 2..8 planes, a failed plane among them " +
                "and bins of " + FabricDemo.TIMELINE_BIN_NANOS / 1_000_000 + " ms (got " + settings + ")");
        }
        final List<PlaneFailureExperiment.Side> sides = new ArrayList<>();
        try (DpdkNic nic = DpdkNic.start(FabricDemo.config(settings.planes(), "spraynic-plane-failure-" +
            ProcessHandle.current().pid())))
        {
            for (final FabricDemo.Mode mode : FabricDemo.Mode.values())
            {
                // untimed: the first transfer runs while the JIT compiles the datapath
                transfer(nic, settings, mode, Math.min(settings.bytes(), WARM_UP_BYTES), null);
                final FabricDemo.Result result = transfer(nic, settings, mode, settings.bytes(),
                    new FabricDemo.Blackhole(settings.failedPlane(), settings.failAtNanos()));
                final String transport = mode == FabricDemo.Mode.SPRAY ? "spray" : "rocev2";
                final boolean complete = result.bytesCompleted() == result.bytes();
                final PlaneFailureExperiment.Side side = PlaneFailureExperiment.side(transport, complete, result.verified(),
                    null != result.firstFailure(), result.goodputGbps(), result.nanos(), result.completedPerBin(),
                    settings.binNanos(), result.blackholedAtNanos() < 0 ? settings.failAtNanos() : result.blackholedAtNanos(),
                    settings.planes(), result.bytesCompleted());
                sides.add(side);
                log.accept(String.format(Locale.ROOT,
                    "%-6s: %.2f Gb/s before the failure, lowest %.2f after, goodput back to >= %.0f %% of %d/%d after %s ms; " +
                    "%s of %s bytes%s%s",
                    transport, side.beforeGbps(), side.lowestGbps(), 95.0, settings.planes() - 1, settings.planes(),
                    side.timelineRecoveryNanos() < 0 ? "never" : LossSweep.number(side.timelineRecoveryNanos() / 1e6),
                    result.bytesCompleted(), result.bytes(), result.verified() ? ", verified" : ", NOT VERIFIED",
                    null == result.firstFailure() ? "" : "; first failed write: " + result.firstFailure()));
            }
        }
        return sides;
    }

    private static FabricDemo.Result transfer(
        final DpdkNic nic, final PlaneFailureExperiment.Settings settings, final FabricDemo.Mode mode, final long bytes,
        final FabricDemo.Blackhole blackhole)
    {
        final FabricDemo.Settings demo = new FabricDemo.Settings(mode, settings.planes(),
            mode == FabricDemo.Mode.SPRAY ? Math.max(SPRAY_PATHS, settings.planes()) : settings.planes(), 0, bytes,
            settings.messageBytes(), STREAMS, Duration.ofNanos(settings.timeLimitNanos()), blackhole);
        return FabricDemo.run(nic, demo, UnaryOperator.identity(), progress -> { });
    }
}
