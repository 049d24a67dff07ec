package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.fuzz.FrameMutator;
import io.spraynic.datapath.fuzz.SeedFrames;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Mutated frames of every spray opcode and of RoCEv2 RC injected into a live NIC's DPDK queues while a
 * legitimate transfer runs: the CI test ({@code FrameFuzzDpdkTest}) runs it with a bounded count, {@link #main}
 * with as many as asked (the soak figure).
 * <p>
 * On a {@link HostileWire}: A opens a decoy connection to B and moves data both ways on it (WRITEs, WRITE with
 * immediate, READs each way) while a tap records what A sends to B; those frames, completed by
 * {@link SeedFrames}, seed a {@link FrameMutator} whose frames the attacker merges into B's receive queues. The
 * decoy is the target (its CID is in the frames); the legitimate connection, opened after it, carries verified
 * transfers back to back until the attack ends, and its CIDs are never named by a mutated frame (forging frames of
 * a known connection is SprayAuthenticationTest's attack; here the decoy's frames fail their tags, S12).
 */
final class FrameFuzz
{
    /** What a run found. */
    record Report(long injected, long deterministic, int seeds, String opcodesCaptured, int transfers,
        long bytesVerified, double seconds, long rxFrames, Map<String, Long> parse, Map<String, Long> drops,
        long frameFaults, long loopFaults, Map<String, Long> faults)
    {
        String describe()
        {
            return String.format(Locale.ROOT, "%,d mutated frames (%,d systematic, from %d seeds; captured %s) in %.1f s " +
                "(%,.0f frames/s) while %d verified transfers moved %,d bytes; B received %,d frames; parse %s; " +
                "transport drops %s; frame faults %d, loop faults %d %s", injected, deterministic, seeds, opcodesCaptured,
                seconds, injected / seconds, transfers, bytesVerified, rxFrames, parse, drops, frameFaults, loopFaults, faults);
        }
    }

    /**
     * The transport counters that count a hostile input once each: refused by a check (malformed, unknown connection,
     * no room, a tag, an address, a RESYNC, the MSN window, a NACK, a pre-shared-key proof, another transport's
     * opcode) or, for a CONNECT,
     * answered without state (a RETRY or REJECT) or left unanswered past the response rate (S9.1, S12).
     */
    static final List<String> REFUSALS = List.of("malformed", "unknown_connection", "no_resources", "auth_failures",
        "address_mismatches", "resyncs_refused", "msn_out_of_window", "nacks_unmatched", "handshake_auth_failures",
        "connect_retries_sent", "connect_rejects_sent", "connect_responses_rate_limited", "not_spray");

    private FrameFuzz()
    {
    }

    static long refusals(final Map<String, Long> drops)
    {
        long sum = 0;
        for (final String reason : REFUSALS)
        {
            sum += drops.getOrDefault(reason, 0L);
        }
        return sum;
    }

    static Report run(final Path dir, final long frames, final long transferBytes, final Duration timeout) throws Exception
    {
        try (HostileWire wire = new HostileWire(dir, "fuzz", c -> { }))
        {
            return run(wire, frames, transferBytes, timeout);
        }
    }

    static Report run(final HostileWire wire, final long frames, final long transferBytes, final Duration timeout)
        throws Exception
    {
        return prepare(wire, timeout).round(frames, transferBytes, timeout);
    }

    /** The connections and the mutator of a run; {@link #round} attacks, and may be called again (the soak). */
    record Session(HostileWire wire, HostileWire.Legit legit, FrameMutator mutator, SeedFrames seeds, int seedCount)
    {
        /**
         * Injects {@code frames} more mutated frames while verified transfers run back to back on the legitimate
         * connection, then one more transfer after the last hostile frame.
         */
        Report round(final long frames, final long transferBytes, final Duration timeout) throws Exception
        {
            final Map<String, Long> before = HostileWire.counters(wire.b());
            final long sentBefore = wire.attackFramesSent();
            final long target = mutator.produced() + frames;
            final long start = System.nanoTime();
            wire.attack(new HostileWire.Attacker()
            {
                public boolean hasNext(final int plane)
                {
                    return mutator.produced() < target && mutator.nextPlane() == plane;
                }

                public int next(final int plane, final MemorySegment memory, final long offset, final int room)
                {
                    return mutator.next(memory, offset, room);
                }
            });
            int transfers = 0;
            long verified = 0;
            do
            {
                final long mismatch = HostileWire.verifiedTransfer(legit, wire.a(), wire.b(), transferBytes,
                    1000 + transfers, timeout);
                if (mismatch != -1)
                {
                    throw new AssertionError("legitimate transfer " + transfers + " differs at byte " + mismatch +
                        " after " + wire.attackFramesSent() + " hostile frames (last: " + mutator.lastDescription() + ")");
                }
                transfers++;
                verified += transferBytes;
                if (System.nanoTime() - start > timeout.toNanos() * 4 + frames / 1000 * 1_000_000L)
                {
                    throw new AssertionError("the attack did not finish: " + (wire.attackFramesSent() - sentBefore) +
                        " of " + frames + " sent");
                }
            }
            while (wire.attackFramesSent() - sentBefore < frames);
            wire.attack(null);
            final double seconds = (System.nanoTime() - start) / 1e9;
            // one more transfer after the last hostile frame: the NIC still works
            if (HostileWire.verifiedTransfer(legit, wire.a(), wire.b(), transferBytes, 999, timeout) != -1)
            {
                throw new AssertionError("the transfer after the attack failed verification");
            }
            transfers++;
            verified += transferBytes;
            Thread.sleep(50); // counters are published every millisecond
            final Map<String, Long> after = HostileWire.counters(wire.b());
            final Map<String, Long> parse = new TreeMap<>();
            final Map<String, Long> drops = new TreeMap<>();
            after.forEach((label, value) ->
            {
                final long delta = value - before.getOrDefault(label, 0L);
                if (delta == 0 || !label.startsWith("worker "))
                {
                    return;
                }
                final String what = label.substring(label.indexOf(": ") + 2);
                if (what.startsWith("parse "))
                {
                    parse.merge(what.substring(6), delta, Long::sum);
                }
                else if (what.startsWith("spray "))
                {
                    drops.merge(what.substring(6), delta, Long::sum);
                }
            });
            return new Report(wire.attackFramesSent() - sentBefore, mutator.deterministicCount(), seedCount,
                seeds.capturedOpcodes().toString(), transfers, verified, seconds,
                HostileWire.sum(after, ": rx frames") - HostileWire.sum(before, ": rx frames"), parse, drops,
                HostileWire.sum(after, "frame faults (exception handling a frame, dropped)") -
                HostileWire.sum(before, "frame faults (exception handling a frame, dropped)"),
                HostileWire.sum(after, "loop faults (exception in a command, poller, post or tick)") -
                HostileWire.sum(before, "loop faults (exception in a command, poller, post or tick)"),
                wire.b().faultCounts());
        }
    }

    /** Opens the decoy (recording its frames as seeds) and the legitimate connection. */
    static Session prepare(final HostileWire wire, final Duration timeout) throws Exception
    {
        // the decoy: frames of a live connection, every kind it sends, recorded off the wire
        final HostileWire.Legit decoy = wire.connect(timeout);
        final SeedFrames seeds = new SeedFrames();
        final int decoyCid = decoy.server().localId;
        wire.tap((toB, plane, memory, offset, length) ->
        {
            if (toB)
            {
                seeds.offer(plane, memory, offset, length, decoyCid);
            }
        });
        exerciseBothWays(wire, decoy, timeout);
        final HostileWire.Legit legit = wire.connect(timeout);
        wire.tap(null);
        final List<FrameMutator.Seed> seedList = seeds.seeds(decoyCid);
        final int legitServer = legit.server().localId;
        final int legitClient = legit.client().localId;
        final FrameMutator mutator = new FrameMutator(seedList, 0x5EED_F022L,
            cid -> cid == legitServer || cid == legitClient, decoyCid);
        return new Session(wire, legit, mutator, seeds, seedList.size());
    }

    // WRITEs (the last with immediate data) and READs each way on the decoy: data, ACKs and READ responses to B
    private static void exerciseBothWays(final HostileWire wire, final HostileWire.Legit decoy, final Duration timeout)
    {
        final HostileWire.Legit reverse = new HostileWire.Legit(decoy.server(), decoy.client());
        for (int round = 0; round < 2; round++)
        {
            check(HostileWire.verifiedTransfer(decoy, wire.a(), wire.b(), 256 * 1024, round, timeout));
            check(HostileWire.verifiedTransfer(reverse, wire.b(), wire.a(), 256 * 1024, round + 10, timeout));
        }
        read(decoy.client(), wire.a(), wire.b(), timeout);
        read(decoy.server(), wire.b(), wire.a(), timeout);
    }

    private static void read(final NicConnection reader, final EmbeddedNic local, final EmbeddedNic remote, final Duration timeout)
    {
        try (Arena arena = Arena.ofShared())
        {
            final MemorySegment source = SeededPattern.allocate(arena, 128 * 1024, 42);
            final MemorySegment into = arena.allocate(128 * 1024, 64);
            final MemoryRegion exposed = remote.register(source, AccessFlags.REMOTE_READ);
            final MemoryRegion target = local.register(into, AccessFlags.LOCAL_WRITE);
            BulkTransfer.read(reader, target, exposed.address(), exposed.rkey(), 64 * 1024, timeout);
            check(source.mismatch(into));
            local.deregister(target);
            remote.deregister(exposed);
        }
    }

    private static void check(final long mismatch)
    {
        if (mismatch != -1)
        {
            throw new IllegalStateException("decoy transfer differs at byte " + mismatch);
        }
    }

    /**
     * The soak entry point (off CI): {@code FrameFuzz [frames [transferBytes]]}, default 10^6 frames and 4 MiB
     * per transfer; prints the report.
     */
    public static void main(final String[] args) throws Exception
    {
        final long frames = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000L;
        final long bytes = args.length > 1 ? Long.parseLong(args[1]) : 4L << 20;
        final Path dir = Files.createTempDirectory("spraynic-fuzz");
        final Report report = run(dir, frames, bytes, Duration.ofSeconds(60));
        System.out.println(report.describe());
        final List<String> problems = new ArrayList<>();
        if (report.frameFaults() + report.loopFaults() > 0)
        {
            problems.add("faults " + report.faults());
        }
        System.out.println(problems.isEmpty() ? "OK" : "PROBLEMS: " + problems);
    }
}
